#include "ops.h"

#include <algorithm>
#include <cmath>

namespace sinkscope {

namespace ref {

float dot(const float* a, const float* b, int n) {
    float sum = 0;
    for (int i = 0; i < n; ++i)
        sum += a[i] * b[i];
    return sum;
}

void matvec(const Matrix& w, const float* x, float* out) {
    for (int r = 0; r < w.rows; ++r)
        out[r] = dot(w.data + static_cast<size_t>(r) * w.cols, x, w.cols);
}

} // namespace ref

void matvec(const Matrix& w, const float* x, float* out) {
    for (int r = 0; r < w.rows; ++r)
        out[r] = dot(w.data + static_cast<size_t>(r) * w.cols, x, w.cols);
}

void rmsNorm(const float* x, const float* weight, int n, float eps, float* out) {
    double sumSquares = 0; // ggml accumulates the mean of squares in double-like precision
    for (int i = 0; i < n; ++i)
        sumSquares += static_cast<double>(x[i]) * x[i];
    const float scale = 1.0f / std::sqrt(static_cast<float>(sumSquares / n) + eps);
    for (int i = 0; i < n; ++i)
        out[i] = x[i] * scale * weight[i];
}

// theta_i = position * base^(-2i/headDim). The pair rotated is (x[2i], x[2i+1]) for adjacent
// pairs, (x[i], x[i + headDim/2]) for the half-split (NEOX) form.
void rope(float* vec, int heads, int headDim, int64_t position, float base, RopeStyle style) {
    const int half = headDim / 2;
    const float thetaScale = std::pow(base, -2.0f / static_cast<float>(headDim));
    for (int h = 0; h < heads; ++h) {
        float* head = vec + static_cast<size_t>(h) * headDim;
        float theta = static_cast<float>(position);
        for (int i = 0; i < half; ++i) {
            const float c = std::cos(theta);
            const float s = std::sin(theta);
            const int a = style == RopeStyle::AdjacentPairs ? 2 * i : i;
            const int b = style == RopeStyle::AdjacentPairs ? 2 * i + 1 : i + half;
            const float x0 = head[a];
            const float x1 = head[b];
            head[a] = x0 * c - x1 * s;
            head[b] = x0 * s + x1 * c;
            theta *= thetaScale;
        }
    }
}

void softmax(float* x, int n) {
    const float maxValue = *std::max_element(x, x + n);
    double sum = 0;
    for (int i = 0; i < n; ++i) {
        x[i] = std::exp(x[i] - maxValue);
        sum += x[i];
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (int i = 0; i < n; ++i)
        x[i] *= inv;
}

void swiglu(float* gate, const float* up, int n) {
    for (int i = 0; i < n; ++i)
        gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

} // namespace sinkscope
