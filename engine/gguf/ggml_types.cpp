#include "gguf/ggml_types.h"

#include <bit>
#include <cstdio>

namespace sinkscope {

namespace {

struct TypeLayout {
    GgmlType type;
    const char* name;
    int64_t blockValues;
    int64_t blockBytes;
};

// Block layouts of every type ggml has assigned (ggml's type_traits: blck_size, type_size).
constexpr TypeLayout kLayouts[] = {
    {GgmlType::F32, "F32", 1, 4},
    {GgmlType::F16, "F16", 1, 2},
    {GgmlType::Q4_0, "Q4_0", 32, 18},
    {GgmlType::Q4_1, "Q4_1", 32, 20},
    {GgmlType::Q5_0, "Q5_0", 32, 22},
    {GgmlType::Q5_1, "Q5_1", 32, 24},
    {GgmlType::Q8_0, "Q8_0", 32, 34},
    {GgmlType::Q8_1, "Q8_1", 32, 36},
    {GgmlType::Q2_K, "Q2_K", 256, 84},
    {GgmlType::Q3_K, "Q3_K", 256, 110},
    {GgmlType::Q4_K, "Q4_K", 256, 144},
    {GgmlType::Q5_K, "Q5_K", 256, 176},
    {GgmlType::Q6_K, "Q6_K", 256, 210},
    {GgmlType::Q8_K, "Q8_K", 256, 292},
    {GgmlType::IQ2_XXS, "IQ2_XXS", 256, 66},
    {GgmlType::IQ2_XS, "IQ2_XS", 256, 74},
    {GgmlType::IQ3_XXS, "IQ3_XXS", 256, 98},
    {GgmlType::IQ1_S, "IQ1_S", 256, 50},
    {GgmlType::IQ4_NL, "IQ4_NL", 32, 18},
    {GgmlType::IQ3_S, "IQ3_S", 256, 110},
    {GgmlType::IQ2_S, "IQ2_S", 256, 82},
    {GgmlType::IQ4_XS, "IQ4_XS", 256, 136},
    {GgmlType::I8, "I8", 1, 1},
    {GgmlType::I16, "I16", 1, 2},
    {GgmlType::I32, "I32", 1, 4},
    {GgmlType::I64, "I64", 1, 8},
    {GgmlType::F64, "F64", 1, 8},
    {GgmlType::IQ1_M, "IQ1_M", 256, 56},
    {GgmlType::BF16, "BF16", 1, 2},
    {GgmlType::TQ1_0, "TQ1_0", 256, 54},
    {GgmlType::TQ2_0, "TQ2_0", 256, 66},
};

const TypeLayout* findLayout(GgmlType type) {
    for (const TypeLayout& layout : kLayouts)
        if (layout.type == type) return &layout;
    return nullptr;
}

// Rounds `value >> shift` to nearest, ties to even (shift >= 1).
uint32_t shiftRoundNearestEven(uint32_t value, int shift) {
    const uint32_t kept = value >> shift;
    const uint32_t remainder = value & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (remainder > half || (remainder == half && (kept & 1u))) return kept + 1;
    return kept;
}

} // namespace

bool ggmlTypeKnown(uint32_t id) {
    return findLayout(static_cast<GgmlType>(id)) != nullptr;
}

bool ggmlTypeSupported(GgmlType type) {
    switch (type) {
    case GgmlType::F32:
    case GgmlType::F16:
    case GgmlType::BF16:
    case GgmlType::Q4_0:
    case GgmlType::Q4_1:
    case GgmlType::Q5_0:
    case GgmlType::Q5_1:
    case GgmlType::Q8_0:
    case GgmlType::Q8_1:
    case GgmlType::Q2_K:
    case GgmlType::Q3_K:
    case GgmlType::Q4_K:
    case GgmlType::Q5_K:
    case GgmlType::Q6_K:
    case GgmlType::Q8_K:
    case GgmlType::IQ4_NL:
    case GgmlType::IQ4_XS:
        return true;
    default:
        return false;
    }
}

const char* ggmlTypeName(GgmlType type) {
    if (const TypeLayout* layout = findLayout(type)) return layout->name;
    thread_local char unknownName[24];
    std::snprintf(unknownName, sizeof unknownName, "type %u", static_cast<unsigned>(type));
    return unknownName;
}

int64_t ggmlBlockValues(GgmlType type) {
    const TypeLayout* layout = findLayout(type);
    return layout ? layout->blockValues : 0;
}

int64_t ggmlBlockBytes(GgmlType type) {
    const TypeLayout* layout = findLayout(type);
    return layout ? layout->blockBytes : 0;
}

std::optional<uint64_t> ggmlByteSize(GgmlType type, uint64_t count) {
    const TypeLayout* layout = findLayout(type);
    if (!layout) return std::nullopt;
    const auto blockValues = static_cast<uint64_t>(layout->blockValues);
    const auto blockBytes = static_cast<uint64_t>(layout->blockBytes);
    if (count % blockValues != 0) return std::nullopt;
    const uint64_t blocks = count / blockValues;
    if (blocks > UINT64_MAX / blockBytes) return std::nullopt;
    return blocks * blockBytes;
}

uint16_t fp32ToFp16(float f) {
    const uint32_t bits = std::bit_cast<uint32_t>(f);
    const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
    const uint32_t exponent = (bits >> 23) & 0xffu;
    const uint32_t mantissa = bits & 0x7fffffu;
    if (exponent == 0xff) { // inf stays inf; NaN stays a quiet NaN with its top payload bits
        if (mantissa == 0) return sign | 0x7c00u;
        return static_cast<uint16_t>(sign | 0x7e00u | (mantissa >> 13));
    }
    const int unbiased = static_cast<int>(exponent) - 127;
    if (unbiased > 15) return sign | 0x7c00u;
    if (unbiased >= -14) {
        // Normal half: 5-bit exponent and 10-bit mantissa; a rounding carry runs into the
        // exponent, up to inf for values >= 65520.
        const uint32_t combined = (static_cast<uint32_t>(unbiased + 15) << 23) | mantissa;
        return static_cast<uint16_t>(sign | shiftRoundNearestEven(combined, 13));
    }
    if (unbiased < -25) return sign; // below half the smallest subnormal: rounds to zero
    // Subnormal half: units of 2^-24; the value is (mantissa | implicit 1) * 2^(unbiased - 23).
    const uint32_t significand = mantissa | 0x800000u;
    const int shift = -unbiased - 1; // 14..24
    return static_cast<uint16_t>(sign | shiftRoundNearestEven(significand, shift));
}

uint16_t fp32ToBf16(float f) {
    const uint32_t bits = std::bit_cast<uint32_t>(f);
    if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN: keep the top payload bits, force it quiet
        return static_cast<uint16_t>((bits >> 16) | 0x40u);
    // Adding 0x7fff plus the lowest kept bit rounds to nearest, ties to even; a carry out of the
    // mantissa moves to the next binade (up to inf), as the hardware conversion does.
    return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

} // namespace sinkscope
