// A kernel source (model/kernels/kernel_isa_begin.h): batched prefill's matrix-matrix products for
// the weight types of common files (Q4_0, Q8_0, Q5_0, Q4_K, Q6_K) with AVX2 intrinsics, for the
// AVX2 and AVX-512 levels; the portable build of this file is empty.
//
// A tile of rows is unpacked once per block and multiplied with the block of up to kTokens tokens'
// activations, so the unpacking and the weight loads are shared by the tokens. Each result is
// computed with exactly the integers and float steps of the row kernels in
// model/kernels/quant_dot_avx2.cpp (its fused multiply-adds, in block order, from the same
// products), so batched prefill gives token-by-token prefill's bits (tests/model/test_gemm.cpp).
#include "gguf/ggml_types.h"
#include "gguf/quant_blocks.h"
#include "model/kernels/kernel_table.h"
#include "model/row_layout.h"

#include <immintrin.h>

#include <algorithm>
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

using namespace avx2;

using GemmKernel = decltype(KernelTable::quantGemm);
using RowsKernel = decltype(KernelTable::quantRows);

// The level's generic products and row kernels (set once, when the table is built).
GemmKernel g_genericGemm = nullptr;
RowsKernel g_rows = nullptr;

constexpr int kTokens = 8;                    // tokens per tile
constexpr int kGroup = 4;                     // rows per tile of the 32-value types
constexpr int64_t kMaxBlocks = 1024;          // longer rows take the generic product
constexpr size_t kRowBlockBytes = 256 * 1024; // rows read once per chunk: they stay in L2

// The Q8_0 activation blocks of kTokens tokens: scales[b][t] as floats, and for Q4_0 the sums of
// their quants, sums[b][t].
struct TokenBlocks {
    float scales[kMaxBlocks][kTokens];
    int sums[kMaxBlocks][kTokens];

    void fill(const GemmArgs& g, int t0, int count, bool withSums) {
        for (int64_t b = 0; b < g.blocks; ++b)
            for (int t = 0; t < count; ++t) {
                const uint8_t* block = g.tokenRow(t0 + t) + b * kQ8_0Bytes;
                scales[b][t] = halfAt(block);
                if (withSums)
                    sums[b][t] = sumOfLanes(_mm256_madd_epi16(
                        _mm256_maddubs_epi16(_mm256_set1_epi8(1), load32(block + kQ8_0Quants)),
                        _mm256_set1_epi16(1)));
            }
    }
};

// Q4_0 (either layout), four rows by `count` tokens: each row's one float per token, as
// q4_0RowGroup sums it.
void q4_0Tile(const GemmArgs& g, int64_t r, int t0, int count, const TokenBlocks& tokens) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m128 sums[kTokens];
    for (int t = 0; t < count; ++t)
        sums[t] = _mm_setzero_ps();
    const uint8_t* starts[kGroup];
    for (int k = 0; k < kGroup; ++k)
        starts[k] = g.q4_0Row(r + k);
    const size_t stride = g.q4_0BlockStride();
    for (int64_t b = 0; b < g.blocks; ++b) {
        __m256i q[kGroup];
        uint16_t halves[kGroup];
        for (int k = 0; k < kGroup; ++k) {
            const uint8_t* x = starts[k] + b * stride;
            q[k] = nibbles(x + offsetof(BlockQ4_0, qs));
            std::memcpy(&halves[k], x, sizeof halves[k]);
        }
        const __m128 weightScales =
            _mm_cvtph_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(halves)));
        for (int t = 0; t < count; ++t) {
            const __m256i y = load32(g.tokenRow(t0 + t) + b * kQ8_0Bytes + kQ8_0Quants);
            __m256i lanes[kGroup];
            for (int k = 0; k < kGroup; ++k)
                lanes[k] = _mm256_madd_epi16(_mm256_maddubs_epi16(q[k], y), ones);
            const __m256i quads = _mm256_hadd_epi32(_mm256_hadd_epi32(lanes[0], lanes[1]),
                                                    _mm256_hadd_epi32(lanes[2], lanes[3]));
            const __m128i products =
                _mm_add_epi32(_mm256_castsi256_si128(quads), _mm256_extracti128_si256(quads, 1));
            const __m128i isums = _mm_sub_epi32(products, _mm_set1_epi32(8 * tokens.sums[b][t]));
            const __m128 scales = _mm_mul_ps(weightScales, _mm_set1_ps(tokens.scales[b][t]));
            sums[t] = _mm_fmadd_ps(_mm_cvtepi32_ps(isums), scales, sums[t]);
        }
    }
    for (int t = 0; t < count; ++t)
        _mm_storeu_ps(g.out + (t0 + t) * g.outStride + r, sums[t]);
}

// Q8_0 / Q5_0, four rows by `count` tokens: each row's eight float lanes, as q8_0RowGroup.
template <size_t BlockBytes, typename Quants>
void q8_0Tile(const GemmArgs& g, int64_t r, int t0, int count, const TokenBlocks& tokens,
              Quants quants) {
    __m256 sums[kTokens][kGroup];
    for (int t = 0; t < count; ++t)
        for (int k = 0; k < kGroup; ++k)
            sums[t][k] = _mm256_setzero_ps();
    for (int64_t b = 0; b < g.blocks; ++b) {
        __m256i q[kGroup];
        __m256i magnitudes[kGroup];
        float weightScales[kGroup];
        for (int k = 0; k < kGroup; ++k) {
            const uint8_t* x = g.row(r + k) + b * BlockBytes;
            q[k] = quants(x);
            magnitudes[k] = _mm256_sign_epi8(q[k], q[k]);
            weightScales[k] = halfAt(x);
        }
        for (int t = 0; t < count; ++t) {
            const __m256i y = load32(g.tokenRow(t0 + t) + b * kQ8_0Bytes + kQ8_0Quants);
            for (int k = 0; k < kGroup; ++k) {
                const __m256i lanes = _mm256_madd_epi16(
                    _mm256_maddubs_epi16(magnitudes[k], _mm256_sign_epi8(y, q[k])),
                    _mm256_set1_epi16(1));
                sums[t][k] = _mm256_fmadd_ps(_mm256_set1_ps(weightScales[k] * tokens.scales[b][t]),
                                             _mm256_cvtepi32_ps(lanes), sums[t][k]);
            }
        }
    }
    for (int t = 0; t < count; ++t)
        for (int k = 0; k < kGroup; ++k)
            g.out[(t0 + t) * g.outStride + r + k] = fold(sums[t][k]);
}

// Q4_K, one row by `count` tokens, as dotQ4_K: the scaled nibble products in integer lanes, the
// mins' pair sums in four float lanes (the same integers, from one multiply-add of the block
// sums with the mins).
void q4_KTile(const GemmArgs& g, int64_t r, int t0, int count) {
    const __m256i lowNibbles = _mm256_set1_epi8(0x0f);
    __m256 sums[kTokens];
    __m128 minLanes[kTokens];
    for (int t = 0; t < count; ++t) {
        sums[t] = _mm256_setzero_ps();
        minLanes[t] = _mm_setzero_ps();
    }
    for (int64_t b = 0; b < g.blocks; ++b) {
        const uint8_t* x = g.row(r) + b * sizeof(BlockQ4_K);
        const uint8_t* qs = x + offsetof(BlockQ4_K, qs);
        int16_t mins[16];
        __m256i lanes[kTokens];
        for (int t = 0; t < count; ++t)
            lanes[t] = _mm256_setzero_si256();
        for (int sub = 0; sub < 8; ++sub) {
            const ScaleMin packed = kQuantScaleMin(x + offsetof(BlockQ4_K, scales), sub);
            mins[2 * sub] = mins[2 * sub + 1] = static_cast<int16_t>(packed.min);
            __m256i q = load32(qs + 32 * (sub / 2));
            if (sub % 2) q = _mm256_srli_epi16(q, 4);
            q = _mm256_and_si256(q, lowNibbles);
            const __m256i scale = _mm256_set1_epi16(static_cast<short>(packed.scale));
            for (int t = 0; t < count; ++t) {
                const __m256i y =
                    load32(g.tokenRow(t0 + t) + b * kQ8KBytes + kQ8KQuants + 32 * sub);
                lanes[t] = _mm256_add_epi32(lanes[t],
                                            _mm256_madd_epi16(_mm256_maddubs_epi16(q, y), scale));
            }
        }
        const __m256i minPerValue = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(mins));
        const float weightScale = halfAt(x);
        const float weightMin = halfAt(x + offsetof(BlockQ4_K, dmin));
        for (int t = 0; t < count; ++t) {
            const uint8_t* y = g.tokenRow(t0 + t) + b * kQ8KBytes;
            sums[t] = _mm256_fmadd_ps(_mm256_set1_ps(floatAt(y) * weightScale),
                                      _mm256_cvtepi32_ps(lanes[t]), sums[t]);
            // sub i's (bsums[2i] + bsums[2i + 1]) * min_i in lane i, then the pairs of subs
            const __m256i perSub = _mm256_madd_epi16(load32(y + kQ8KSums), minPerValue);
            const __m256i pairs = _mm256_hadd_epi32(perSub, perSub);
            const __m128i minPairs = _mm_unpacklo_epi64(_mm256_castsi256_si128(pairs),
                                                        _mm256_extracti128_si256(pairs, 1));
            const float dmin = -floatAt(y) * weightMin;
            minLanes[t] = _mm_fmadd_ps(_mm_set1_ps(dmin), _mm_cvtepi32_ps(minPairs), minLanes[t]);
        }
    }
    for (int t = 0; t < count; ++t) {
        float m[4];
        _mm_storeu_ps(m, minLanes[t]);
        g.out[(t0 + t) * g.outStride + r] = fold(sums[t]) + ((m[0] + m[2]) + (m[1] + m[3]));
    }
}

// Q6_K, one row by `count` tokens, as dotQ6_K: (q * y) - (32 * y) on the unsigned quants.
void q6_KTile(const GemmArgs& g, int64_t r, int t0, int count) {
    const __m256i offset = _mm256_set1_epi8(32);
    __m256 sums[kTokens];
    for (int t = 0; t < count; ++t)
        sums[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < g.blocks; ++b) {
        const uint8_t* x = g.row(r) + b * sizeof(BlockQ6_K);
        const uint8_t* ql = x + offsetof(BlockQ6_K, ql);
        const uint8_t* qh = x + offsetof(BlockQ6_K, qh);
        const auto* scales = reinterpret_cast<const int8_t*>(x + offsetof(BlockQ6_K, scales));
        __m256i lanes[kTokens];
        for (int t = 0; t < count; ++t)
            lanes[t] = _mm256_setzero_si256();
        for (int quarter = 0; quarter < 8; ++quarter) {
            const __m256i q = q6_KQuants(ql, qh, quarter);
            const __m256i scale = _mm256_set_m128i(_mm_set1_epi16(scales[2 * quarter + 1]),
                                                   _mm_set1_epi16(scales[2 * quarter]));
            for (int t = 0; t < count; ++t) {
                const __m256i y =
                    load32(g.tokenRow(t0 + t) + b * kQ8KBytes + kQ8KQuants + 32 * quarter);
                const __m256i pairs =
                    _mm256_sub_epi16(_mm256_maddubs_epi16(q, y), _mm256_maddubs_epi16(offset, y));
                lanes[t] = _mm256_add_epi32(lanes[t], _mm256_madd_epi16(pairs, scale));
            }
        }
        const float weightScale = halfAt(x + offsetof(BlockQ6_K, d));
        for (int t = 0; t < count; ++t)
            sums[t] = _mm256_fmadd_ps(
                _mm256_set1_ps(floatAt(g.tokenRow(t0 + t) + b * kQ8KBytes) * weightScale),
                _mm256_cvtepi32_ps(lanes[t]), sums[t]);
    }
    for (int t = 0; t < count; ++t)
        g.out[(t0 + t) * g.outStride + r] = fold(sums[t]);
}

// Rows [rowBegin, rowEnd) for `tokens` tokens: blocks of rows that stay in L2, each against every
// token tile; Tile handles `group` rows at once, the rows past the last whole group go through
// the row kernel.
template <int Group, typename Tile>
void tiledGemm(GgmlType type, const GemmArgs& g, int tokens, int64_t rowBegin, int64_t rowEnd,
               Tile tile) {
    const int64_t step =
        std::max<int64_t>(Group, static_cast<int64_t>(kRowBlockBytes / g.rowBytes) / Group * Group);
    for (int64_t begin = rowBegin; begin < rowEnd; begin += step) {
        const int64_t end = std::min(rowEnd, begin + step);
        const int64_t grouped = begin + (end - begin) / Group * Group;
        for (int t0 = 0; t0 < tokens; t0 += kTokens) {
            const int count = std::min(kTokens, tokens - t0);
            tile.prepare(g, t0, count);
            for (int64_t r = begin; r < grouped; r += Group)
                tile(g, r, t0, count);
        }
        for (int t = 0; t < tokens; ++t)
            g_rows(type, g.rows, g.rowBytes, g.blocks, g.tokenRow(t), g.out + t * g.outStride,
                   grouped, end);
    }
}

// The tiles as callables: prepare() once per token tile, then one call per group of rows.
struct Q4_0Tiles {
    TokenBlocks& tokens;
    void prepare(const GemmArgs& g, int t0, int count) { tokens.fill(g, t0, count, true); }
    void operator()(const GemmArgs& g, int64_t r, int t0, int count) const {
        q4_0Tile(g, r, t0, count, tokens);
    }
};

template <size_t BlockBytes, __m256i (*Quants)(const uint8_t*)> struct Q8_0Tiles {
    TokenBlocks& tokens;
    void prepare(const GemmArgs& g, int t0, int count) { tokens.fill(g, t0, count, false); }
    void operator()(const GemmArgs& g, int64_t r, int t0, int count) const {
        q8_0Tile<BlockBytes>(g, r, t0, count, tokens, Quants);
    }
};

template <void (*Tile)(const GemmArgs&, int64_t, int, int)> struct KTiles {
    void prepare(const GemmArgs&, int, int) {}
    void operator()(const GemmArgs& g, int64_t r, int t0, int count) const {
        Tile(g, r, t0, count);
    }
};

void quantGemm(GgmlType type, const uint8_t* rows, size_t rowBytes, int64_t blocks,
               const uint8_t* activations, size_t activationBytes, int tokens, float* out,
               size_t outStride, int64_t rowBegin, int64_t rowEnd) {
    const GemmArgs g{rows, rowBytes, blocks, activations, activationBytes, out, outStride};
    if (blocks <= kMaxBlocks) {
        thread_local TokenBlocks tokenBlocks;
        switch (type) {
        case GgmlType::Q4_0:
            return tiledGemm<kGroup>(type, g, tokens, rowBegin, rowEnd, Q4_0Tiles{tokenBlocks});
        case GgmlType::Q8_0:
            return tiledGemm<kGroup>(type, g, tokens, rowBegin, rowEnd,
                                     Q8_0Tiles<kQ8_0Bytes, q8_0Quants>{tokenBlocks});
        case GgmlType::Q5_0:
            return tiledGemm<kGroup>(type, g, tokens, rowBegin, rowEnd,
                                     Q8_0Tiles<sizeof(BlockQ5_0), q5_0Quants>{tokenBlocks});
        case GgmlType::Q4_K:
            return tiledGemm<1>(type, g, tokens, rowBegin, rowEnd, KTiles<q4_KTile>{});
        case GgmlType::Q6_K:
            return tiledGemm<1>(type, g, tokens, rowBegin, rowEnd, KTiles<q6_KTile>{});
        default:
            break;
        }
    }
    g_genericGemm(type, rows, rowBytes, blocks, activations, activationBytes, tokens, out,
                  outStride, rowBegin, rowEnd);
}

// Q4_0 rows in RowLayout::Q4_0x8: the same tiles, whose rows' blocks lie a run apart.
void q4_0x8Gemm(const uint8_t* rows, int64_t blocks, const uint8_t* activations,
                size_t activationBytes, int tokens, float* out, size_t outStride, int64_t rowBegin,
                int64_t rowEnd) {
    const GemmArgs g = q4_0x8Args(rows, blocks, activations, activationBytes, out, outStride);
    thread_local TokenBlocks tokenBlocks;
    tiledGemm<kGroup>(GgmlType::Q4_0, g, tokens, rowBegin, rowEnd, Q4_0Tiles{tokenBlocks});
}

} // namespace

#endif

#include "model/kernels/kernel_isa_end.h"

// After fillGemmKernels: the types above take these products, the others keep the generic ones.
void fillIntrinsicGemmKernels(KernelTable& table) {
#if SINKSCOPE_KERNEL_ISA >= 1
    g_genericGemm = table.quantGemm;
    g_rows = table.quantRows;
    table.quantGemm = quantGemm;
    table.q4_0x8Gemm = q4_0x8Gemm;
#else
    (void)table;
#endif
}

} // namespace sinkscope::SINKSCOPE_ISA_NAMESPACE
