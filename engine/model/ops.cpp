#include "model/ops.h"

#include "gguf/dequantize.h"
#include "gguf/ggml_types.h"
#include "model/ggml_float.h"
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

// Each row sums as llama.cpp's tinyBLAS F32 kernel (AVX-512) sums it: 16 lanes with fused
// multiply-adds over consecutive 16-value chunks, folded halves first (model/ggml_float.h). Four
// rows at a time share each load of x.
void matvecF32(const Matrix& w, const float* x, float* out) {
    const int cols = w.cols;
    const int fullChunks = cols / 16 * 16;
    int r = 0;
    for (; r + 4 <= w.rows; r += 4) {
        const float* rows = w.data + static_cast<size_t>(r) * cols;
        float lanes[4][16] = {};
        for (int c = 0; c < fullChunks; c += 16)
            for (int k = 0; k < 4; ++k)
                for (int j = 0; j < 16; ++j)
                    lanes[k][j] = std::fma(rows[static_cast<size_t>(k) * cols + c + j], x[c + j],
                                           lanes[k][j]);
        for (int k = 0; k < 4; ++k) {
            for (int j = 0; fullChunks + j < cols; ++j)
                lanes[k][j] = std::fma(rows[static_cast<size_t>(k) * cols + fullChunks + j],
                                       x[fullChunks + j], lanes[k][j]);
            out[r + k] = ggml::foldLanes16(lanes[k]);
        }
    }
    for (; r < w.rows; ++r)
        out[r] = ggml::laneDot16(w.data + static_cast<size_t>(r) * cols, x, cols);
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
    double sumSquares = 0; // as ggml: each square in float, their sum in double
    for (int i = 0; i < n; ++i)
        sumSquares += static_cast<double>(x[i] * x[i]);
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
            // ggml's rotation as GCC compiles it: the first product fused into the sum
            head[a] = std::fma(x0, c, -(x1 * s));
            head[b] = std::fma(x0, s, x1 * c);
            theta *= thetaScale;
        }
    }
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

} // namespace sinkscope
