// A kernel source (model/kernels/kernel_isa_begin.h): the dots of the weight types that common
// files are made of (Q8_0, Q4_0; Q4_K and Q6_K, with Q5_0 where Q4_K_M falls back) written with
// AVX2 intrinsics, for the AVX2 and AVX-512 levels (the regrouped Q4_0 rows take AVX-512
// intrinsics at its levels); the portable build of this file is empty.
//
// Each computes exactly the integers and float steps of its kernel in
// model/kernels/quant_dot_fast.cpp (tests compare every level with the portable one bit for bit),
// with ggml's AVX2 instructions: _mm256_maddubs_epi16 multiplies unsigned by signed bytes and adds
// neighbours (signed weights go through _mm256_sign_epi8 first), _mm256_madd_epi16 then adds
// neighbouring pairs, by 1 or by the sub-block's scale, which leaves lane l = the products of
// values 4l..4l+3. No sum saturates: |activation| <= 127 (model/quant_dot.cpp quantizes a finite
// value into [-127, 127]). A NaN activation quantizes to -128, which _mm256_sign_epi8 cannot
// negate: against a -128 weight the product's sign then differs from the portable kernel's, as
// ggml's AVX2 kernel differs from its C one; logits from NaN activations mean nothing either way.
#include "gguf/ggml_types.h"
#include "gguf/quant_blocks.h"
#include "model/kernels/cpu_isa.h"
#include "model/kernels/kernel_table.h"
#include "model/kernels/prefetch.h"
#include "model/row_layout.h"

#include <immintrin.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "model/kernels/kernel_isa_begin.h"

// After the region opens: compiled for its level.
#include "model/kernels/avx2_blocks.h"
#include "model/kernels/ggml_lanes.h"

namespace sinkscope::SINKSCOPE_ISA_NAMESPACE {

#if SINKSCOPE_KERNEL_ISA >= 1

namespace {

using namespace sinkscope::quant;
using namespace avx2;

using RowsKernel = void (*)(GgmlType type, const uint8_t* rows, size_t rowBytes, int64_t blocks,
                            const void* activations, float* out, int64_t rowBegin, int64_t rowEnd);

// The level's generic kernels, for the types without one here (set once, when the table is
// built).
DotKernel (*g_genericDot)(GgmlType) = nullptr;
RowsKernel g_genericRows = nullptr;

// Q8_0 / Q5_0 against Q8_0: eight float lanes, d_w * d_a times each block's integer lanes added
// with a fused multiply-add.
template <size_t BlockBytes, typename Quants>
float q8_0Dot(const void* w, const void* a, int64_t blocks, Quants quants) {
    __m256 sums = _mm256_setzero_ps();
    for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* x = bytesOf(w) + b * BlockBytes;
        const uint8_t* y = bytesOf(a) + b * kQ8_0Bytes;
        const __m256i lanes = signedLanes(quants(x), load32(y + kQ8_0Quants));
        sums =
            _mm256_fmadd_ps(_mm256_set1_ps(halfAt(x) * halfAt(y)), _mm256_cvtepi32_ps(lanes), sums);
    }
    return fold(sums);
}

float dotQ8_0(const void* w, const void* a, int64_t blocks) {
    return q8_0Dot<kQ8_0Bytes>(w, a, blocks, q8_0Quants);
}

float dotQ5_0(const void* w, const void* a, int64_t blocks) {
    return q8_0Dot<sizeof(BlockQ5_0)>(w, a, blocks, q5_0Quants);
}

// Q4_0's integer block sum, sum((q - 8) * y), of weight block x and activation block y.
int q4_0BlockSum(const uint8_t* x, const uint8_t* y) {
    const __m256i q = _mm256_sub_epi8(nibbles(x + offsetof(BlockQ4_0, qs)), _mm256_set1_epi8(8));
    return sumOfLanes(signedLanes(q, load32(y + kQ8_0Quants)));
}

// Q4_0 as llama.cpp's repacked kernels sum it: one float, each block's whole integer dot times
// d_w * d_a added with a fused multiply-add.
float dotQ4_0(const void* w, const void* a, int64_t blocks) {
    float sum = 0.0f;
    for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* x = bytesOf(w) + b * sizeof(BlockQ4_0);
        const uint8_t* y = bytesOf(a) + b * kQ8_0Bytes;
        sum = std::fma(static_cast<float>(q4_0BlockSum(x, y)), halfAt(x) * halfAt(y), sum);
    }
    return sum;
}

// Q4_K: each 32-value sub-block's unsigned nibbles times the activations, scaled by its 6-bit
// scale into the integer lanes; the mins' pair sums into four float lanes of their own.
float dotQ4_K(const void* w, const void* a, int64_t blocks) {
    const __m256i lowNibbles = _mm256_set1_epi8(0x0f);
    __m256 sums = _mm256_setzero_ps();
    float minLanes[4] = {};
    for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* x = bytesOf(w) + b * sizeof(BlockQ4_K);
        const uint8_t* y = bytesOf(a) + b * kQ8KBytes;
        const uint8_t* scales = x + offsetof(BlockQ4_K, scales);
        const uint8_t* qs = x + offsetof(BlockQ4_K, qs);
        int16_t bsums[16];
        std::memcpy(bsums, y + kQ8KSums, sizeof bsums);
        int minPairs[4] = {};
        __m256i lanes = _mm256_setzero_si256();
        for (int sub = 0; sub < 8; ++sub) {
            const ScaleMin packed = kQuantScaleMin(scales, sub);
            minPairs[sub / 2] += (bsums[2 * sub] + bsums[2 * sub + 1]) * packed.min;
            __m256i q = load32(qs + 32 * (sub / 2));
            if (sub % 2) q = _mm256_srli_epi16(q, 4);
            const __m256i pairs = _mm256_maddubs_epi16(_mm256_and_si256(q, lowNibbles),
                                                       load32(y + kQ8KQuants + 32 * sub));
            lanes = _mm256_add_epi32(
                lanes,
                _mm256_madd_epi16(pairs, _mm256_set1_epi16(static_cast<short>(packed.scale))));
        }
        sums = _mm256_fmadd_ps(_mm256_set1_ps(floatAt(y) * halfAt(x)), _mm256_cvtepi32_ps(lanes),
                               sums);
        const float dmin = -floatAt(y) * halfAt(x + offsetof(BlockQ4_K, dmin));
        for (int k = 0; k < 4; ++k)
            minLanes[k] = std::fma(dmin, static_cast<float>(minPairs[k]), minLanes[k]);
    }
    return fold(sums) + ((minLanes[0] + minLanes[2]) + (minLanes[1] + minLanes[3]));
}

// Q6_K: q - 32 times the activations as (q * y) - (32 * y) on unsigned q, each 16 values scaled
// by their own int8 scale.
float dotQ6_K(const void* w, const void* a, int64_t blocks) {
    const __m256i offset = _mm256_set1_epi8(32);
    __m256 sums = _mm256_setzero_ps();
    for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* x = bytesOf(w) + b * sizeof(BlockQ6_K);
        const uint8_t* y = bytesOf(a) + b * kQ8KBytes;
        const uint8_t* ql = x + offsetof(BlockQ6_K, ql);
        const uint8_t* qh = x + offsetof(BlockQ6_K, qh);
        const auto* scales = reinterpret_cast<const int8_t*>(x + offsetof(BlockQ6_K, scales));
        __m256i lanes = _mm256_setzero_si256();
        for (int quarter = 0; quarter < 8; ++quarter) {
            const __m256i q = q6_KQuants(ql, qh, quarter);
            const __m256i activations = load32(y + kQ8KQuants + 32 * quarter);
            const __m256i pairs = _mm256_sub_epi16(_mm256_maddubs_epi16(q, activations),
                                                   _mm256_maddubs_epi16(offset, activations));
            const __m256i scale = _mm256_set_m128i(_mm_set1_epi16(scales[2 * quarter + 1]),
                                                   _mm_set1_epi16(scales[2 * quarter]));
            lanes = _mm256_add_epi32(lanes, _mm256_madd_epi16(pairs, scale));
        }
        sums = _mm256_fmadd_ps(_mm256_set1_ps(floatAt(y) * halfAt(x + offsetof(BlockQ6_K, d))),
                               _mm256_cvtepi32_ps(lanes), sums);
    }
    return fold(sums);
}

// Four rows at once against the same Q8_0 activations, whose scales are converted once
// (activationScales[blocks]): each row's arithmetic is its single-row kernel's, step for step,
// and the four rows' independent chains keep the multiply-add units busy. Each row's stream is
// prefetched ahead (model/kernels/prefetch.h). Used with RowStreams::Grouped (cpu_isa.h).
constexpr int kRowGroup = 4;
constexpr int64_t kMaxGroupedBlocks = 1024; // rows up to 32,768 values take the grouped path

// Q8_0 / Q5_0: each row's eight float lanes, as q8_0Dot.
template <size_t BlockBytes, typename Quants>
void q8_0RowGroup(const uint8_t* rows, size_t rowBytes, int64_t blocks, const uint8_t* a,
                  const float* activationScales, float* out, Quants quants) {
    __m256 sums[kRowGroup] = {};
    for (int64_t b = 0; b < blocks; ++b) {
        const __m256i y = load32(a + b * kQ8_0Bytes + kQ8_0Quants);
        for (int k = 0; k < kRowGroup; ++k) {
            const uint8_t* x = rows + k * rowBytes + b * BlockBytes;
            prefetchAhead(x);
            const __m256i lanes = signedLanes(quants(x), y);
            sums[k] = _mm256_fmadd_ps(_mm256_set1_ps(halfAt(x) * activationScales[b]),
                                      _mm256_cvtepi32_ps(lanes), sums[k]);
        }
    }
    for (int k = 0; k < kRowGroup; ++k)
        out[k] = fold(sums[k]);
}

// Q4_0 block x's unsigned nibbles times activation quants y: eight 32-bit lanes of sums of four
// (with VNNI in one instruction; the 16-bit pair sums in between cannot saturate: 2 * 15 * 128).
__m256i q4_0Lanes(const uint8_t* x, __m256i y) {
#if SINKSCOPE_KERNEL_ISA >= 3
    return _mm256_dpbusd_epi32(_mm256_setzero_si256(), nibbles(x + offsetof(BlockQ4_0, qs)), y);
#else
    return _mm256_madd_epi16(_mm256_maddubs_epi16(nibbles(x + offsetof(BlockQ4_0, qs)), y),
                             _mm256_set1_epi16(1));
#endif
}

// The totals of four registers of eight lanes, in order: one transposing reduction.
__m128i totalsOfFour(const __m256i lanes[kRowGroup]) {
    const __m256i pairs01 = _mm256_hadd_epi32(lanes[0], lanes[1]);
    const __m256i pairs23 = _mm256_hadd_epi32(lanes[2], lanes[3]);
    const __m256i quads = _mm256_hadd_epi32(pairs01, pairs23);
    return _mm_add_epi32(_mm256_castsi256_si128(quads), _mm256_extracti128_si256(quads, 1));
}

// Four f16 block scales as floats.
__m128 floatsOfHalves(const uint16_t halves[kRowGroup]) {
    return _mm_cvtph_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(halves)));
}

// Q4_0: each row's one float, as dotQ4_0. The integer block sum is taken as
// sum(q * y) - 8 sum(y) with the unsigned nibbles q (the same integer as sum((q - 8) * y)), sum(y)
// once per block for all four rows; the four rows' sums come out of one transposing reduction and
// take one four-wide multiply-add, their four scales one conversion.
void q4_0RowGroup(const uint8_t* rows, size_t rowBytes, int64_t blocks, const uint8_t* a,
                  const float* activationScales, const int* activationSums, float* out) {
    __m128 sums = _mm_setzero_ps();
    for (int64_t b = 0; b < blocks; ++b) {
        const __m256i y = load32(a + b * kQ8_0Bytes + kQ8_0Quants);
        __m256i lanes[kRowGroup];
        uint16_t halves[kRowGroup];
        for (int k = 0; k < kRowGroup; ++k) {
            const uint8_t* x = rows + k * rowBytes + b * sizeof(BlockQ4_0);
            prefetchAhead(x);
            lanes[k] = q4_0Lanes(x, y);
            std::memcpy(&halves[k], x, sizeof halves[k]);
        }
        const __m128i isums =
            _mm_sub_epi32(totalsOfFour(lanes), _mm_set1_epi32(8 * activationSums[b]));
        const __m128 scales = _mm_mul_ps(floatsOfHalves(halves), _mm_set1_ps(activationScales[b]));
        sums = _mm_fmadd_ps(_mm_cvtepi32_ps(isums), scales, sums);
    }
    _mm_storeu_ps(out, sums);
}

// The per-block values all rows share: the activations' scales as floats, and the sums of
// their quants (for Q4_0's offset).
struct ActivationBlocks {
    float scales[kMaxGroupedBlocks];
    int sums[kMaxGroupedBlocks];
    ActivationBlocks(const uint8_t* a, int64_t blocks, bool withSums) {
        for (int64_t b = 0; b < blocks; ++b) {
            const uint8_t* block = a + b * kQ8_0Bytes;
            scales[b] = halfAt(block);
            if (!withSums) continue;
            const __m256i quants = load32(block + kQ8_0Quants);
            sums[b] = sumOfLanes(_mm256_madd_epi16(
                _mm256_maddubs_epi16(_mm256_set1_epi8(1), quants), _mm256_set1_epi16(1)));
        }
    }
};

// Q4_0, one row (RowStreams::Single): dotQ4_0's sums, with the integer work of four blocks done
// as q4_0RowGroup does it for four rows (one transposing reduction, one scale conversion), then
// the four multiply-adds in block order, so the row stays one stream and the bits dotQ4_0's.
float q4_0Row(const uint8_t* row, int64_t blocks, const uint8_t* a, const float* activationScales,
              const int* activationSums) {
    float sum = 0.0f;
    int64_t b = 0;
    for (; b + kRowGroup <= blocks; b += kRowGroup) {
        __m256i lanes[kRowGroup];
        uint16_t halves[kRowGroup];
        for (int k = 0; k < kRowGroup; ++k) {
            const uint8_t* x = row + (b + k) * sizeof(BlockQ4_0);
            lanes[k] = q4_0Lanes(x, load32(a + (b + k) * kQ8_0Bytes + kQ8_0Quants));
            std::memcpy(&halves[k], x, sizeof halves[k]);
        }
        const __m128i offsets = _mm_slli_epi32(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(activationSums + b)), 3);
        alignas(16) float values[kRowGroup];
        alignas(16) float scales[kRowGroup];
        _mm_store_ps(values, _mm_cvtepi32_ps(_mm_sub_epi32(totalsOfFour(lanes), offsets)));
        _mm_store_ps(scales,
                     _mm_mul_ps(floatsOfHalves(halves), _mm_loadu_ps(activationScales + b)));
        for (int k = 0; k < kRowGroup; ++k)
            sum = std::fma(values[k], scales[k], sum);
    }
    for (; b < blocks; ++b) {
        const uint8_t* x = row + b * sizeof(BlockQ4_0);
        sum = std::fma(static_cast<float>(q4_0BlockSum(x, a + b * kQ8_0Bytes)),
                       halfAt(x) * activationScales[b], sum);
    }
    return sum;
}

#if SINKSCOPE_KERNEL_ISA == 1
// The totals of eight registers of eight lanes, in order: one transposing reduction.
__m256i totalsOfEight(const __m256i lanes[kQ4_0x8Rows]) {
    const __m256i low = _mm256_hadd_epi32(_mm256_hadd_epi32(lanes[0], lanes[1]),
                                          _mm256_hadd_epi32(lanes[2], lanes[3]));
    const __m256i high = _mm256_hadd_epi32(_mm256_hadd_epi32(lanes[4], lanes[5]),
                                           _mm256_hadd_epi32(lanes[6], lanes[7]));
    // low: rows 0-3's sums of values 0-15 in its first half, of 16-31 in its second; high: 4-7's
    return _mm256_add_epi32(_mm256_permute2x128_si256(low, high, 0x20),
                            _mm256_permute2x128_si256(low, high, 0x31));
}

// One run of eight Q4_0 rows in RowLayout::Q4_0x8 (model/row_layout.h), read as one stream: each
// row's one float, as dotQ4_0 sums it, the eight in one vector: per block one transposing
// reduction, one conversion of the eight scales and one eight-wide multiply-add. With
// RowStreams::Grouped the stream is prefetched ahead (model/kernels/prefetch.h).
void q4_0Run(const uint8_t* run, int64_t blocks, const uint8_t* a, const float* activationScales,
             const int* activationSums, float* out, bool prefetch) {
    constexpr size_t kRunBlockBytes = kQ4_0x8Rows * sizeof(BlockQ4_0); // 144
    __m256 sums = _mm256_setzero_ps();
    for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* x = run + b * kRunBlockBytes;
        if (prefetch) prefetchRangeAhead(x, kRunBlockBytes);
        const __m256i y = load32(a + b * kQ8_0Bytes + kQ8_0Quants);
        __m256i lanes[kQ4_0x8Rows];
        alignas(16) uint16_t halves[kQ4_0x8Rows];
        for (int k = 0; k < kQ4_0x8Rows; ++k) {
            lanes[k] = q4_0Lanes(x + k * sizeof(BlockQ4_0), y);
            std::memcpy(&halves[k], x + k * sizeof(BlockQ4_0), sizeof halves[k]);
        }
        const __m256i isums =
            _mm256_sub_epi32(totalsOfEight(lanes), _mm256_set1_epi32(8 * activationSums[b]));
        const __m256 scales =
            _mm256_mul_ps(_mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(halves))),
                          _mm256_set1_ps(activationScales[b]));
        sums = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isums), scales, sums);
    }
    _mm256_storeu_ps(out, sums);
}
#else
// q4_0Run with AVX-512 (F and BW). A run's block is 144 bytes, row k's scale at byte 18k and its
// sixteen quant bytes after it, all whole 16-bit words: three loads and word permutes put four
// rows' quants in one register, a row in each 128-bit lane, and the eight scales in another. Each
// row's nibbles times the block's activations then sum inside its own lane, so the eight totals
// take two in-lane folds and one permute instead of q4_0Run's transposing reduction, and the
// scales one permute instead of eight scalar copies. The same integers and the same conversions
// and multiply-add as q4_0Run: its bits.
// Word indices for _mm512_permutex2var_epi16 (0-31 the first register's words, 32-63 the
// second's).
alignas(64) constexpr uint16_t kRows0123Words[32] = {1,  2,  3,  4,  5,  6,  7,  8,  10, 11, 12,
                                                     13, 14, 15, 16, 17, 19, 20, 21, 22, 23, 24,
                                                     25, 26, 28, 29, 30, 31, 32, 33, 34, 35};
// From the block's words 32-71 (bytes 64-143), numbered from word 32.
alignas(64) constexpr uint16_t kRows4567Words[32] = {5,  6,  7,  8,  9,  10, 11, 12, 14, 15, 16,
                                                     17, 18, 19, 20, 21, 23, 24, 25, 26, 27, 28,
                                                     29, 30, 32, 33, 34, 35, 36, 37, 38, 39};
alignas(64) constexpr uint16_t kScaleWords[32] = {0, 9, 18, 27, 36, 45, 54, 63};
alignas(64) constexpr int32_t kFirstOfEachLane[16] = {0, 4, 8, 12, 16, 20, 24, 28};
// The all-lanes masked forms: GCC 12 warns about the plain ones' undefined source.
constexpr __mmask16 kAllLanes = 0xffff;

class Q4_0RunWords {
public:
    Q4_0RunWords()
        : m_rows0123(_mm512_load_si512(kRows0123Words)),
          m_rows4567(_mm512_load_si512(kRows4567Words)), m_scales(_mm512_load_si512(kScaleWords)),
          m_firstOfEachLane(_mm512_load_si512(kFirstOfEachLane)) {}

    // The eight rows' integer block sums with the unsigned nibbles (before the offset), and
    // their eight f16 scales, of the block at x against activation quants y[32].
    void block(const uint8_t* x, const uint8_t* y, __m256i& totals, __m128i& halves) const {
        const __m512i words0 = _mm512_loadu_si512(x);
        const __m512i words32 = _mm512_loadu_si512(x + 64);
        const __m512i words64 = _mm512_maskz_loadu_epi16(0xff, x + 128); // bytes 128-143 only
        const __m512i low = _mm512_maskz_broadcast_i32x4(
            kAllLanes, _mm_loadu_si128(reinterpret_cast<const __m128i*>(y)));
        const __m512i high = _mm512_maskz_broadcast_i32x4(
            kAllLanes, _mm_loadu_si128(reinterpret_cast<const __m128i*>(y + 16)));
        const __m512i sums0123 =
            rowLanes(_mm512_permutex2var_epi16(words0, m_rows0123, words32), low, high);
        const __m512i sums4567 =
            rowLanes(_mm512_permutex2var_epi16(words32, m_rows4567, words64), low, high);
        totals = _mm512_maskz_extracti32x8_epi32(0xff,
                                                 _mm512_permutex2var_epi32(laneTotals(sums0123),
                                                                           m_firstOfEachLane,
                                                                           laneTotals(sums4567)),
                                                 0);
        halves = _mm512_maskz_extracti32x4_epi32(
            0xf, _mm512_permutex2var_epi16(words0, m_scales, words32), 0);
    }

private:
    // Four rows' sixteen quant bytes (one row a lane) times activation quants 0-15 (low nibbles)
    // and 16-31 (high nibbles), each lane's sums of four.
    static __m512i rowLanes(__m512i quants, __m512i low, __m512i high) {
        const __m512i mask = _mm512_set1_epi8(0x0f);
        const __m512i lowNibbles = _mm512_and_si512(quants, mask);
        const __m512i highNibbles = _mm512_and_si512(_mm512_srli_epi16(quants, 4), mask);
#if SINKSCOPE_KERNEL_ISA >= 3
        return _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), lowNibbles, low),
                                   highNibbles, high);
#else
        const __m512i ones = _mm512_set1_epi16(1);
        return _mm512_add_epi32(_mm512_madd_epi16(_mm512_maddubs_epi16(lowNibbles, low), ones),
                                _mm512_madd_epi16(_mm512_maddubs_epi16(highNibbles, high), ones));
#endif
    }
    // Each 128-bit lane's four sums added, in every position of the lane.
    static __m512i laneTotals(__m512i sums) {
        const __m512i pairs =
            _mm512_add_epi32(sums, _mm512_maskz_shuffle_epi32(kAllLanes, sums, _MM_PERM_CDAB));
        return _mm512_add_epi32(pairs, _mm512_maskz_shuffle_epi32(kAllLanes, pairs, _MM_PERM_BADC));
    }

    __m512i m_rows0123;
    __m512i m_rows4567;
    __m512i m_scales;
    __m512i m_firstOfEachLane;
};

void q4_0Run(const uint8_t* run, int64_t blocks, const uint8_t* a, const float* activationScales,
             const int* activationSums, float* out, bool prefetch) {
    constexpr size_t kRunBlockBytes = kQ4_0x8Rows * sizeof(BlockQ4_0); // 144
    const Q4_0RunWords words;
    __m256 sums = _mm256_setzero_ps();
    for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* x = run + b * kRunBlockBytes;
        if (prefetch) prefetchRangeAhead(x, kRunBlockBytes);
        __m256i totals;
        __m128i halves;
        words.block(x, a + b * kQ8_0Bytes + kQ8_0Quants, totals, halves);
        const __m256i isums = _mm256_sub_epi32(totals, _mm256_set1_epi32(8 * activationSums[b]));
        const __m256 scales =
            _mm256_mul_ps(_mm256_cvtph_ps(halves), _mm256_set1_ps(activationScales[b]));
        sums = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isums), scales, sums);
    }
    _mm256_storeu_ps(out, sums);
}
#endif

// Rows [rowBegin, rowEnd) of a Q8_0-activation type: groups of four, the rest one by one; or all
// one by one where `grouped` is false (RowStreams::Single).
template <DotKernel Single, typename Group>
void q8_0Rows(const uint8_t* rows, size_t rowBytes, int64_t blocks, const void* activations,
              float* out, int64_t rowBegin, int64_t rowEnd, bool grouped, bool withSums,
              Group group) {
    int64_t r = rowBegin;
    if (grouped && blocks <= kMaxGroupedBlocks && rowEnd - rowBegin >= kRowGroup) {
        const ActivationBlocks shared(bytesOf(activations), blocks, withSums);
        for (; r + kRowGroup <= rowEnd; r += kRowGroup)
            group(rows + static_cast<size_t>(r) * rowBytes, rowBytes, blocks, bytesOf(activations),
                  shared, out + r);
    }
    dotRows<Single>(rows, rowBytes, blocks, activations, out, r, rowEnd);
}

DotKernel dotKernel(GgmlType weightType) {
    switch (weightType) {
    case GgmlType::Q8_0:
        return dotQ8_0;
    case GgmlType::Q5_0:
        return dotQ5_0;
    case GgmlType::Q4_0:
        return dotQ4_0;
    case GgmlType::Q4_K:
        return dotQ4_K;
    case GgmlType::Q6_K:
        return dotQ6_K;
    default:
        return g_genericDot(weightType);
    }
}

void quantRows(GgmlType type, const uint8_t* rows, size_t rowBytes, int64_t blocks,
               const void* activations, float* out, int64_t rowBegin, int64_t rowEnd) {
    const bool grouped = activeRowStreams() == RowStreams::Grouped;
    switch (type) {
    case GgmlType::Q8_0:
        return q8_0Rows<dotQ8_0>(
            rows, rowBytes, blocks, activations, out, rowBegin, rowEnd, grouped, false,
            [](const uint8_t* group, size_t stride, int64_t n, const uint8_t* a,
               const ActivationBlocks& shared, float* results) {
                q8_0RowGroup<kQ8_0Bytes>(group, stride, n, a, shared.scales, results, q8_0Quants);
            });
    case GgmlType::Q5_0:
        return q8_0Rows<dotQ5_0>(
            rows, rowBytes, blocks, activations, out, rowBegin, rowEnd, grouped, false,
            [](const uint8_t* group, size_t stride, int64_t n, const uint8_t* a,
               const ActivationBlocks& shared, float* results) {
                q8_0RowGroup<sizeof(BlockQ5_0)>(group, stride, n, a, shared.scales, results,
                                                q5_0Quants);
            });
    case GgmlType::Q4_0:
        if (!grouped && blocks <= kMaxGroupedBlocks) {
            const ActivationBlocks shared(bytesOf(activations), blocks, true);
            for (int64_t r = rowBegin; r < rowEnd; ++r)
                out[r] = q4_0Row(rows + static_cast<size_t>(r) * rowBytes, blocks,
                                 bytesOf(activations), shared.scales, shared.sums);
            return;
        }
        return q8_0Rows<dotQ4_0>(
            rows, rowBytes, blocks, activations, out, rowBegin, rowEnd, true, true,
            [](const uint8_t* group, size_t stride, int64_t n, const uint8_t* a,
               const ActivationBlocks& shared, float* results) {
                q4_0RowGroup(group, stride, n, a, shared.scales, shared.sums, results);
            });
    case GgmlType::Q4_K:
        return dotRows<dotQ4_K>(rows, rowBytes, blocks, activations, out, rowBegin, rowEnd);
    case GgmlType::Q6_K:
        return dotRows<dotQ6_K>(rows, rowBytes, blocks, activations, out, rowBegin, rowEnd);
    default:
        return g_genericRows(type, rows, rowBytes, blocks, activations, out, rowBegin, rowEnd);
    }
}

void q4_0x8Rows(const uint8_t* rows, int64_t blocks, const void* activations, float* out,
                int64_t rowBegin, int64_t rowEnd) {
    const ActivationBlocks shared(bytesOf(activations), blocks, true);
    const bool prefetch = activeRowStreams() == RowStreams::Grouped;
    for (int64_t r = rowBegin; r < rowEnd; r += kQ4_0x8Rows)
        q4_0Run(rows + q4_0x8Offset(blocks, r, 0), blocks, bytesOf(activations), shared.scales,
                shared.sums, out + r, prefetch);
}

} // namespace

#endif

#include "model/kernels/kernel_isa_end.h"

// After fillDotKernels: the types above take these kernels, the others keep the generic ones.
void fillIntrinsicDotKernels(KernelTable& table) {
#if SINKSCOPE_KERNEL_ISA >= 1
    g_genericDot = table.dot;
    g_genericRows = table.quantRows;
    table.dot = dotKernel;
    table.quantRows = quantRows;
    table.q4_0x8Rows = q4_0x8Rows;
#else
    (void)table;
#endif
}

} // namespace sinkscope::SINKSCOPE_ISA_NAMESPACE
