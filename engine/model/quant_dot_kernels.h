// The per-type dot kernels behind quantDot (model/quant_dot.h): the scalar references
// (model/quant_dot_ref.cpp) and the vectorizable default kernels (model/quant_dot_fast.cpp).
#pragma once

#include "gguf/ggml_types.h"

#include <cstdint>

namespace sinkscope::quant {

// Dot of `blocks` weight blocks with as many activation blocks (for F32 / F16 / BF16 a block is
// one value). Both rows unaligned.
using DotKernel = float (*)(const void* weights, const void* activations, int64_t blocks);

// nullptr for a type without a dot (quantDotSupported false).
DotKernel referenceDotKernel(GgmlType weightType);
DotKernel fastDotKernel(GgmlType weightType);

} // namespace sinkscope::quant
