// A kernel source (model/kernels/kernel_isa_begin.h): attention's dot products over the kept slots,
// compiled once per instruction-set level. Each dot is summed exactly as ggml::laneDot16 sums it
// (lane j takes the products i = j mod 16 in increasing i with fused multiply-adds, then the
// lanes fold halves first), but sixteen dots run side by side: lanes[j][e] is lane j of the
// e-th dot, so the multiply-adds and the folds work on sixteen dots per instruction.
#include "model/kernels/kernel_table.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "model/kernels/kernel_isa_begin.h"

// After the region opens: compiled for its level.
#include "model/kernels/ggml_lanes.h"

namespace sinkscope::SINKSCOPE_ISA_NAMESPACE {

namespace {

constexpr int kLanes = 16;

// Sixteen dots' lanes: lanes[j][e] is lane j of dot e.
struct DotLanes {
    float lanes[kLanes][kLanes] = {};

    // lane j of dots e in [0, width) += a * b[e]; Width > 0 fixes the width at compile time (so
    // that the loop becomes vector instructions), 0 takes `width`
    template <int Width> void add(int j, float a, const float* b, int width = Width) {
        float* lane = lanes[j % kLanes];
        if constexpr (Width > 0)
            for (int e = 0; e < Width; ++e)
                lane[e] = std::fma(a, b[e], lane[e]);
        else
            for (int e = 0; e < width; ++e)
                lane[e] = std::fma(a, b[e], lane[e]);
    }
    // out[e] = dot e's lanes folded as ggml::foldLanes16 folds them, times `scale`
    void fold(float scale, float* out, int width) const {
        float half[8][kLanes], quarter[4][kLanes], folded[kLanes];
        for (int i = 0; i < 8; ++i)
            for (int e = 0; e < kLanes; ++e)
                half[i][e] = lanes[i + 8][e] + lanes[i][e];
        for (int i = 0; i < 4; ++i)
            for (int e = 0; e < kLanes; ++e)
                quarter[i][e] = half[i + 4][e] + half[i][e];
        for (int e = 0; e < kLanes; ++e)
            folded[e] = (quarter[0][e] + quarter[2][e]) + (quarter[1][e] + quarter[3][e]);
        for (int e = 0; e < width; ++e)
            out[e] = folded[e] * scale;
    }
};

#if SINKSCOPE_KERNEL_ISA >= 2
// With 32 vector registers the sixteen lanes of up to sixteen dots stay in registers, where
// DotLanes keeps them in memory (a load and a store around every multiply-add): lane j is acc[j],
// dot e its element e. The same multiply-adds in the same order, then DotLanes::fold's adds: the
// same bits. Dots e in [0, Dots) of a[0..n) with rows[j * stride + e], folded, times scale, into
// out[Dots]; with Dots = 8 (stories260K's heads) the loads and the store are masked to eight
// values, so nothing past them is read or written.
// Sixteen lanes folded as DotLanes::fold folds them: halves, quarters, then the last four in
// pairs. Overwrites acc.
__m512 foldLanes(__m512 acc[kLanes]) {
    for (int i = 0; i < 8; ++i)
        acc[i] = _mm512_add_ps(acc[i + 8], acc[i]);
    for (int i = 0; i < 4; ++i)
        acc[i] = _mm512_add_ps(acc[i + 4], acc[i]);
    return _mm512_add_ps(_mm512_add_ps(acc[0], acc[2]), _mm512_add_ps(acc[1], acc[3]));
}

template <int Dots>
void dotsInRegisters(const float* a, const float* rows, size_t stride, size_t n, float scale,
                     float* out) {
    static_assert(Dots == 8 || Dots == 16);
    constexpr auto kMask = static_cast<__mmask16>(Dots == 16 ? 0xffff : 0x00ff);
    __m512 acc[kLanes];
    for (int l = 0; l < kLanes; ++l)
        acc[l] = _mm512_setzero_ps();
    size_t j = 0;
    for (; j + kLanes <= n; j += kLanes)
#pragma GCC unroll 16
        for (int l = 0; l < kLanes; ++l)
            acc[l] = _mm512_fmadd_ps(_mm512_set1_ps(a[j + l]),
                                     _mm512_maskz_loadu_ps(kMask, rows + (j + l) * stride), acc[l]);
#pragma GCC unroll 16
    for (int l = 0; l < kLanes; ++l) // constant indices keep acc in registers
        if (j + l < n)
            acc[l] = _mm512_fmadd_ps(_mm512_set1_ps(a[j + l]),
                                     _mm512_maskz_loadu_ps(kMask, rows + (j + l) * stride), acc[l]);
    const __m512 folded = foldLanes(acc);
    _mm512_mask_storeu_ps(out, kMask, _mm512_mul_ps(folded, _mm512_set1_ps(scale)));
}
#endif

// One head's scores for kept slots [first, first + width): the query's value j against row j of
// the head's key columns, `stride` slots apart (Width as in DotLanes::add).
template <int Width>
void scoreSlots(const float* query, const float* keyColumns, size_t stride, int headDim,
                size_t first, float scale, float* scores, int width) {
#if SINKSCOPE_KERNEL_ISA >= 2
    if constexpr (Width == kLanes) {
        dotsInRegisters<kLanes>(query, keyColumns + first, stride, static_cast<size_t>(headDim),
                                scale, scores + first);
        return;
    }
#endif
    DotLanes dots;
    for (int j = 0; j < headDim; ++j)
        dots.add<Width>(j, query[j], keyColumns + static_cast<size_t>(j) * stride + first, width);
    dots.fold(scale, scores + first, width);
}

void attentionScores(const AttentionShape& shape, const float* queries, const float* keyColumns,
                     float scale, float* scores, int headBegin, int headEnd) {
    const auto kept = static_cast<size_t>(shape.kept);
    const auto end = static_cast<size_t>(std::min(shape.kept, shape.scoreEnd));
    const auto stride = static_cast<size_t>(shape.keyStride);
    for (int h = headBegin; h < headEnd; ++h) {
        const float* query = queries + static_cast<size_t>(h) * shape.headDim;
        const float* keys =
            keyColumns + static_cast<size_t>(h / shape.groupSize) * shape.headDim * stride;
        float* headScores = scores + static_cast<size_t>(h) * kept;
        auto first = static_cast<size_t>(shape.scoreFirst);
        for (; first + kLanes <= end; first += kLanes)
            scoreSlots<kLanes>(query, keys, stride, shape.headDim, first, scale, headScores,
                               kLanes);
        if (first < end)
            scoreSlots<0>(query, keys, stride, shape.headDim, first, scale, headScores,
                          static_cast<int>(end - first));
    }
}

#if SINKSCOPE_KERNEL_ISA >= 2
// Sixteen lanes of sixteen dots (lanes[l][e]: lane l of dot e) folded as dotsInRegisters folds
// them, times scale; the first `width` dots are stored at out.
void storeFoldedLanes(const float (*lanes)[kLanes], float scale, size_t width, float* out) {
    __m512 acc[kLanes];
    for (size_t l = 0; l < kLanes; ++l)
        acc[l] = _mm512_load_ps(lanes[l]);
    const __m512 folded = foldLanes(acc);
    _mm512_mask_storeu_ps(out, static_cast<__mmask16>((1u << width) - 1),
                          _mm512_mul_ps(folded, _mm512_set1_ps(scale)));
}

// dotsInRegisters<16> for several queries against the same sixteen slots [first, first + 16)
// (fewer where `slots` < 16: the loads are masked to them): for each lane l, the key rows
// l, l + 16, ... are loaded once and every token's lane l is their chain of multiply-adds (the
// order dotsInRegisters takes), kept in memory until the token's fold. Token t's scores are
// stored for the slots below ends[t] only.
void dotsForTokens(int tokens, const float* const* queries, const float* rows, size_t stride,
                   size_t n, int slots, float scale, const int* ends, size_t first,
                   float* const* out) {
    const auto loadMask = static_cast<__mmask16>(slots >= kLanes ? 0xffff : (1u << slots) - 1);
    constexpr size_t kMaxChain = 16; // head_dim up to 256
    alignas(64) float lanes[KernelTable::kMaxScoreTokens][kLanes][kLanes];
    for (size_t l = 0; l < kLanes; ++l) {
        __m512 keys[kMaxChain];
        size_t chain = 0;
        for (size_t j = l; j < n && chain < kMaxChain; j += kLanes)
            keys[chain++] = _mm512_maskz_loadu_ps(loadMask, rows + j * stride);
        for (int t = 0; t < tokens; ++t) {
            __m512 acc = _mm512_setzero_ps();
            for (size_t m = 0; m < chain; ++m)
                acc = _mm512_fmadd_ps(_mm512_set1_ps(queries[t][l + m * kLanes]), keys[m], acc);
            _mm512_store_ps(lanes[t][l], acc);
        }
    }
    for (int t = 0; t < tokens; ++t)
        if (static_cast<size_t>(ends[t]) > first)
            storeFoldedLanes(lanes[t], scale,
                             std::min<size_t>(kLanes, static_cast<size_t>(ends[t]) - first),
                             out[t] + first);
}
#endif

void attentionScoresTokens(const AttentionShape& shape, int tokens, const float* const* queries,
                           const int* kept, const float* keyColumns, float scale,
                           float* const* scores, int headBegin, int headEnd) {
#if SINKSCOPE_KERNEL_ISA >= 2
    if (tokens > 1 && shape.headDim <= 16 * kLanes) {
        const auto stride = static_cast<size_t>(shape.keyStride);
        int ends[KernelTable::kMaxScoreTokens];
        for (int t = 0; t < tokens; ++t)
            ends[t] = std::min(kept[t], shape.scoreEnd);
        const int widest = *std::max_element(ends, ends + tokens);
        for (int h = headBegin; h < headEnd; ++h) {
            const float* keys =
                keyColumns + static_cast<size_t>(h / shape.groupSize) * shape.headDim * stride;
            const float* headQueries[KernelTable::kMaxScoreTokens];
            float* headScores[KernelTable::kMaxScoreTokens];
            for (int t = 0; t < tokens; ++t) {
                headQueries[t] = queries[t] + static_cast<size_t>(h) * shape.headDim;
                headScores[t] = scores[t] + static_cast<size_t>(h) * kept[t];
            }
            for (int first = shape.scoreFirst; first < widest; first += kLanes)
                dotsForTokens(tokens, headQueries, keys + first, stride,
                              static_cast<size_t>(shape.headDim), widest - first, scale, ends,
                              static_cast<size_t>(first), headScores);
        }
        return;
    }
#endif
    for (int t = 0; t < tokens; ++t) {
        AttentionShape own = shape;
        own.kept = kept[t];
        attentionScores(own, queries[t], keyColumns, scale, scores[t], headBegin, headEnd);
    }
}

// `width` outputs of one head: the weights along the kept slots against each slot's value row
// (Width as in DotLanes::add).
template <int Width>
void weighValues(const float* weights, const float* valueRows, size_t kept, size_t rowStride,
                 float* out, int width) {
#if SINKSCOPE_KERNEL_ISA >= 2
    if constexpr (Width == kLanes || Width == 8) {
        dotsInRegisters<Width>(weights, valueRows, rowStride, kept, 1.0f, out);
        return;
    }
#endif
    DotLanes dots;
    for (size_t i = 0; i < kept; ++i)
        dots.add<Width>(static_cast<int>(i % kLanes), weights[i], valueRows + i * rowStride, width);
    dots.fold(1.0f, out, width);
}

void attentionValues(const AttentionShape& shape, const float* weights, const float* valueRows,
                     float* out, int headBegin, int headEnd) {
    const auto kept = static_cast<size_t>(shape.kept);
    const auto kvDim = static_cast<size_t>(shape.kvDim);
    for (int h = headBegin; h < headEnd; ++h) {
        const float* headWeights = weights + static_cast<size_t>(h) * kept;
        const float* values = valueRows + static_cast<size_t>(h / shape.groupSize) * shape.headDim;
        float* headOut = out + static_cast<size_t>(h) * shape.headDim;
        for (int first = 0; first < shape.headDim; first += kLanes) {
            const int width = std::min(kLanes, shape.headDim - first);
            if (width == kLanes)
                weighValues<kLanes>(headWeights, values + first, kept, kvDim, headOut + first,
                                    kLanes);
            else if (width == 8) // a head of 8 values (stories260K)
                weighValues<8>(headWeights, values + first, kept, kvDim, headOut + first, 8);
            else
                weighValues<0>(headWeights, values + first, kept, kvDim, headOut + first, width);
        }
    }
}

#if SINKSCOPE_KERNEL_ISA >= 2
// weighValues' dotsInRegisters<Dots> for several tokens' weights over the same value rows: row i
// is loaded once and multiplies the weight i of every token with i < kept[t] (a masked
// multiply-add leaves the others' lanes as they are), so token t's lane l is the chain over its
// slots i = l mod 16 in increasing i, as for one token. Absent tokens have kept 0.
template <int Dots>
void valuesForTokens(const float* const* weights, const int* kept, const float* rows, size_t stride,
                     float* const* out) {
    constexpr int kTokens = KernelTable::kMaxScoreTokens;
    constexpr auto kMask = static_cast<__mmask16>(Dots == 16 ? 0xffff : 0x00ff);
    const auto widest = static_cast<size_t>(*std::max_element(kept, kept + kTokens));
    alignas(64) float lanes[kTokens][kLanes][kLanes];
    for (size_t l = 0; l < kLanes; ++l) {
        __m512 acc[kTokens];
        for (int t = 0; t < kTokens; ++t)
            acc[t] = _mm512_setzero_ps();
        for (size_t i = l; i < widest; i += kLanes) {
            const __m512 row = _mm512_maskz_loadu_ps(kMask, rows + i * stride);
#pragma GCC unroll 8
            for (int t = 0; t < kTokens; ++t) {
                const bool in = i < static_cast<size_t>(kept[t]);
                const float weight = in ? weights[t][i] : 0.0f;
                acc[t] = _mm512_mask3_fmadd_ps(_mm512_set1_ps(weight), row, acc[t],
                                               static_cast<__mmask16>(in ? 0xffff : 0));
            }
        }
        for (int t = 0; t < kTokens; ++t)
            _mm512_store_ps(lanes[t][l], acc[t]);
    }
    for (int t = 0; t < kTokens; ++t)
        if (kept[t] > 0) storeFoldedLanes(lanes[t], 1.0f, Dots, out[t]);
}
#endif

void attentionValuesTokens(const AttentionShape& shape, int tokens, const float* const* weights,
                           const int* kept, const float* valueRows, float* const* out,
                           int headBegin, int headEnd) {
#if SINKSCOPE_KERNEL_ISA >= 2
    if (tokens > 1 && (shape.headDim % kLanes == 0 || shape.headDim == 8)) {
        constexpr int kTokens = KernelTable::kMaxScoreTokens;
        const auto kvDim = static_cast<size_t>(shape.kvDim);
        int allKept[kTokens] = {};
        std::copy_n(kept, tokens, allKept);
        for (int h = headBegin; h < headEnd; ++h) {
            const float* values =
                valueRows + static_cast<size_t>(h / shape.groupSize) * shape.headDim;
            const float* headWeights[kTokens] = {};
            float* headOut[kTokens] = {};
            for (int t = 0; t < tokens; ++t)
                headWeights[t] = weights[t] + static_cast<size_t>(h) * kept[t];
            for (int first = 0; first < shape.headDim; first += kLanes) {
                for (int t = 0; t < tokens; ++t)
                    headOut[t] = out[t] + static_cast<size_t>(h) * shape.headDim + first;
                if (shape.headDim == 8)
                    valuesForTokens<8>(headWeights, allKept, values + first, kvDim, headOut);
                else
                    valuesForTokens<kLanes>(headWeights, allKept, values + first, kvDim, headOut);
            }
        }
        return;
    }
#endif
    for (int t = 0; t < tokens; ++t) {
        AttentionShape own = shape;
        own.kept = kept[t];
        attentionValues(own, weights[t], valueRows, out[t], headBegin, headEnd);
    }
}

} // namespace

#include "model/kernels/kernel_isa_end.h"

void fillAttentionKernels(KernelTable& table) {
    table.attentionScores = attentionScores;
    table.attentionScoresTokens = attentionScoresTokens;
    table.attentionValuesTokens = attentionValuesTokens;
    table.attentionValues = attentionValues;
}

} // namespace sinkscope::SINKSCOPE_ISA_NAMESPACE
