// Dot products of weight rows kept in their ggml type with activations, computed as ggml's CPU
// backend computes them: the f32 activations are first quantized (or converted) to the weight
// type's vec_dot_type, then each block's integer products are summed exactly and scaled.
//
//   weight type                        activation type (ggml's vec_dot_type)
//   F32                                F32 (a float dot)
//   F16, BF16                          F16, BF16 (round to nearest even, then a float dot)
//   Q4_0, Q5_0, Q8_0, IQ4_NL           Q8_0
//   Q4_1, Q5_1                         Q8_1 (its f16 sums carry the weights' mins)
//   Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS   Q8_K (its block sums carry the mins)
//
// The activations are quantized as ggml's x86-64 build quantizes them (Q8_0 / Q8_1: 127 / amax,
// rounded half to even). The default kernels (model/kernels/quant_dot_fast.cpp) sum the exact block
// integers in the float order of ggml's x86-64 kernels (AVX2 vec_dot, llamafile's tinyBLAS, the
// repacked Q4_0 kernels), so their results are llama.cpp's bit for bit on every x86-64 CPU.
// ref:: holds one scalar reference per weight type that follows ggml's portable C kernel
// (ggml_vec_dot_*) step for step; the two agree to about 5e-8 of the sum of |w a|.
#pragma once

#include "gguf/ggml_types.h"
#include "model/row_layout.h"
#include "model/thread_pool.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sinkscope {

// True for the weight types above (every supported type but Q8_1 and Q8_K, which ggml only uses
// for activations).
bool quantDotSupported(GgmlType weightType);
// The activation type for `weightType`; throws std::invalid_argument when !quantDotSupported.
GgmlType activationType(GgmlType weightType);

// dst = x[n] in activationType(weightType): ggmlByteSize(activationType(weightType), n) bytes.
// n must be a multiple of the weight type's block size (throws std::invalid_argument).
void quantizeActivations(GgmlType weightType, const float* x, void* dst, int64_t n);

// The dot of one weight row (n values of weightType) with one activation row (n values in
// activationType(weightType), e.g. from quantizeActivations). Throws std::invalid_argument for
// an unsupported type or an n that is not a multiple of the block size.
float quantDot(GgmlType weightType, const void* weightRow, const void* activationRow, int64_t n);

// out[rows] = W[rows][cols] . x[cols]: W in `type`, ggmlByteSize(type, cols) bytes per row, in
// `layout` (model/row_layout.h; Q4_0x8 needs Q4_0 and canRegroupQ4_0, Tiles16 canTile and the
// AMX kernels, else throws std::invalid_argument), unaligned. x is quantized once into `scratch`
// (resized as needed, reusable across calls), then each row is one quantDot; with a pool, the rows
// are split among its threads. RowMajor and Q4_0x8 give the same bits; Tiles16 sums in the order of
// llama.cpp's AMX kernels.
void quantMatvec(GgmlType type, const void* w, int64_t rows, int64_t cols, const float* x,
                 float* out, std::vector<std::byte>& scratch, ThreadPool* pool = nullptr,
                 RowLayout layout = RowLayout::RowMajor);

// The product for a block of tokens (batched prefill; out[t][rows] = W . x[t], each result
// quantMatvec's for that token, bit for bit) in two steps, so that several matrices of one
// activation type share the input's quantization: x[tokens][cols] quantized into scratch
// ([tokens][activation bytes]; returns the bytes of one token's row), then the product from those
// activations, out [tokens][rows].
size_t quantizeTokens(GgmlType type, const float* x, int tokens, int64_t cols,
                      std::vector<std::byte>& scratch, ThreadPool* pool = nullptr);
void quantMatmatPrepared(GgmlType type, const void* w, int64_t rows, int64_t cols,
                         const std::byte* activations, size_t activationBytes, int tokens,
                         float* out, ThreadPool* pool = nullptr,
                         RowLayout layout = RowLayout::RowMajor);

namespace ref {
float quantDot(GgmlType weightType, const void* weightRow, const void* activationRow, int64_t n);
} // namespace ref

} // namespace sinkscope
