// AVX2 helpers shared by the intrinsic kernel sources (model/kernels/quant_dot_avx2.cpp,
// model/kernels/quant_gemm_avx2.cpp, model/kernels/quant_gemm_avx512.cpp): block fields, integer
// lane sums of signed bytes, the unpacking of Q4_0 / Q5_0 quants. Include it after
// model/kernels/kernel_isa_begin.h, so that each copy is compiled for its own level; the portable
// level has none. The source includes gguf/quant_blocks.h, model/row_layout.h, <immintrin.h>,
// <cstddef>, <cstdint> and <cstring> before the region opens (their inline code keeps the baseline
// target).
#pragma once

#ifndef SINKSCOPE_ISA_NAMESPACE
#error "include model/kernels/avx2_blocks.h after model/kernels/kernel_isa_begin.h"
#endif

#if SINKSCOPE_KERNEL_ISA >= 1

#include "model/kernels/ggml_lanes.h"

namespace sinkscope::SINKSCOPE_ISA_NAMESPACE::avx2 {

using namespace sinkscope::quant;

inline const uint8_t* bytesOf(const void* p) {
    return static_cast<const uint8_t*>(p);
}
// F16C's conversion: fp16ToFp32's value for every f16 that is not a NaN (tests/gguf).
inline float halfAt(const uint8_t* p) {
    uint16_t bits;
    std::memcpy(&bits, p, sizeof bits);
    return _cvtsh_ss(bits);
}
inline float floatAt(const uint8_t* p) {
    float value;
    std::memcpy(&value, p, sizeof value);
    return value;
}
inline __m256i load32(const uint8_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}
inline float fold(__m256 sums) {
    float lanes[8];
    _mm256_storeu_ps(lanes, sums);
    return ggml::foldLanes8(lanes);
}

// Lane l = the sum of x[i] * y[i] over i = 4l..4l+3, for signed bytes.
inline __m256i signedLanes(__m256i x, __m256i y) {
    const __m256i pairs = _mm256_maddubs_epi16(_mm256_sign_epi8(x, x), _mm256_sign_epi8(y, x));
    return _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
}

// The 32 nibbles of a 32-value block: value j < 16 the low nibble of qs[j], j + 16 the high one.
inline __m256i nibbles(const uint8_t* qs) {
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
    return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(packed, 4), packed),
                            _mm256_set1_epi8(0x0f));
}

// Q5_0's fifth bits: 16 in byte j where bit j of the little-endian qh[4] is set, else 0.
inline __m256i fifthBits(const uint8_t* qh) {
    uint32_t bits;
    std::memcpy(&bits, qh, sizeof bits);
    const __m256i byteOfBit = _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202,
                                                0x0101010101010101, 0x0000000000000000);
    const __m256i spread =
        _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(bits)), byteOfBit);
    const __m256i bit = _mm256_set1_epi64x(0x8040201008040201);
    const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
    return _mm256_and_si256(set, _mm256_set1_epi8(16));
}

inline int sumOfLanes(__m256i lanes) {
    const __m128i four =
        _mm_add_epi32(_mm256_castsi256_si128(lanes), _mm256_extracti128_si256(lanes, 1));
    const __m128i two = _mm_add_epi32(four, _mm_unpackhi_epi64(four, four));
    return _mm_cvtsi128_si32(_mm_add_epi32(two, _mm_shuffle_epi32(two, 1)));
}

constexpr size_t kQ8_0Bytes = sizeof(BlockQ8_0);
constexpr size_t kQ8_0Quants = offsetof(BlockQ8_0, qs);
constexpr size_t kQ8KBytes = sizeof(BlockQ8_K);
constexpr size_t kQ8KQuants = offsetof(BlockQ8_K, qs);
constexpr size_t kQ8KSums = offsetof(BlockQ8_K, bsums);

// The 32 signed quants of a Q8_0 / Q5_0 block.
inline __m256i q8_0Quants(const uint8_t* x) {
    return load32(x + kQ8_0Quants);
}
inline __m256i q5_0Quants(const uint8_t* x) {
    const __m256i q = _mm256_or_si256(nibbles(x + offsetof(BlockQ5_0, qs)),
                                      fifthBits(x + offsetof(BlockQ5_0, qh)));
    return _mm256_sub_epi8(q, _mm256_set1_epi8(16));
}

// The 32 unsigned 6-bit quants of Q6_K values 32 quarter .. 32 quarter + 31 (quarter in [0, 8);
// quarter = 4 half + k: the low four bits from ql, the top two from qh).
inline __m256i q6_KQuants(const uint8_t* ql, const uint8_t* qh, int quarter) {
    const int half = quarter / 4;
    const int k = quarter % 4;
    __m256i low = load32(ql + 64 * half + 32 * (k & 1));
    if (k >= 2) low = _mm256_srli_epi16(low, 4);
    const __m256i high =
        _mm256_and_si256(_mm256_srli_epi16(load32(qh + 32 * half), 2 * k), _mm256_set1_epi8(3));
    return _mm256_or_si256(_mm256_and_si256(low, _mm256_set1_epi8(0x0f)),
                           _mm256_slli_epi16(high, 4));
}

// Where a matrix-matrix product's tiles read (KernelTable::quantGemm): the weight rows and the
// tokens' activation rows.
struct GemmArgs {
    const uint8_t* rows;
    size_t rowBytes;
    int64_t blocks;
    const uint8_t* activations;
    size_t activationBytes;
    float* out;
    size_t outStride;

    bool q4_0x8 = false; // Q4_0 rows in RowLayout::Q4_0x8 (model/row_layout.h)

    const uint8_t* row(int64_t r) const { return rows + static_cast<size_t>(r) * rowBytes; }
    // Q4_0 rows in either layout: block b of row r is at q4_0Row(r) + b * q4_0BlockStride().
    const uint8_t* q4_0Row(int64_t r) const {
        return q4_0x8 ? rows + q4_0x8Offset(blocks, r, 0) : row(r);
    }
    size_t q4_0BlockStride() const { return (q4_0x8 ? kQ4_0x8Rows : 1) * sizeof(BlockQ4_0); }
    const uint8_t* tokenRow(int t) const { return activations + t * activationBytes; }
};

// The arguments of a product over Q4_0 rows in RowLayout::Q4_0x8.
inline GemmArgs q4_0x8Args(const uint8_t* rows, int64_t blocks, const uint8_t* activations,
                           size_t activationBytes, float* out, size_t outStride) {
    GemmArgs g{rows,
               static_cast<size_t>(blocks) * sizeof(BlockQ4_0),
               blocks,
               activations,
               activationBytes,
               out,
               outStride};
    g.q4_0x8 = true;
    return g;
}

} // namespace sinkscope::SINKSCOPE_ISA_NAMESPACE::avx2

#endif
