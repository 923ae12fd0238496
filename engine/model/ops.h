// Numeric kernels of the forward pass. Each fast kernel has a scalar reference beside it
// (namespace ref) that tests compare against.
#pragma once

#include "model/model.h"

#include <cstdint>
#include <cstring>

namespace sinkscope {

// a . b over n floats. Inline so that attention's short head-sized dots cost no call; eight lanes
// of one vector accumulate independently (GCC/Clang vector extension: AVX, or two SSE registers).
inline float dot(const float* a, const float* b, int n) {
    using Lanes = float __attribute__((vector_size(32)));
    Lanes acc = {};
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        Lanes x, y;
        std::memcpy(&x, a + i, sizeof x);
        std::memcpy(&y, b + i, sizeof y);
        acc += x * y;
    }
    float sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for (; i < n; ++i)
        sum += a[i] * b[i];
    return sum;
}

// y[n] += a * x[n]
inline void axpy(float a, const float* x, float* y, int n) {
    for (int i = 0; i < n; ++i)
        y[i] += a * x[i];
}

// out[rows] = W[rows][cols] . x[cols]; quantized rows as ggml computes them (x quantized once to
// the type's activation blocks, integer dots per block: model/quant_dot.h)
void matvec(const Matrix& w, const float* x, float* out);
// out[cols] = row `row` of W, as f32 (an embedding lookup)
void matrixRow(const Matrix& w, int row, float* out);
// out[n] = x[n] / sqrt(mean(x^2) + eps) * weight[n]
void rmsNorm(const float* x, const float* weight, int n, float eps, float* out);
// Rotates each head of vec ([heads][headDim]) in place to `position`. freqFactors
// ([headDim / 2], or nullptr) divide each pair's angle, as ggml applies Llama-3's rope_freqs.
void rope(float* vec, int heads, int headDim, int64_t position, float base, RopeStyle style,
          const float* freqFactors = nullptr);
// In place: x[n] -> softmax(x)
void softmax(float* x, int n);
// In place: x[n] -> exp(x), within 2 ulp of std::exp over [-87, 88] (vectorised polynomial)
void expInPlace(float* x, int n);
// In place: every value rounded to the nearest f16 and back (ggml's f16 attention operands)
void roundToHalf(float* values, size_t count);
// gate[n] = silu(gate) * up
void swiglu(float* gate, const float* up, int n);

namespace ref {
void matvec(const Matrix& w, const float* x, float* out);
float dot(const float* a, const float* b, int n);
void roundToHalf(float* values, size_t count);
} // namespace ref

} // namespace sinkscope
