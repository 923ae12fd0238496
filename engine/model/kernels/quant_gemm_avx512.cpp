// A kernel source (model/kernels/kernel_isa_begin.h): batched prefill's matrix-matrix products with
// 512-bit registers (Q4_0, Q8_0, Q5_0, Q4_K, Q6_K), for the AVX-512 level; the other levels' builds
// of this file are empty.
//
// The tokens lie across the register: their Q8_0 activations are interleaved so that 64 bytes hold
// the same four values of sixteen tokens, and one four-byte group of a weight row, broadcast,
// multiplies all sixteen at once. Each 32-bit lane then holds one token's integer block sum, so
// no horizontal reduction is needed; each token's result takes exactly the integers and the float
// steps of the row kernels in model/kernels/quant_dot_avx2.cpp (tests/model/test_gemm.cpp).
#include "gguf/ggml_types.h"
#include "gguf/quant_blocks.h"
#include "model/kernels/kernel_table.h"
#include "model/row_layout.h"

#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "model/kernels/kernel_isa_begin.h"

// After the region opens: compiled for its level.
#include "model/kernels/avx2_blocks.h"

namespace sinkscope::SINKSCOPE_ISA_NAMESPACE {

#if SINKSCOPE_KERNEL_ISA >= 2

namespace {

using namespace avx2;

using GemmKernel = decltype(KernelTable::quantGemm);

// The level's products so far (set once, when the table is built), for the other types.
GemmKernel g_previousGemm = nullptr;

constexpr int kLanes = 16;                    // tokens per tile: one per 32-bit lane
constexpr int kGroups = 8;                    // four-value groups per 32-value block
constexpr size_t kRowBlockBytes = 256 * 1024; // rows read once per chunk: they stay in L2

// Every tile of sixteen tokens' Q8_0 activations, interleaved. For tile i, block b and group g
// the 64 bytes at quants[((i * blocks + b) * 8 + g) * 64] hold token (16 i + t)'s values
// 4g..4g+3 at 4t; scales[(i * blocks + b) * 16 + t] is its block scale and offsets[...] 8 times
// the sum of its block's quants (Q4_0's weights are q - 8). Missing tokens of the last tile are
// zero.
struct InterleavedTokens {
    std::vector<uint8_t> quants;
    std::vector<uint8_t> negated; // -q in the same layout (wrapping, as _mm256_sign_epi8 negates)
    std::vector<float> scales;
    std::vector<int32_t> offsets;
    // [cell][group][16]: minus o times the sum of the group's quants, where a sum of products
    // starts for weights taken unsigned as q + o: Q5_0's o = 16, and with VNNI Q8_0's o = 128
    std::vector<int32_t> minus16Sums;
#if SINKSCOPE_KERNEL_ISA >= 3
    std::vector<int32_t> minus128Sums;
#endif

    void fill(const GemmArgs& g, int tokens) {
        const int tiles = (tokens + kLanes - 1) / kLanes;
        const auto cells = static_cast<size_t>(tiles) * static_cast<size_t>(g.blocks);
        quants.assign(cells * kGroups * 64, 0);
        negated.assign(cells * kGroups * 64, 0);
        scales.assign(cells * kLanes, 0.0f);
        offsets.assign(cells * kLanes, 0);
        minus16Sums.assign(cells * kGroups * kLanes, 0);
#if SINKSCOPE_KERNEL_ISA >= 3
        minus128Sums.assign(cells * kGroups * kLanes, 0);
#endif
        for (int token = 0; token < tokens; ++token) {
            const size_t tile = static_cast<size_t>(token / kLanes);
            const int lane = token % kLanes;
            for (int64_t b = 0; b < g.blocks; ++b) {
                const size_t cell = tile * static_cast<size_t>(g.blocks) + static_cast<size_t>(b);
                const uint8_t* block = g.tokenRow(token) + b * kQ8_0Bytes;
                const uint8_t* q = block + kQ8_0Quants;
                alignas(32) uint8_t minus[32];
                _mm256_store_si256(reinterpret_cast<__m256i*>(minus),
                                   _mm256_sub_epi8(_mm256_setzero_si256(), load32(q)));
                for (int group = 0; group < kGroups; ++group) {
                    const size_t at = (cell * kGroups + group) * 64 + 4 * lane;
                    std::memcpy(&quants[at], q + 4 * group, 4);
                    std::memcpy(&negated[at], minus + 4 * group, 4);
                    int groupSum = 0;
                    for (int i = 0; i < 4; ++i)
                        groupSum += static_cast<int8_t>(q[4 * group + i]);
                    const size_t sumAt = (cell * kGroups + group) * kLanes + lane;
                    minus16Sums[sumAt] = -16 * groupSum;
#if SINKSCOPE_KERNEL_ISA >= 3
                    minus128Sums[sumAt] = -128 * groupSum;
#endif
                }
                scales[cell * kLanes + lane] = halfAt(block);
                const int sum = sumOfLanes(_mm256_madd_epi16(
                    _mm256_maddubs_epi16(_mm256_set1_epi8(1), load32(q)), _mm256_set1_epi16(1)));
                offsets[cell * kLanes + lane] = 8 * sum;
            }
        }
    }
};

// A row's eight float lanes (lane l: values 4l..4l+3 of each 32) folded as ggml::foldLanes8, for
// each token of a tile, stored to the output.
void storeFolded(const GemmArgs& g, int64_t r, const __m512 lanes[kGroups], const __m512 extra,
                 int count, int t0) {
    __m512 half[4];
    for (int i = 0; i < 4; ++i)
        half[i] = _mm512_add_ps(lanes[i + 4], lanes[i]);
    const __m512 folded =
        _mm512_add_ps(_mm512_add_ps(half[0], half[2]), _mm512_add_ps(half[1], half[3]));
    alignas(64) float results[kLanes];
    _mm512_store_ps(results, _mm512_add_ps(folded, extra));
    for (int t = 0; t < count; ++t)
        g.out[(t0 + t) * g.outStride + r] = results[t];
}

// Rows r .. r + Rows - 1 of Q4_0 against one tile: for each row and token, as dotQ4_0 sums it,
// fma(float(sum(q * y) - 8 sum(y)), d_w * d_a, sum) block after block. The nibbles of a block are
// at most 15, so the eight groups' 16-bit pair sums add up without overflow (8 * 2 * 15 * 128 <
// 32768) before one widening multiply-add; with VNNI each group adds straight into 32 bits.
template <int Rows>
void q4_0Rows(const GemmArgs& g, int64_t r, const InterleavedTokens& tokens, size_t tile, int count,
              int t0) {
    __m512 sums[Rows];
    const uint8_t* starts[Rows];
    for (int k = 0; k < Rows; ++k) {
        sums[k] = _mm512_setzero_ps();
        starts[k] = g.q4_0Row(r + k);
    }
    const size_t stride = g.q4_0BlockStride();
    for (int64_t b = 0; b < g.blocks; ++b) {
        const size_t cell = tile * static_cast<size_t>(g.blocks) + static_cast<size_t>(b);
        const uint8_t* y = tokens.quants.data() + cell * kGroups * 64;
        alignas(32) uint8_t q[Rows][32];
        __m512i pairs[Rows];
        for (int k = 0; k < Rows; ++k) {
            const uint8_t* x = starts[k] + b * stride;
            _mm256_store_si256(reinterpret_cast<__m256i*>(q[k]),
                               nibbles(x + offsetof(BlockQ4_0, qs)));
            pairs[k] = _mm512_setzero_si512();
        }
        for (int group = 0; group < kGroups; ++group) {
            const __m512i activations = _mm512_loadu_si512(y + group * 64);
            for (int k = 0; k < Rows; ++k) {
                int32_t four;
                std::memcpy(&four, q[k] + 4 * group, sizeof four);
#if SINKSCOPE_KERNEL_ISA >= 3
                pairs[k] = _mm512_dpbusd_epi32(pairs[k], _mm512_set1_epi32(four), activations);
#else
                pairs[k] = _mm512_add_epi16(
                    pairs[k], _mm512_maddubs_epi16(_mm512_set1_epi32(four), activations));
#endif
            }
        }
        const __m512i offsets = _mm512_loadu_si512(tokens.offsets.data() + cell * kLanes);
        const __m512 activationScales = _mm512_loadu_ps(tokens.scales.data() + cell * kLanes);
        for (int k = 0; k < Rows; ++k) {
#if SINKSCOPE_KERNEL_ISA >= 3
            const __m512i isums = _mm512_sub_epi32(pairs[k], offsets);
#else
            const __m512i isums =
                _mm512_sub_epi32(_mm512_madd_epi16(pairs[k], _mm512_set1_epi16(1)), offsets);
#endif
            const float weightScale = halfAt(starts[k] + b * stride);
            const __m512 scales = _mm512_mul_ps(_mm512_set1_ps(weightScale), activationScales);
            // (the all-lanes masked form: GCC 12 warns about the plain one's undefined source)
            const __m512 products = _mm512_maskz_cvtepi32_ps(0xffff, isums);
            sums[k] = _mm512_fmadd_ps(products, scales, sums[k]);
        }
    }
    for (int k = 0; k < Rows; ++k) {
        alignas(64) float results[kLanes];
        _mm512_store_ps(results, sums[k]);
        for (int t = 0; t < count; ++t)
            g.out[(t0 + t) * g.outStride + r + k] = results[t];
    }
}

// How Q8_0 and Q5_0 form a group's integer sum for sixteen tokens at once (the same integers as
// the row kernels' lanes). Q5_0's quants are taken unsigned: q + 16 in [0, 31] multiplies y
// directly, and the sum starts from minus 16 times the group's activation sum, prepared once per
// tile. Q8_0's are signed: |w| times y with w's sign moved onto y, as signedLanes does (where w
// is 0, |w| makes the product 0 whatever y is given). With VNNI one instruction sums the four
// unsigned-by-signed products into 32 bits, without the 16-bit saturation in between, so Q8_0 is
// taken unsigned as well: w + 128 (its sign bit flipped) times y, starting from minus 128 times
// the group's activation sum. Its products are exact where the sign trick wraps: an activation of
// -128 (only a NaN quantizes to it) against a negative weight, where the row kernel's sum differs
// as ggml's AVX2 one does (model/kernels/quant_dot_avx2.cpp); logits from NaN activations mean
// nothing either way.

// A group's row of a minus-o table (InterleavedTokens).
__m512i groupStart(const std::vector<int32_t>& table, size_t cell, int group) {
    return _mm512_loadu_si512(table.data() + (cell * kGroups + group) * kLanes);
}

// start + the sum over each lane's four bytes of unsigned w times signed y, in 32 bits.
__m512i unsignedBySigned(__m512i start, __m512i w, __m512i y) {
#if SINKSCOPE_KERNEL_ISA >= 3
    return _mm512_dpbusd_epi32(start, w, y);
#else
    return _mm512_add_epi32(start,
                            _mm512_madd_epi16(_mm512_maddubs_epi16(w, y), _mm512_set1_epi16(1)));
#endif
}

struct Q8_0Groups {
    static constexpr size_t kBlockBytes = sizeof(BlockQ8_0);
#if SINKSCOPE_KERNEL_ISA >= 3
    static __m256i quants(const uint8_t* x) {
        return _mm256_xor_si256(q8_0Quants(x), _mm256_set1_epi8(static_cast<char>(0x80)));
    }
    static __m512i sums(__m512i w, __m512i y, const InterleavedTokens& tokens, size_t cell,
                        int group) {
        return unsignedBySigned(groupStart(tokens.minus128Sums, cell, group), w, y);
    }
#else
    static __m256i quants(const uint8_t* x) {
        return q8_0Quants(x);
    }
    static __m512i sums(__m512i w, __m512i y, const InterleavedTokens& tokens, size_t cell,
                        int group) {
        const uint8_t* negated = tokens.negated.data() + (cell * kGroups + group) * 64;
        const __m512i signedY = _mm512_mask_loadu_epi8(y, _mm512_movepi8_mask(w), negated);
        return unsignedBySigned(_mm512_setzero_si512(), _mm512_abs_epi8(w), signedY);
    }
#endif
};

struct Q5_0Groups {
    static constexpr size_t kBlockBytes = sizeof(BlockQ5_0);
    static __m256i quants(const uint8_t* x) {
        return _mm256_or_si256(nibbles(x + offsetof(BlockQ5_0, qs)),
                               fifthBits(x + offsetof(BlockQ5_0, qh)));
    }
    static __m512i sums(__m512i w, __m512i y, const InterleavedTokens& tokens, size_t cell,
                        int group) {
        return unsignedBySigned(groupStart(tokens.minus16Sums, cell, group), w, y);
    }
};

// Rows r .. r + Rows - 1 of Q8_0 or Q5_0 against one tile, as q8_0Dot sums a row: eight float
// lanes, lane l taking d_w * d_a times the integer sum of values 4l..4l+3 of each block, folded
// as ggml::foldLanes8 folds them. Lane l is group l here, one register of sixteen tokens each.
template <int Rows, typename Groups>
void laneRows(const GemmArgs& g, int64_t r, const InterleavedTokens& tokens, size_t tile, int count,
              int t0) {
    __m512 lanes[Rows][kGroups];
    for (int k = 0; k < Rows; ++k)
        for (int group = 0; group < kGroups; ++group)
            lanes[k][group] = _mm512_setzero_ps();
    for (int64_t b = 0; b < g.blocks; ++b) {
        const size_t cell = tile * static_cast<size_t>(g.blocks) + static_cast<size_t>(b);
        const uint8_t* y = tokens.quants.data() + cell * kGroups * 64;
        const __m512 activationScales = _mm512_loadu_ps(tokens.scales.data() + cell * kLanes);
        alignas(32) uint8_t q[Rows][32];
        __m512 scales[Rows];
        for (int k = 0; k < Rows; ++k) {
            const uint8_t* x = g.row(r + k) + b * Groups::kBlockBytes;
            _mm256_store_si256(reinterpret_cast<__m256i*>(q[k]), Groups::quants(x));
            scales[k] = _mm512_mul_ps(_mm512_set1_ps(halfAt(x)), activationScales);
        }
        for (int group = 0; group < kGroups; ++group) {
            const __m512i activations = _mm512_loadu_si512(y + group * 64);
            for (int k = 0; k < Rows; ++k) {
                int32_t four;
                std::memcpy(&four, q[k] + 4 * group, sizeof four);
                const __m512i sums =
                    Groups::sums(_mm512_set1_epi32(four), activations, tokens, cell, group);
                lanes[k][group] = _mm512_fmadd_ps(scales[k], _mm512_maskz_cvtepi32_ps(0xffff, sums),
                                                  lanes[k][group]);
            }
        }
    }
    for (int k = 0; k < Rows; ++k)
        storeFolded(g, r + k, lanes[k], _mm512_setzero_ps(), count, t0);
}

// Every tile of sixteen tokens' Q8_K activations (256-value blocks), interleaved as
// InterleavedTokens interleaves Q8_0: the 64 bytes at quants[((i * blocks + b) * 64 + g) * 64]
// hold values 4g..4g+3 of the sixteen tokens. scales[(i * blocks + b) * 16 + t] is d;
// minSums[((i * blocks + b) * 4 + p) * 16 + t] holds, as two int16, the block sums of sub-blocks
// 2p and 2p + 1 (bsums[4p] + bsums[4p + 1], bsums[4p + 2] + bsums[4p + 3]) for Q4_K's mins;
// offsets[((i * blocks + b) * 64 + g) * 16 + t] the 16-bit pair sums of 32 * y for Q6_K.
struct InterleavedKTokens {
    static constexpr int kKGroups = 64;
    std::vector<uint8_t> quants;
    std::vector<float> scales;
    std::vector<int32_t> minSums;
    std::vector<uint8_t> offsets;

    void fill(const GemmArgs& g, int tokens) {
        const int tiles = (tokens + kLanes - 1) / kLanes;
        const auto cells = static_cast<size_t>(tiles) * static_cast<size_t>(g.blocks);
        quants.assign(cells * kKGroups * 64, 0);
        scales.assign(cells * kLanes, 0.0f);
        minSums.assign(cells * 4 * kLanes, 0);
        offsets.resize(cells * kKGroups * 64);
        for (int token = 0; token < tokens; ++token) {
            const size_t tile = static_cast<size_t>(token / kLanes);
            const int lane = token % kLanes;
            for (int64_t b = 0; b < g.blocks; ++b) {
                const size_t cell = tile * static_cast<size_t>(g.blocks) + static_cast<size_t>(b);
                const uint8_t* block = g.tokenRow(token) + b * kQ8KBytes;
                for (int group = 0; group < kKGroups; ++group)
                    std::memcpy(&quants[(cell * kKGroups + group) * 64 + 4 * lane],
                                block + kQ8KQuants + 4 * group, 4);
                scales[cell * kLanes + lane] = floatAt(block);
                int16_t bsums[16];
                std::memcpy(bsums, block + kQ8KSums, sizeof bsums);
                for (int pair = 0; pair < 4; ++pair) {
                    const auto low = static_cast<uint16_t>(bsums[4 * pair] + bsums[4 * pair + 1]);
                    const auto high =
                        static_cast<uint16_t>(bsums[4 * pair + 2] + bsums[4 * pair + 3]);
                    minSums[(cell * 4 + pair) * kLanes + lane] =
                        static_cast<int32_t>(low | (uint32_t{high} << 16));
                }
            }
        }
        const __m512i offset = _mm512_set1_epi8(32);
        for (size_t at = 0; at < quants.size(); at += 64)
            _mm512_storeu_si512(offsets.data() + at,
                                _mm512_maddubs_epi16(offset, _mm512_loadu_si512(&quants[at])));
    }
};

// Row r of Q4_K against one tile, as dotQ4_K: each sub-block's nibbles times the activations
// scaled by its 6-bit scale into integer lanes, the mins' pair sums into four float lanes, the
// lanes folded and the mins added ((m0 + m2) + (m1 + m3)).
void q4_KRow(const GemmArgs& g, int64_t r, const InterleavedKTokens& tokens, size_t tile, int count,
             int t0) {
    __m512 sums[kGroups];
    __m512 minLanes[4];
    for (int l = 0; l < kGroups; ++l)
        sums[l] = _mm512_setzero_ps();
    for (int p = 0; p < 4; ++p)
        minLanes[p] = _mm512_setzero_ps();
    const __m256i lowNibbles = _mm256_set1_epi8(0x0f);
    for (int64_t b = 0; b < g.blocks; ++b) {
        const size_t cell = tile * static_cast<size_t>(g.blocks) + static_cast<size_t>(b);
        const uint8_t* y = tokens.quants.data() + cell * InterleavedKTokens::kKGroups * 64;
        const uint8_t* x = g.row(r) + b * sizeof(BlockQ4_K);
        const uint8_t* qs = x + offsetof(BlockQ4_K, qs);
        __m512i lanes[kGroups];
        for (int l = 0; l < kGroups; ++l)
            lanes[l] = _mm512_setzero_si512();
        uint32_t minPairs[4] = {};
        for (int sub = 0; sub < 8; ++sub) {
            const ScaleMin packed = kQuantScaleMin(x + offsetof(BlockQ4_K, scales), sub);
            minPairs[sub / 2] |= packed.min << (16 * (sub % 2));
            __m256i nibbleBytes = load32(qs + 32 * (sub / 2));
            if (sub % 2) nibbleBytes = _mm256_srli_epi16(nibbleBytes, 4);
            alignas(32) uint8_t q[32];
            _mm256_store_si256(reinterpret_cast<__m256i*>(q),
                               _mm256_and_si256(nibbleBytes, lowNibbles));
            const __m512i scale = _mm512_set1_epi16(static_cast<short>(packed.scale));
            for (int l = 0; l < kGroups; ++l) {
                int32_t four;
                std::memcpy(&four, q + 4 * l, sizeof four);
                const __m512i pairs = _mm512_maddubs_epi16(
                    _mm512_set1_epi32(four), _mm512_loadu_si512(y + (sub * kGroups + l) * 64));
                lanes[l] = _mm512_add_epi32(lanes[l], _mm512_madd_epi16(pairs, scale));
            }
        }
        const __m512 activationScales = _mm512_loadu_ps(tokens.scales.data() + cell * kLanes);
        const __m512 scales = _mm512_mul_ps(activationScales, _mm512_set1_ps(halfAt(x)));
        for (int l = 0; l < kGroups; ++l)
            sums[l] = _mm512_fmadd_ps(scales, _mm512_maskz_cvtepi32_ps(0xffff, lanes[l]), sums[l]);
        // dmin = -d_a * dmin_w, as dotQ4_K takes it
        const __m512 dmin = _mm512_mul_ps(_mm512_sub_ps(_mm512_setzero_ps(), activationScales),
                                          _mm512_set1_ps(halfAt(x + offsetof(BlockQ4_K, dmin))));
        for (int p = 0; p < 4; ++p) {
            const __m512i sumsOfPair =
                _mm512_loadu_si512(tokens.minSums.data() + (cell * 4 + p) * kLanes);
            const __m512i products =
                _mm512_madd_epi16(sumsOfPair, _mm512_set1_epi32(static_cast<int32_t>(minPairs[p])));
            minLanes[p] =
                _mm512_fmadd_ps(dmin, _mm512_maskz_cvtepi32_ps(0xffff, products), minLanes[p]);
        }
    }
    const __m512 mins = _mm512_add_ps(_mm512_add_ps(minLanes[0], minLanes[2]),
                                      _mm512_add_ps(minLanes[1], minLanes[3]));
    storeFolded(g, r, sums, mins, count, t0);
}

// Row r of Q6_K against one tile, as dotQ6_K: (q * y) - (32 * y) on the unsigned quants, each 16
// values scaled by their int8 scale.
void q6_KRow(const GemmArgs& g, int64_t r, const InterleavedKTokens& tokens, size_t tile, int count,
             int t0) {
    __m512 sums[kGroups];
    for (int l = 0; l < kGroups; ++l)
        sums[l] = _mm512_setzero_ps();
    for (int64_t b = 0; b < g.blocks; ++b) {
        const size_t cell = tile * static_cast<size_t>(g.blocks) + static_cast<size_t>(b);
        const size_t groupsAt = cell * InterleavedKTokens::kKGroups * 64;
        const uint8_t* y = tokens.quants.data() + groupsAt;
        const uint8_t* offsets = tokens.offsets.data() + groupsAt;
        const uint8_t* x = g.row(r) + b * sizeof(BlockQ6_K);
        const uint8_t* ql = x + offsetof(BlockQ6_K, ql);
        const uint8_t* qh = x + offsetof(BlockQ6_K, qh);
        const auto* scales = reinterpret_cast<const int8_t*>(x + offsetof(BlockQ6_K, scales));
        __m512i lanes[kGroups];
        for (int l = 0; l < kGroups; ++l)
            lanes[l] = _mm512_setzero_si512();
        for (int quarter = 0; quarter < 8; ++quarter) { // values 32 quarter + l
            alignas(32) uint8_t q[32];
            _mm256_store_si256(reinterpret_cast<__m256i*>(q), q6_KQuants(ql, qh, quarter));
            for (int l = 0; l < kGroups; ++l) {
                int32_t four;
                std::memcpy(&four, q + 4 * l, sizeof four);
                const size_t at = static_cast<size_t>(quarter * kGroups + l) * 64;
                const __m512i pairs = _mm512_sub_epi16(
                    _mm512_maddubs_epi16(_mm512_set1_epi32(four), _mm512_loadu_si512(y + at)),
                    _mm512_loadu_si512(offsets + at));
                const __m512i scale = _mm512_set1_epi16(scales[2 * quarter + l / 4]);
                lanes[l] = _mm512_add_epi32(lanes[l], _mm512_madd_epi16(pairs, scale));
            }
        }
        const __m512 activationScales = _mm512_loadu_ps(tokens.scales.data() + cell * kLanes);
        const __m512 scale =
            _mm512_mul_ps(activationScales, _mm512_set1_ps(halfAt(x + offsetof(BlockQ6_K, d))));
        for (int l = 0; l < kGroups; ++l)
            sums[l] = _mm512_fmadd_ps(scale, _mm512_maskz_cvtepi32_ps(0xffff, lanes[l]), sums[l]);
    }
    storeFolded(g, r, sums, _mm512_setzero_ps(), count, t0);
}

// Rows [rowBegin, rowEnd) for `tokens` tokens: blocks of rows that stay in L2, each against
// every tile; `several` computes Rows rows at once (they share each activation load), `one` the
// rows past the last whole group.
template <typename Tokens, int Rows>
void tiledGemm(const GemmArgs& g, int tokens, int64_t rowBegin, int64_t rowEnd,
               void (*several)(const GemmArgs&, int64_t, const Tokens&, size_t, int, int),
               void (*one)(const GemmArgs&, int64_t, const Tokens&, size_t, int, int)) {
    thread_local Tokens interleaved;
    interleaved.fill(g, tokens);
    const int64_t step =
        std::max<int64_t>(Rows, static_cast<int64_t>(kRowBlockBytes / g.rowBytes) / Rows * Rows);
    for (int64_t begin = rowBegin; begin < rowEnd; begin += step) {
        const int64_t end = std::min(rowEnd, begin + step);
        for (int t0 = 0; t0 < tokens; t0 += kLanes) {
            const auto tile = static_cast<size_t>(t0 / kLanes);
            const int count = std::min(kLanes, tokens - t0);
            int64_t r = begin;
            for (; r + Rows <= end; r += Rows)
                several(g, r, interleaved, tile, count, t0);
            for (; r < end; ++r)
                one(g, r, interleaved, tile, count, t0);
        }
    }
}

void quantGemm(GgmlType type, const uint8_t* rows, size_t rowBytes, int64_t blocks,
               const uint8_t* activations, size_t activationBytes, int tokens, float* out,
               size_t outStride, int64_t rowBegin, int64_t rowEnd) {
    const GemmArgs g{rows, rowBytes, blocks, activations, activationBytes, out, outStride};
    switch (type) {
    case GgmlType::Q4_0:
        return tiledGemm<InterleavedTokens, 2>(g, tokens, rowBegin, rowEnd, q4_0Rows<2>,
                                               q4_0Rows<1>);
    case GgmlType::Q8_0:
        return tiledGemm<InterleavedTokens, 2>(g, tokens, rowBegin, rowEnd, laneRows<2, Q8_0Groups>,
                                               laneRows<1, Q8_0Groups>);
    case GgmlType::Q5_0:
        return tiledGemm<InterleavedTokens, 2>(g, tokens, rowBegin, rowEnd, laneRows<2, Q5_0Groups>,
                                               laneRows<1, Q5_0Groups>);
    case GgmlType::Q4_K:
        return tiledGemm<InterleavedKTokens, 1>(g, tokens, rowBegin, rowEnd, q4_KRow, q4_KRow);
    case GgmlType::Q6_K:
        return tiledGemm<InterleavedKTokens, 1>(g, tokens, rowBegin, rowEnd, q6_KRow, q6_KRow);
    default:
        break;
    }
    g_previousGemm(type, rows, rowBytes, blocks, activations, activationBytes, tokens, out,
                   outStride, rowBegin, rowEnd);
}

// Q4_0 rows in RowLayout::Q4_0x8: the same rows, whose blocks lie a run apart.
void q4_0x8Gemm(const uint8_t* rows, int64_t blocks, const uint8_t* activations,
                size_t activationBytes, int tokens, float* out, size_t outStride, int64_t rowBegin,
                int64_t rowEnd) {
    const GemmArgs g = q4_0x8Args(rows, blocks, activations, activationBytes, out, outStride);
    tiledGemm<InterleavedTokens, 2>(g, tokens, rowBegin, rowEnd, q4_0Rows<2>, q4_0Rows<1>);
}

} // namespace

#endif

#include "model/kernels/kernel_isa_end.h"

// After fillIntrinsicGemmKernels: the types above take these products.
void fillAvx512GemmKernels(KernelTable& table) {
#if SINKSCOPE_KERNEL_ISA >= 2
    g_previousGemm = table.quantGemm;
    table.quantGemm = quantGemm;
    table.q4_0x8Gemm = q4_0x8Gemm;
#else
    (void)table;
#endif
}

} // namespace sinkscope::SINKSCOPE_ISA_NAMESPACE
