// Tensor element types as ggml defines them, and their (de)quantization.
//
// Block layouts (little-endian, exactly ggml's):
//   F32   1 value  per 4 bytes
//   F16   1 value  per 2 bytes (IEEE half)
//   Q8_0  32 values per 34 bytes: f16 scale d, int8 q[32];          x = d * q
//   Q4_0  32 values per 18 bytes: f16 scale d, uint8 nibbles[16];   x = d * (nibble - 8)
//         value j < 16 is the low nibble of byte j, value j + 16 its high nibble.
#pragma once

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
// True for the types Sinkscope can compute with: F32, F16, Q8_0, Q4_0.
bool ggmlTypeSupported(GgmlType type);
// "F32", "Q4_K", ...; "type 77" style text for unknown ids.
const char* ggmlTypeName(GgmlType type);
// Values per block and bytes per block (0 for types whose layout Sinkscope does not know).
int64_t ggmlBlockValues(GgmlType type);
int64_t ggmlBlockBytes(GgmlType type);
// Bytes for `count` values, or nullopt when count is not a whole number of blocks,
// the layout is unknown, or the size overflows.
std::optional<uint64_t> ggmlByteSize(GgmlType type, uint64_t count);

float fp16ToFp32(uint16_t h);
uint16_t fp32ToFp16(float f); // round to nearest even, as ggml's GGML_FP32_TO_FP16

// dst[n] = values of src; n must be a multiple of the block size; type must be supported.
void dequantizeRow(GgmlType type, const void* src, float* dst, int64_t n);
// Inverse, with ggml's reference quantizers (quantize_row_q8_0_ref, quantize_row_q4_0_ref).
void quantizeRow(GgmlType type, const float* src, void* dst, int64_t n);

} // namespace sinkscope
