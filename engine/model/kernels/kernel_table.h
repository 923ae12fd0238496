// The forward pass's hot kernels, one table per instruction-set level (model/kernels/cpu_isa.h). A
// level's table holds the same C++ (model/kernels/ggml_float.cpp, model/kernels/quant_dot_fast.cpp)
// compiled for that level, so every table computes the same bits; tests run each supported level
// against the portable one and against the scalar references.
#pragma once

#include "gguf/ggml_types.h"
#include "model/kernels/cpu_isa.h"
#include "model/kernels/quant_dot_kernels.h"

#include <cstddef>
#include <cstdint>
#include <limits>

namespace sinkscope {

// Attention over `kept` cache slots: heads query heads of headDim values, each head reading key
// and value head h / groupSize of the kvDim-wide rows. The key columns hold keyStride >= kept
// slots (the keys gathered once for a longer slot list whose first `kept` are these). The score
// kernels score only the slots [scoreFirst, min(kept, scoreEnd)), into the same [heads][kept]
// rows: a run of slots that one rotation of the query scores (streaming positions fold sinks).
struct AttentionShape {
    int kept = 0;
    int headDim = 0;
    int groupSize = 1;
    int kvDim = 0;
    int keyStride = 0;
    int scoreFirst = 0;
    int scoreEnd = std::numeric_limits<int>::max();
};

struct KernelTable {
    Isa isa = Isa::Portable;
    // model/kernels/ggml_float.h
    float (*foldLanes8)(const float lanes[8]) = nullptr;
    float (*foldLanes16)(const float lanes[16]) = nullptr;
    float (*laneDot16)(const float* a, const float* b, int n) = nullptr;
    float (*vectorExp)(float x) = nullptr;
    void (*softmaxRow)(float* x, int n) = nullptr;
    void (*swiglu)(float* gate, const float* up, int n) = nullptr;
    // out[r] = W[r] . x for r in [rowBegin, rowEnd), W [rows][cols] f32 row-major, each row summed
    // as laneDot16 sums it
    void (*matvecF32)(const float* w, int64_t cols, const float* x, float* out, int64_t rowBegin,
                      int64_t rowEnd) = nullptr;
    // A matrix product's input x[32 * blocks] as Q8_0 / Q8_1 activation blocks at dst
    // (model/kernels/activation_quant.cpp)
    void (*quantizeQ8_0)(const float* x, void* dst, int64_t blocks) = nullptr;
    void (*quantizeQ8_1)(const float* x, void* dst, int64_t blocks) = nullptr;
    // model/quant_dot.h: the dot of one row of weightType (nullptr for a type without a dot)
    quant::DotKernel (*dot)(GgmlType weightType) = nullptr;
    // out[r] = dot(row r of `rows`, activations) for r in [rowBegin, rowEnd); each row is
    // `blocks` blocks of `type`, rowBytes apart; `type` must have a dot
    void (*quantRows)(GgmlType type, const uint8_t* rows, size_t rowBytes, int64_t blocks,
                      const void* activations, float* out, int64_t rowBegin,
                      int64_t rowEnd) = nullptr;
    // Batched prefill: a block of tokens through the same rows. out[t * outStride + r] is, bit for
    // bit, quantRows' result for row r and activation row t (at activations + t *
    // activationBytes), for r in [rowBegin, rowEnd) and t in [0, tokens).
    void (*quantGemm)(GgmlType type, const uint8_t* rows, size_t rowBytes, int64_t blocks,
                      const uint8_t* activations, size_t activationBytes, int tokens, float* out,
                      size_t outStride, int64_t rowBegin, int64_t rowEnd) = nullptr;
    // The same two for Q4_0 rows in RowLayout::Q4_0x8 (model/row_layout.h), rowBegin and rowEnd
    // multiples of eight and at most kQ4_0x8MaxBlocks blocks: bit for bit quantRows' and
    // quantGemm's results for the same rows in row-major order.
    void (*q4_0x8Rows)(const uint8_t* rows, int64_t blocks, const void* activations, float* out,
                       int64_t rowBegin, int64_t rowEnd) = nullptr;
    void (*q4_0x8Gemm)(const uint8_t* rows, int64_t blocks, const uint8_t* activations,
                       size_t activationBytes, int tokens, float* out, size_t outStride,
                       int64_t rowBegin, int64_t rowEnd) = nullptr;
    // Q8_0, Q4_0 and Q5_0 rows in RowLayout::Tiles16 (model/row_layout.h; rowBegin and rowEnd
    // multiples of sixteen, at most kTileMaxBlocks blocks), summed in the float order of
    // llama.cpp's AMX kernels (quant::referenceTileOrderDot): out[r] for one token, and out[t *
    // outStride + r] for `tokens` tokens, bit for bit the same. nullptr below the AMX level.
    void (*tileRows)(GgmlType type, const uint8_t* tiles, int64_t blocks, const void* activations,
                     float* out, int64_t rowBegin, int64_t rowEnd) = nullptr;
    void (*tileGemm)(GgmlType type, const uint8_t* tiles, int64_t blocks,
                     const uint8_t* activations, size_t activationBytes, int tokens, float* out,
                     size_t outStride, int64_t rowBegin, int64_t rowEnd) = nullptr;
    // The same for f32 rows: out[t * outStride + r] = matvecF32's row r for x + t * cols.
    void (*gemmF32)(const float* w, int64_t cols, const float* x, int tokens, float* out,
                    size_t outStride, int64_t rowBegin, int64_t rowEnd) = nullptr;
    // scores[h][i] = (queries[h] . key head h / groupSize of slot i) * scale for heads h in
    // [headBegin, headEnd) and slots i in [scoreFirst, min(kept, scoreEnd)), each dot summed as
    // laneDot16: queries [heads][headDim], keyColumns (the keys transposed) [kvDim][keyStride],
    // scores [heads][kept]
    void (*attentionScores)(const AttentionShape& shape, const float* queries,
                            const float* keyColumns, float scale, float* scores, int headBegin,
                            int headEnd) = nullptr;
    // The queries of several tokens against the same gathered keys (a prefill chunk's): for
    // token t < tokens, scores[t] [heads][kept[t]] is, bit for bit, attentionScores' result for
    // queries[t] with shape.kept = kept[t] (each kept[t] <= shape.kept, the gathered slots, and
    // at most kMaxScoreTokens tokens). The keys are read once for all the tokens.
    static constexpr int kMaxScoreTokens = 8;
    void (*attentionScoresTokens)(const AttentionShape& shape, int tokens,
                                  const float* const* queries, const int* kept,
                                  const float* keyColumns, float scale, float* const* scores,
                                  int headBegin, int headEnd) = nullptr;
    // out[h][d] = weights[h] . (value d of head h / groupSize over the slots) for heads in
    // [headBegin, headEnd), summed as laneDot16: weights [heads][kept], valueRows [kept][kvDim],
    // out [heads][headDim]
    void (*attentionValues)(const AttentionShape& shape, const float* weights,
                            const float* valueRows, float* out, int headBegin,
                            int headEnd) = nullptr;
    // The same for several tokens' weights over the same value rows: out[t] is, bit for bit,
    // attentionValues' result for weights[t] [heads][kept[t]] with shape.kept = kept[t] (each
    // kept[t] <= shape.kept, at most kMaxScoreTokens tokens). Each value row is read once.
    void (*attentionValuesTokens)(const AttentionShape& shape, int tokens,
                                  const float* const* weights, const int* kept,
                                  const float* valueRows, float* const* out, int headBegin,
                                  int headEnd) = nullptr;
};

// The table compiled for `isa`; only call its kernels when isaSupported(isa).
const KernelTable& kernelsFor(Isa isa);
// The table of activeIsa().
const KernelTable& kernels();

} // namespace sinkscope
