#include "model/ops.h"

#include "gguf/dequantize.h"
#include "gguf/ggml_types.h"
#include "gguf/quant_blocks.h"
#include "model/kernels/kernel_table.h"
#include "model/quant_dot.h"

#include <immintrin.h>

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

void matvec(const Matrix& w, const float* x, float* out, ThreadPool* pool) {
    if (w.data) {
        const auto rows = [&](int64_t begin, int64_t end) {
            kernels().matvecF32(w.data, w.cols, x, out, begin, end);
        };
        if (pool)
            pool->forRanges(w.rows, 4, rows, int64_t{w.rows} * w.cols); // four-row groups
        else
            rows(0, w.rows);
        return;
    }
    // The activations' blocks, reused from call to call on this thread.
    thread_local std::vector<std::byte> activations;
    quantMatvec(w.type, w.quantized, w.rows, w.cols, x, out, activations, pool, w.layout);
}

namespace {

// An F32 matrix (F16 / BF16 converted at load) over the tokens; the rows split among the threads.
void matmatF32(const Matrix& w, const float* x, int tokens, float* out, ThreadPool* pool) {
    const auto rows = [&](int64_t begin, int64_t end) {
        kernels().gemmF32(w.data, w.cols, x, tokens, out, static_cast<size_t>(w.rows), begin, end);
    };
    if (pool)
        pool->forRanges(w.rows, 4, rows, int64_t{w.rows} * w.cols * tokens);
    else
        rows(0, w.rows);
}

} // namespace

void matmat(const Matrix& w, const float* x, int tokens, float* out, ThreadPool* pool) {
    const Product product{&w, out};
    matmatEach(std::span(&product, 1), x, tokens, pool);
}

void matmatEach(std::span<const Product> products, const float* x, int tokens, ThreadPool* pool) {
    thread_local std::vector<std::byte> activations; // [tokens][activation row bytes]
    size_t activationBytes = 0;
    const Matrix* quantizedFor = nullptr; // the matrix whose activation type they hold
    for (const Product& product : products) {
        const Matrix& w = *product.w;
        if (w.data) {
            matmatF32(w, x, tokens, product.out, pool);
            continue;
        }
        if (!quantizedFor || activationType(quantizedFor->type) != activationType(w.type) ||
            quantizedFor->cols != w.cols) {
            activationBytes = quantizeTokens(w.type, x, tokens, w.cols, activations, pool);
            quantizedFor = &w;
        }
        quantMatmatPrepared(w.type, w.quantized, w.rows, w.cols, activations.data(),
                            activationBytes, tokens, product.out, pool, w.layout);
    }
}

void matrixRow(const Matrix& w, int row, float* out) {
    if (w.data) {
        std::copy_n(w.data + static_cast<size_t>(row) * w.cols, w.cols, out);
    } else if (w.layout == RowLayout::Q4_0x8) {
        const int blocks = w.cols / 32;
        for (int b = 0; b < blocks; ++b)
            dequantizeRow(GgmlType::Q4_0, w.quantized + q4_0x8Offset(blocks, row, b), out + 32 * b,
                          32);
    } else if (w.layout == RowLayout::Tiles16) {
        const int blocks = w.cols / 32;
        uint8_t block[sizeof(quant::BlockQ8_0)];
        for (int b = 0; b < blocks; ++b) {
            untileBlock(w.type, w.quantized, blocks, row, b, block);
            dequantizeRow(w.type, block, out + 32 * b, 32);
        }
    } else {
        dequantizeRow(w.type, w.quantized + static_cast<size_t>(row) * w.rowBytes, out, w.cols);
    }
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
void ropeAngles(int headDim, int64_t position, float base, const float* freqFactors, float* cosines,
                float* sines) {
    const float thetaScale = std::pow(base, -2.0f / static_cast<float>(headDim));
    float theta = static_cast<float>(position);
    for (int i = 0; i < headDim / 2; ++i) {
        const float angle = freqFactors ? theta / freqFactors[i] : theta;
        cosines[i] = std::cos(angle);
        sines[i] = std::sin(angle);
        theta *= thetaScale;
    }
}

void applyRope(float* vec, int heads, int headDim, RopeStyle style, const float* cosines,
               const float* sines) {
    const int half = headDim / 2;
    for (int h = 0; h < heads; ++h) {
        float* head = vec + static_cast<size_t>(h) * headDim;
        for (int i = 0; i < half; ++i) {
            const int a = style == RopeStyle::AdjacentPairs ? 2 * i : i;
            const int b = style == RopeStyle::AdjacentPairs ? 2 * i + 1 : i + half;
            const float x0 = head[a];
            const float x1 = head[b];
            // ggml's rotation as GCC compiles it: the first product fused into the sum
            head[a] = std::fma(x0, cosines[i], -(x1 * sines[i]));
            head[b] = std::fma(x0, sines[i], x1 * cosines[i]);
        }
    }
}

void rope(float* vec, int heads, int headDim, int64_t position, float base, RopeStyle style,
          const float* freqFactors) {
    std::vector<float> angles(static_cast<size_t>(headDim / 2) * 2);
    float* cosines = angles.data();
    float* sines = angles.data() + headDim / 2;
    ropeAngles(headDim, position, base, freqFactors, cosines, sines);
    applyRope(vec, heads, headDim, style, cosines, sines);
}

namespace {

// F16C converts eight values at a time in hardware, with the same round-to-nearest-even; the
// values past the last eight go through the reference. Only called where the CPU has F16C.
__attribute__((target("avx,f16c"))) size_t roundToHalfF16c(float* values, size_t count) {
    size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        const __m128i halves =
            _mm256_cvtps_ph(_mm256_loadu_ps(values + i), _MM_FROUND_TO_NEAREST_INT);
        _mm256_storeu_ps(values + i, _mm256_cvtph_ps(halves));
    }
    return i;
}

} // namespace

void roundToHalf(float* values, size_t count) {
    const size_t done = kernels().isa == Isa::Portable ? 0 : roundToHalfF16c(values, count);
    ref::roundToHalf(values + done, count - done);
}

} // namespace sinkscope
