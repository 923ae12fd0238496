// A kernel source (model/kernels/kernel_isa_begin.h): the matrix-matrix products of batched
// prefill built on the level's row kernels. A block of rows small enough to stay in the core's
// caches runs against every token before the next block is read, so the weights cross the memory
// bus once per chunk instead of once per token; each result is the row kernel's own, so batched
// and token-by-token prefill compute the same bits.
#include "gguf/quant_blocks.h"
#include "model/kernels/kernel_table.h"
#include "model/row_layout.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "model/kernels/kernel_isa_begin.h"

// After the region opens: compiled for its level.
#include "model/kernels/avx512_fold.h"
#include "model/kernels/ggml_lanes.h"

namespace sinkscope::SINKSCOPE_ISA_NAMESPACE {

namespace {

using QuantRows = decltype(KernelTable::quantRows);
using Q4_0x8Rows = decltype(KernelTable::q4_0x8Rows);
using F32Rows = decltype(KernelTable::matvecF32);

// The level's row kernels (set once, when its table is built).
QuantRows g_quantRows = nullptr;
Q4_0x8Rows g_q4_0x8Rows = nullptr;
F32Rows g_f32Rows = nullptr;

// Rows per block: about this many weight bytes, in whole four-row groups (the row kernels' unit).
constexpr size_t kBlockBytes = 64 * 1024;

int64_t rowsPerBlock(size_t rowBytes) {
    const auto rows = static_cast<int64_t>(kBlockBytes / std::max<size_t>(rowBytes, 1));
    return std::max<int64_t>(4, rows / 4 * 4);
}

void blockedQuantGemm(GgmlType type, const uint8_t* rows, size_t rowBytes, int64_t blocks,
                      const uint8_t* activations, size_t activationBytes, int tokens, float* out,
                      size_t outStride, int64_t rowBegin, int64_t rowEnd) {
    const int64_t step = rowsPerBlock(rowBytes);
    for (int64_t begin = rowBegin; begin < rowEnd; begin += step) {
        const int64_t end = std::min(rowEnd, begin + step);
        for (int t = 0; t < tokens; ++t)
            g_quantRows(type, rows, rowBytes, blocks, activations + t * activationBytes,
                        out + t * outStride, begin, end);
    }
}

// The same for Q4_0 rows in RowLayout::Q4_0x8, in whole runs of eight rows.
void blockedQ4_0x8Gemm(const uint8_t* rows, int64_t blocks, const uint8_t* activations,
                       size_t activationBytes, int tokens, float* out, size_t outStride,
                       int64_t rowBegin, int64_t rowEnd) {
    const int64_t rowBytes = blocks * static_cast<int64_t>(sizeof(quant::BlockQ4_0));
    const int64_t runs =
        std::max<int64_t>(1, rowsPerBlock(static_cast<size_t>(rowBytes)) / kQ4_0x8Rows);
    const int64_t step = runs * kQ4_0x8Rows;
    for (int64_t begin = rowBegin; begin < rowEnd; begin += step) {
        const int64_t end = std::min(rowEnd, begin + step);
        for (int t = 0; t < tokens; ++t)
            g_q4_0x8Rows(rows, blocks, activations + t * activationBytes, out + t * outStride,
                         begin, end);
    }
}

// F32 rows: kRows rows by kF32Tokens tokens at once, each output's sixteen lanes summed exactly as
// matvecF32 sums a row (fused multiply-adds over consecutive 16-value chunks, the tail into the
// first lanes, then the fold), so that each weight and input load serves several outputs.
constexpr int kRows = 4;
constexpr int kF32Tokens = SINKSCOPE_KERNEL_ISA >= 2 ? 4 : 2; // AVX-512 has 32 registers

#if SINKSCOPE_KERNEL_ISA >= 2
// The same sums with the outputs' lanes in registers (model/kernels/avx512_fold.h).
void f32Tile(const float* w, int64_t cols, const float* x, float* out, size_t outStride) {
    f32TileInRegisters<kRows, kF32Tokens>(w, cols, x, out, outStride);
}
#else
void f32Tile(const float* w, int64_t cols, const float* x, float* out, size_t outStride) {
    const int64_t fullChunks = cols / 16 * 16;
    float lanes[kRows][kF32Tokens][16] = {};
    for (int64_t c = 0; c < fullChunks; c += 16)
        for (int k = 0; k < kRows; ++k)
            for (int t = 0; t < kF32Tokens; ++t)
                for (int j = 0; j < 16; ++j)
                    lanes[k][t][j] =
                        std::fma(w[k * cols + c + j], x[t * cols + c + j], lanes[k][t][j]);
    for (int k = 0; k < kRows; ++k)
        for (int t = 0; t < kF32Tokens; ++t) {
            for (int j = 0; fullChunks + j < cols; ++j)
                lanes[k][t][j] = std::fma(w[k * cols + fullChunks + j],
                                          x[t * cols + fullChunks + j], lanes[k][t][j]);
            out[t * outStride + k] = ggml::foldLanes16(lanes[k][t]);
        }
}
#endif

void blockedGemmF32(const float* w, int64_t cols, const float* x, int tokens, float* out,
                    size_t outStride, int64_t rowBegin, int64_t rowEnd) {
    const int64_t step = rowsPerBlock(static_cast<size_t>(cols) * sizeof(float));
    const int pairedTokens = tokens / kF32Tokens * kF32Tokens;
    for (int64_t begin = rowBegin; begin < rowEnd; begin += step) {
        const int64_t end = std::min(rowEnd, begin + step);
        const int64_t grouped = begin + (end - begin) / kRows * kRows;
        for (int t = 0; t < pairedTokens; t += kF32Tokens)
            for (int64_t r = begin; r < grouped; r += kRows)
                f32Tile(w + r * cols, cols, x + t * cols, out + t * outStride + r, outStride);
        for (int t = 0; t < tokens; ++t) {
            const bool tiled = t < pairedTokens;
            g_f32Rows(w, cols, x + t * cols, out + t * outStride, tiled ? grouped : begin, end);
        }
    }
}

} // namespace

#include "model/kernels/kernel_isa_end.h"

// After the row kernels are in the table.
void fillGemmKernels(KernelTable& table) {
    g_quantRows = table.quantRows;
    g_q4_0x8Rows = table.q4_0x8Rows;
    g_f32Rows = table.matvecF32;
    table.quantGemm = blockedQuantGemm;
    table.q4_0x8Gemm = blockedQ4_0x8Gemm;
    table.gemmF32 = blockedGemmF32;
}

} // namespace sinkscope::SINKSCOPE_ISA_NAMESPACE
