// Numeric kernels of the forward pass. Each fast kernel has a scalar reference beside it
// (namespace ref) that tests compare against.
#pragma once

#include "model/model.h"
#include "model/thread_pool.h"

#include <cstdint>
#include <cstring>
#include <span>

namespace sinkscope {

// y[n] += a * x[n]
inline void axpy(float a, const float* x, float* y, int n) {
    for (int i = 0; i < n; ++i)
        y[i] += a * x[i];
}

// out[rows] = W[rows][cols] . x[cols]; quantized rows as ggml computes them (x quantized once to
// the type's activation blocks, integer dots per block: model/quant_dot.h). With a pool, the rows
// are split among its threads; every row's result is the same either way.
void matvec(const Matrix& w, const float* x, float* out, ThreadPool* pool = nullptr);
// The product for a block of tokens: out[t][rows] = W . x[t] for t in [0, tokens), x
// [tokens][cols], out [tokens][rows]; each token's result is matvec's, bit for bit.
void matmat(const Matrix& w, const float* x, int tokens, float* out, ThreadPool* pool = nullptr);
// Several products of one input (q, k and v; gate and up), each as matmat computes it: the input
// is quantized once for every run of matrices that share an activation type.
struct Product {
    const Matrix* w = nullptr;
    float* out = nullptr; // [tokens][w->rows]
};
void matmatEach(std::span<const Product> products, const float* x, int tokens,
                ThreadPool* pool = nullptr);
// out[cols] = row `row` of W, as f32 (an embedding lookup)
void matrixRow(const Matrix& w, int row, float* out);
// out[n] = x[n] / sqrt(mean(x^2) + eps) * weight[n]
void rmsNorm(const float* x, const float* weight, int n, float eps, float* out);
// Rotates each head of vec ([heads][headDim]) in place to `position`. freqFactors
// ([headDim / 2], or nullptr) divide each pair's angle, as ggml applies Llama-3's rope_freqs.
void rope(float* vec, int heads, int headDim, int64_t position, float base, RopeStyle style,
          const float* freqFactors = nullptr);
// rope() in two steps, so that a position's angles are computed once for every head of every
// layer: cosines[headDim / 2] and sines[headDim / 2] of each pair's angle, then the rotation.
void ropeAngles(int headDim, int64_t position, float base, const float* freqFactors, float* cosines,
                float* sines);
void applyRope(float* vec, int heads, int headDim, RopeStyle style, const float* cosines,
               const float* sines);
// In place: every value rounded to the nearest f16 and back (ggml's f16 attention operands)
void roundToHalf(float* values, size_t count);

namespace ref {
void matvec(const Matrix& w, const float* x, float* out);
float dot(const float* a, const float* b, int n);
void roundToHalf(float* values, size_t count);
} // namespace ref

} // namespace sinkscope
