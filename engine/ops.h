// Numeric kernels of the forward pass. Each fast kernel has a scalar reference beside it
// (namespace ref) that tests compare against.
#pragma once

#include "model.h"

#include <cstdint>

namespace sinkscope {

// out[rows] = W[rows][cols] . x[cols]
void matvec(const Matrix& w, const float* x, float* out);
float dot(const float* a, const float* b, int n);
// out[n] = x[n] / sqrt(mean(x^2) + eps) * weight[n]
void rmsNorm(const float* x, const float* weight, int n, float eps, float* out);
// Rotates each head of vec ([heads][headDim]) in place to `position`.
void rope(float* vec, int heads, int headDim, int64_t position, float base, RopeStyle style);
// In place: x[n] -> softmax(x)
void softmax(float* x, int n);
// gate[n] = silu(gate) * up
void swiglu(float* gate, const float* up, int n);

namespace ref {
void matvec(const Matrix& w, const float* x, float* out);
float dot(const float* a, const float* b, int n);
} // namespace ref

} // namespace sinkscope
