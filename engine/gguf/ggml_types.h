// Tensor element types as ggml defines them: ids, names, block sizes, and the f16 / bf16
// conversions. The quantized block layouts are in gguf/quant_blocks.h, the row codecs
// (dequantizeRow, quantizeRow) in gguf/dequantize.h.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace sinkscope {

enum class GgmlType : uint32_t {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q4_1 = 3,
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8,
    Q8_1 = 9,
    Q2_K = 10,
    Q3_K = 11,
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    Q8_K = 15,
    IQ2_XXS = 16,
    IQ2_XS = 17,
    IQ3_XXS = 18,
    IQ1_S = 19,
    IQ4_NL = 20,
    IQ3_S = 21,
    IQ2_S = 22,
    IQ4_XS = 23,
    I8 = 24,
    I16 = 25,
    I32 = 26,
    I64 = 27,
    F64 = 28,
    IQ1_M = 29,
    BF16 = 30,
    TQ1_0 = 34,
    TQ2_0 = 35,
};

// True for every type id ggml has assigned (the ids 4, 5, 31..33 were retired).
bool ggmlTypeKnown(uint32_t id);
// True for the types whose rows Sinkscope can dequantize and quantize: F32, F16, BF16, Q4_0,
// Q4_1, Q5_0, Q5_1, Q8_0, Q8_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K, IQ4_NL, IQ4_XS.
bool ggmlTypeSupported(GgmlType type);
// "F32", "Q4_K", ...; "type 77" style text for unknown ids.
const char* ggmlTypeName(GgmlType type);
// Values per block and bytes per block (0 for types whose layout Sinkscope does not know).
int64_t ggmlBlockValues(GgmlType type);
int64_t ggmlBlockBytes(GgmlType type);
// Bytes for `count` values, or nullopt when count is not a whole number of blocks,
// the layout is unknown, or the size overflows.
std::optional<uint64_t> ggmlByteSize(GgmlType type, uint64_t count);

// Exact. Inline, with selects rather than branches, because the quantized dots convert two
// scales per block.
inline float fp16ToFp32(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t magnitude = h & 0x7fffu;
    // Normal: the exponent rebiased from 15 to 127. Zero and subnormal: mantissa * 2^-24, a
    // normal f32 (so no subnormal arithmetic, whatever the FPU's denormal mode).
    uint32_t bits = (magnitude << 13) + (112u << 23);
    if (magnitude < 0x400u)
        bits = std::bit_cast<uint32_t>(static_cast<float>(magnitude) * 0x1p-24f);
    if (magnitude >= 0x7c00u) bits = 0x7f800000u | ((magnitude & 0x3ffu) << 13); // inf, NaN payload
    return std::bit_cast<float>(sign | bits);
}
uint16_t fp32ToFp16(float f); // round to nearest even, as ggml's GGML_FP32_TO_FP16

// bf16 is the top half of an f32. To f32 exactly; from f32 rounded to nearest even, NaN kept
// quiet (ggml's GGML_FP32_TO_BF16).
inline float bf16ToFp32(uint16_t h) {
    return std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
}
uint16_t fp32ToBf16(float f);

} // namespace sinkscope
