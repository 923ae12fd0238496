#include "model/ops.h"

#include "gguf/dequantize.h"
#include "gguf/ggml_types.h"
#include "model/quant_dot.h"

#ifdef __F16C__
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstring>

namespace sinkscope {

namespace ref {

void roundToHalf(float* values, size_t count) {
    for (size_t i = 0; i < count; ++i)
        values[i] = fp16ToFp32(fp32ToFp16(values[i]));
}

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

namespace {

// Four rows at a time share each load of x and one horizontal reduction step.
void matvecF32(const Matrix& w, const float* x, float* out) {
    using Lanes = float __attribute__((vector_size(32)));
    const auto load = [](const float* p) {
        Lanes v;
        std::memcpy(&v, p, sizeof v);
        return v;
    };
    const auto sum = [](Lanes v) {
        return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
    };
    const int cols = w.cols;
    const int vectorCols = cols / 8 * 8;
    int r = 0;
    for (; r + 4 <= w.rows; r += 4) {
        const float* row0 = w.data + static_cast<size_t>(r) * cols;
        const float* row1 = row0 + cols;
        const float* row2 = row1 + cols;
        const float* row3 = row2 + cols;
        Lanes acc0 = {}, acc1 = {}, acc2 = {}, acc3 = {};
        for (int c = 0; c < vectorCols; c += 8) {
            const Lanes xs = load(x + c);
            acc0 += load(row0 + c) * xs;
            acc1 += load(row1 + c) * xs;
            acc2 += load(row2 + c) * xs;
            acc3 += load(row3 + c) * xs;
        }
        float s0 = sum(acc0), s1 = sum(acc1), s2 = sum(acc2), s3 = sum(acc3);
        for (int c = vectorCols; c < cols; ++c) {
            s0 += row0[c] * x[c];
            s1 += row1[c] * x[c];
            s2 += row2[c] * x[c];
            s3 += row3[c] * x[c];
        }
        out[r] = s0;
        out[r + 1] = s1;
        out[r + 2] = s2;
        out[r + 3] = s3;
    }
    for (; r < w.rows; ++r)
        out[r] = dot(w.data + static_cast<size_t>(r) * cols, x, cols);
}

} // namespace

void matvec(const Matrix& w, const float* x, float* out) {
    if (w.data) {
        matvecF32(w, x, out);
        return;
    }
    // The activations' blocks, reused from call to call on this thread.
    thread_local std::vector<std::byte> activations;
    quantMatvec(w.type, w.quantized, w.rows, w.cols, x, out, activations);
}

void matrixRow(const Matrix& w, int row, float* out) {
    if (w.data)
        std::copy_n(w.data + static_cast<size_t>(row) * w.cols, w.cols, out);
    else
        dequantizeRow(w.type, w.quantized + static_cast<size_t>(row) * w.rowBytes, out, w.cols);
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
void rope(float* vec, int heads, int headDim, int64_t position, float base, RopeStyle style,
          const float* freqFactors) {
    const int half = headDim / 2;
    const float thetaScale = std::pow(base, -2.0f / static_cast<float>(headDim));
    for (int h = 0; h < heads; ++h) {
        float* head = vec + static_cast<size_t>(h) * headDim;
        float theta = static_cast<float>(position);
        for (int i = 0; i < half; ++i) {
            const float angle = freqFactors ? theta / freqFactors[i] : theta;
            const float c = std::cos(angle);
            const float s = std::sin(angle);
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

namespace {

using Lanes = float __attribute__((vector_size(32)));
using IntLanes = int32_t __attribute__((vector_size(32)));

// exp(x) = 2^n * e^r with n = round(x / ln 2) and |r| <= ln(2)/2; e^r by its degree-6 Taylor-like
// minimax polynomial (Cephes' coefficients), 2^n built in the exponent bits.
Lanes expLanes(Lanes x) {
    x = x < -87.3f ? Lanes{} - 87.3f : x;
    x = x > 88.3f ? Lanes{} + 88.3f : x;
    const Lanes scaled = x * 1.44269504088896341f + 0.5f;
    Lanes n = __builtin_convertvector(__builtin_convertvector(scaled, IntLanes), Lanes);
    n = n > scaled ? n - 1.0f : n; // floor
    x = x - n * 0.693359375f - n * -2.12194440e-4f;
    Lanes p = Lanes{} + 1.9875691500e-4f;
    p = p * x + 1.3981999507e-3f;
    p = p * x + 8.3334519073e-3f;
    p = p * x + 4.1665795894e-2f;
    p = p * x + 1.6666665459e-1f;
    p = p * x + 5.0000001201e-1f;
    p = p * x * x + x + 1.0f;
    const IntLanes bits = (__builtin_convertvector(n, IntLanes) + 127) << 23;
    Lanes scale;
    std::memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

} // namespace

void expInPlace(float* x, int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        Lanes v;
        std::memcpy(&v, x + i, sizeof v);
        v = expLanes(v);
        std::memcpy(x + i, &v, sizeof v);
    }
    if (i < n) {
        Lanes v = {};
        std::memcpy(&v, x + i, sizeof(float) * static_cast<size_t>(n - i));
        v = expLanes(v);
        std::memcpy(x + i, &v, sizeof(float) * static_cast<size_t>(n - i));
    }
}

void softmax(float* x, int n) {
    const float maxValue = *std::max_element(x, x + n);
    for (int i = 0; i < n; ++i)
        x[i] -= maxValue;
    expInPlace(x, n);
    double sum = 0;
    for (int i = 0; i < n; ++i)
        sum += x[i];
    const float inv = static_cast<float>(1.0 / sum);
    for (int i = 0; i < n; ++i)
        x[i] *= inv;
}

// F16C converts eight values at a time in hardware, with the same round-to-nearest-even.
void roundToHalf(float* values, size_t count) {
    size_t i = 0;
#ifdef __F16C__
    for (; i + 8 <= count; i += 8) {
        const __m128i halves =
            _mm256_cvtps_ph(_mm256_loadu_ps(values + i), _MM_FROUND_TO_NEAREST_INT);
        _mm256_storeu_ps(values + i, _mm256_cvtph_ps(halves));
    }
#endif
    ref::roundToHalf(values + i, count - i);
}

void swiglu(float* gate, const float* up, int n) {
    for (int i = 0; i < n; ++i)
        gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

} // namespace sinkscope
