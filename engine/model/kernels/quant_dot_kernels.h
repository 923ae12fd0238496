// The per-type dot kernels behind quantDot (model/quant_dot.h): the scalar references
// (model/kernels/quant_dot_ref.cpp); the default kernels (model/kernels/quant_dot_fast.cpp) are in
// each instruction-set level's KernelTable (model/kernels/kernel_table.h).
#pragma once

#include "gguf/ggml_types.h"
#include "model/kernels/cpu_isa.h"
#include "model/kernels/prefetch.h"

#include <cstddef>
#include <cstdint>

namespace sinkscope::quant {

// Dot of `blocks` weight blocks with as many activation blocks (for F32 / F16 / BF16 a block is
// one value). Both rows unaligned.
using DotKernel = float (*)(const void* weights, const void* activations, int64_t blocks);

// The rows [rowBegin, rowEnd) of a matrix of one type, each `blocks` blocks, rowBytes apart:
// out[r] = Kernel(row r, activations). With RowStreams::Grouped each row's bytes are asked for
// kPrefetchBytes ahead as it starts (model/kernels/prefetch.h); with Single the hardware
// prefetcher follows the one stream alone.
template <DotKernel Kernel>
void dotRows(const uint8_t* rows, size_t rowBytes, int64_t blocks, const void* activations,
             float* out, int64_t rowBegin, int64_t rowEnd) {
    const bool prefetch = activeRowStreams() == RowStreams::Grouped;
    for (int64_t r = rowBegin; r < rowEnd; ++r) {
        const uint8_t* row = rows + static_cast<size_t>(r) * rowBytes;
        if (prefetch) prefetchRangeAhead(row, rowBytes);
        out[r] = Kernel(row, activations, blocks);
    }
}

// nullptr for a type without a dot (quantDotSupported false).
DotKernel referenceDotKernel(GgmlType weightType);

// The dot of a Q8_0, Q4_0 or Q5_0 row (row-major blocks) with Q8_0 activations in the float order
// of llama.cpp's AMX kernels, which the RowLayout::Tiles16 kernels follow (model/row_layout.h):
// each block's exact integer sum, then sum = fma(float(integer sum), weight scale * activation
// scale, sum) from 0, block after block.
float referenceTileOrderDot(GgmlType weightType, const void* weights, const void* activations,
                            int64_t blocks);

} // namespace sinkscope::quant
