// Per-type row codecs behind dequantizeRow / quantizeRow (gguf/dequantize.cpp dispatches to
// them after checking the type and the row length). Each takes a whole number of blocks:
// `blocks` blocks of the type's layout (gguf/quant_blocks.h) at `src` or `dst`, unaligned.
#pragma once

#include <bit>
#include <cstdint>

namespace sinkscope::quant {

// 32-value types (gguf/legacy_quants.cpp).
void dequantizeQ4_0(const void* src, float* dst, int64_t blocks);
void dequantizeQ4_1(const void* src, float* dst, int64_t blocks);
void dequantizeQ5_0(const void* src, float* dst, int64_t blocks);
void dequantizeQ5_1(const void* src, float* dst, int64_t blocks);
void dequantizeQ8_0(const void* src, float* dst, int64_t blocks);
void dequantizeQ8_1(const void* src, float* dst, int64_t blocks);
void quantizeQ4_0(const float* src, void* dst, int64_t blocks);
void quantizeQ4_1(const float* src, void* dst, int64_t blocks);
void quantizeQ5_0(const float* src, void* dst, int64_t blocks);
void quantizeQ5_1(const float* src, void* dst, int64_t blocks);
void quantizeQ8_0(const float* src, void* dst, int64_t blocks);
void quantizeQ8_1(const float* src, void* dst, int64_t blocks);

// K-quants, Q8_K and the non-linear IQ4 types (gguf/kquant_dequantize.cpp).
void dequantizeQ2_K(const void* src, float* dst, int64_t blocks);
void dequantizeQ3_K(const void* src, float* dst, int64_t blocks);
void dequantizeQ4_K(const void* src, float* dst, int64_t blocks);
void dequantizeQ5_K(const void* src, float* dst, int64_t blocks);
void dequantizeQ6_K(const void* src, float* dst, int64_t blocks);
void dequantizeQ8_K(const void* src, float* dst, int64_t blocks);
void dequantizeIQ4_NL(const void* src, float* dst, int64_t blocks);
void dequantizeIQ4_XS(const void* src, float* dst, int64_t blocks);

// Their reference quantizers (gguf/kquant_quantize.cpp, gguf/iq4_quantize.cpp).
void quantizeQ2_K(const float* src, void* dst, int64_t blocks);
void quantizeQ3_K(const float* src, void* dst, int64_t blocks);
void quantizeQ4_K(const float* src, void* dst, int64_t blocks);
void quantizeQ5_K(const float* src, void* dst, int64_t blocks);
void quantizeQ6_K(const float* src, void* dst, int64_t blocks);
void quantizeQ8_K(const float* src, void* dst, int64_t blocks);
void quantizeIQ4_NL(const float* src, void* dst, int64_t blocks);
void quantizeIQ4_XS(const float* src, void* dst, int64_t blocks);

// ggml's nearest_int: round to nearest, ties to even, for |value| <= 2^22 (larger values and
// NaN give some int without undefined behaviour; callers clamp the result).
inline int nearestInt(float value) {
    // Adding 1.5 * 2^23 leaves the rounded integer in the low mantissa bits.
    const auto bits = std::bit_cast<uint32_t>(value + 12582912.0f);
    return static_cast<int>(bits & 0x007fffffu) - 0x00400000;
}

} // namespace sinkscope::quant
