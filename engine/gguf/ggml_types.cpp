#include "gguf/ggml_types.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

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

constexpr int kQ8Values = 32;
constexpr int kQ4Values = 32;
constexpr size_t kQ8BlockBytes = 34;
constexpr size_t kQ4BlockBytes = 18;

// The f16 scale that starts every Q8_0 / Q4_0 block (little-endian, possibly unaligned).
float readBlockScale(const uint8_t* block) {
    const uint16_t bits = static_cast<uint16_t>(block[0] | (block[1] << 8));
    return fp16ToFp32(bits);
}

void writeBlockScale(uint8_t* block, float scale) {
    const uint16_t bits = fp32ToFp16(scale);
    block[0] = static_cast<uint8_t>(bits & 0xff);
    block[1] = static_cast<uint8_t>(bits >> 8);
}

// Rounds `value >> shift` to nearest, ties to even (shift >= 1).
uint32_t shiftRoundNearestEven(uint32_t value, int shift) {
    const uint32_t kept = value >> shift;
    const uint32_t remainder = value & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (remainder > half || (remainder == half && (kept & 1u))) return kept + 1;
    return kept;
}

void dequantizeQ8_0(const uint8_t* src, float* dst, int64_t n) {
    for (int64_t block = 0; block < n / kQ8Values; ++block) {
        const uint8_t* in = src + block * kQ8BlockBytes; // [2 scale][32 int8]
        const float scale = readBlockScale(in);
        for (int j = 0; j < kQ8Values; ++j)
            dst[block * kQ8Values + j] = scale * static_cast<float>(static_cast<int8_t>(in[2 + j]));
    }
}

void dequantizeQ4_0(const uint8_t* src, float* dst, int64_t n) {
    constexpr int half = kQ4Values / 2;
    for (int64_t block = 0; block < n / kQ4Values; ++block) {
        const uint8_t* in = src + block * kQ4BlockBytes; // [2 scale][16 nibble pairs]
        const float scale = readBlockScale(in);
        float* out = dst + block * kQ4Values;
        for (int j = 0; j < half; ++j) {
            out[j] = scale * static_cast<float>((in[2 + j] & 0x0f) - 8);
            out[j + half] = scale * static_cast<float>((in[2 + j] >> 4) - 8);
        }
    }
}

// ggml's quantize_row_q8_0_ref: d = absmax / 127, q = round(x / d).
void quantizeQ8_0(const float* src, uint8_t* dst, int64_t n) {
    for (int64_t block = 0; block < n / kQ8Values; ++block) {
        const float* in = src + block * kQ8Values;
        uint8_t* out = dst + block * kQ8BlockBytes;
        float absMax = 0.0f;
        for (int j = 0; j < kQ8Values; ++j)
            absMax = std::max(absMax, std::fabs(in[j]));
        const float scale = absMax / 127.0f;
        const float inverse = scale != 0.0f ? 1.0f / scale : 0.0f;
        writeBlockScale(out, scale);
        for (int j = 0; j < kQ8Values; ++j) {
            // |x * inverse| <= 127 for finite input; the clamp only tames NaN/inf rows.
            const float scaled = std::round(in[j] * inverse);
            const float clamped = std::isnan(scaled) ? 0.0f : std::clamp(scaled, -127.0f, 127.0f);
            out[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(clamped));
        }
    }
}

// Nibble for one Q4_0 value: ggml's min(15, (int8)(x * id + 8.5)), with NaN mapped to 0
// instead of undefined behaviour.
uint8_t q4Nibble(float value, float inverse) {
    const float shifted = value * inverse + 8.5f;
    if (!(shifted >= 0.0f)) return 0;
    if (shifted >= 15.0f) return 15;
    return static_cast<uint8_t>(static_cast<int>(shifted));
}

// ggml's quantize_row_q4_0_ref: `max` is the value with the largest magnitude (sign kept,
// first one wins on ties), d = max / -8, so that value maps to nibble 0.
void quantizeQ4_0(const float* src, uint8_t* dst, int64_t n) {
    constexpr int half = kQ4Values / 2;
    for (int64_t block = 0; block < n / kQ4Values; ++block) {
        const float* in = src + block * kQ4Values;
        uint8_t* out = dst + block * kQ4BlockBytes;
        float absMax = 0.0f;
        float signedMax = 0.0f;
        for (int j = 0; j < kQ4Values; ++j) {
            if (absMax < std::fabs(in[j])) {
                absMax = std::fabs(in[j]);
                signedMax = in[j];
            }
        }
        const float scale = signedMax / -8.0f;
        const float inverse = scale != 0.0f ? 1.0f / scale : 0.0f;
        writeBlockScale(out, scale);
        for (int j = 0; j < half; ++j) {
            const uint8_t low = q4Nibble(in[j], inverse);
            const uint8_t high = q4Nibble(in[j + half], inverse);
            out[2 + j] = static_cast<uint8_t>(low | (high << 4));
        }
    }
}

void requireSupportedRow(GgmlType type, int64_t n) {
    if (!ggmlTypeSupported(type))
        throw std::invalid_argument(std::string("no row conversion for tensor type ") +
                                    ggmlTypeName(type));
    if (n < 0 || n % ggmlBlockValues(type) != 0)
        throw std::invalid_argument(std::string("row length ") + std::to_string(n) +
                                    " is not a multiple of the " + ggmlTypeName(type) +
                                    " block size");
}

} // namespace

bool ggmlTypeKnown(uint32_t id) {
    return findLayout(static_cast<GgmlType>(id)) != nullptr;
}

bool ggmlTypeSupported(GgmlType type) {
    return type == GgmlType::F32 || type == GgmlType::F16 || type == GgmlType::Q8_0 ||
           type == GgmlType::Q4_0;
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

float fp16ToFp32(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exponent = (h >> 10) & 0x1fu;
    const uint32_t mantissa = h & 0x3ffu;
    if (exponent == 0x1f) // inf keeps mantissa 0; NaN keeps its payload
        return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
    if (exponent == 0) { // zero or subnormal: mantissa * 2^-24, exact in f32
        const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
        return std::bit_cast<float>(sign | std::bit_cast<uint32_t>(magnitude));
    }
    // Rebias the exponent from 15 to 127.
    return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
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

void dequantizeRow(GgmlType type, const void* src, float* dst, int64_t n) {
    requireSupportedRow(type, n);
    const auto* bytes = static_cast<const uint8_t*>(src);
    switch (type) {
    case GgmlType::F32:
        std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
        break;
    case GgmlType::F16:
        for (int64_t i = 0; i < n; ++i)
            dst[i] = fp16ToFp32(static_cast<uint16_t>(bytes[2 * i] | (bytes[2 * i + 1] << 8)));
        break;
    case GgmlType::Q8_0:
        dequantizeQ8_0(bytes, dst, n);
        break;
    case GgmlType::Q4_0:
        dequantizeQ4_0(bytes, dst, n);
        break;
    default:
        break;
    }
}

void quantizeRow(GgmlType type, const float* src, void* dst, int64_t n) {
    requireSupportedRow(type, n);
    auto* bytes = static_cast<uint8_t*>(dst);
    switch (type) {
    case GgmlType::F32:
        std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
        break;
    case GgmlType::F16:
        for (int64_t i = 0; i < n; ++i) {
            const uint16_t half = fp32ToFp16(src[i]);
            bytes[2 * i] = static_cast<uint8_t>(half & 0xff);
            bytes[2 * i + 1] = static_cast<uint8_t>(half >> 8);
        }
        break;
    case GgmlType::Q8_0:
        quantizeQ8_0(src, bytes, n);
        break;
    case GgmlType::Q4_0:
        quantizeQ4_0(src, bytes, n);
        break;
    default:
        break;
    }
}

} // namespace sinkscope
