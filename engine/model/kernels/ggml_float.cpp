// A kernel source (model/kernels/kernel_isa_begin.h): the softmax, SwiGLU and f32 matrix rows of
// model/kernels/ggml_float.h, compiled once per instruction-set level.
#include "model/kernels/kernel_table.h"
#include "model/kernels/prefetch.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "model/kernels/kernel_isa_begin.h"

// After the region opens: compiled for its level.
#include "model/kernels/avx512_fold.h"
#include "model/kernels/ggml_lanes.h"

namespace sinkscope::SINKSCOPE_ISA_NAMESPACE {

namespace {

// The largest of x[n] (n >= 1) as std::max_element finds it (a NaN counts only in x[0]), in
// sixteen running maxima so that it vectorizes: the maximum is exact in any order.
float rowMaximum(const float* x, int n) {
    float lanes[16];
    std::fill_n(lanes, 16, x[0]);
    int start = 0;
    for (; start + 16 <= n; start += 16)
        for (int j = 0; j < 16; ++j)
            lanes[j] = x[start + j] > lanes[j] ? x[start + j] : lanes[j];
    for (int j = 0; start + j < n; ++j)
        lanes[j] = x[start + j] > lanes[j] ? x[start + j] : lanes[j];
    float maximum = lanes[0];
    for (int j = 1; j < 16; ++j)
        maximum = lanes[j] > maximum ? lanes[j] : maximum;
    return maximum;
}

void softmaxRow(float* x, int n) {
    const float maxValue = rowMaximum(x, n);
    double sum = 0;
    int start = 0;
    for (; start + 16 <= n; start += 16) { // whole chunks: a fixed-length loop, vectorized
        float chunk[16];
        for (int j = 0; j < 16; ++j)
            chunk[j] = ggml::vectorExp(x[start + j] - maxValue);
        std::copy_n(chunk, 16, x + start);
        sum += static_cast<double>(ggml::foldLanes16(chunk));
    }
    if (start < n) {
        float chunk[16] = {};
        for (int j = 0; start + j < n; ++j)
            x[start + j] = chunk[j] = ggml::vectorExp(x[start + j] - maxValue);
        sum += static_cast<double>(ggml::foldLanes16(chunk));
    }
    const auto inverse = static_cast<float>(1.0 / sum);
    for (int i = 0; i < n; ++i)
        x[i] *= inverse;
}

void swiglu(float* gate, const float* up, int n) {
    const int vectorEnd = n / 16 * 16;
    for (int i = 0; i < vectorEnd; ++i)
        gate[i] = gate[i] / (1.0f + ggml::vectorExp(-gate[i])) * up[i];
    for (int i = vectorEnd; i < n; ++i)
        gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

// Each row sums as llama.cpp's tinyBLAS F32 kernel (AVX-512) sums it: 16 lanes with fused
// multiply-adds over consecutive 16-value chunks, folded halves first. Four rows at a time share
// each load of x.
void matvecF32(const float* w, int64_t cols, const float* x, float* out, int64_t rowBegin,
               int64_t rowEnd) {
    const int64_t fullChunks = cols / 16 * 16;
    int64_t r = rowBegin;
#if SINKSCOPE_KERNEL_ISA >= 2
    for (; r + 4 <= rowEnd; r += 4) {
        const float* rows = w + static_cast<size_t>(r) * cols;
        prefetchRangeAhead(rows, 4 * static_cast<size_t>(cols) * sizeof(float));
        f32TileInRegisters<4, 1>(rows, cols, x, out + r, 0); // one token: outStride unused
    }
#endif
    for (; r + 4 <= rowEnd; r += 4) {
        const float* rows = w + static_cast<size_t>(r) * cols;
        prefetchRangeAhead(rows, 4 * static_cast<size_t>(cols) * sizeof(float));
        float lanes[4][16] = {};
        for (int64_t c = 0; c < fullChunks; c += 16)
            for (int k = 0; k < 4; ++k)
                for (int j = 0; j < 16; ++j)
                    lanes[k][j] = std::fma(rows[k * cols + c + j], x[c + j], lanes[k][j]);
        for (int k = 0; k < 4; ++k) {
            for (int j = 0; fullChunks + j < cols; ++j)
                lanes[k][j] =
                    std::fma(rows[k * cols + fullChunks + j], x[fullChunks + j], lanes[k][j]);
            out[r + k] = ggml::foldLanes16(lanes[k]);
        }
    }
    for (; r < rowEnd; ++r)
        out[r] = ggml::laneDot16(w + static_cast<size_t>(r) * cols, x, static_cast<int>(cols));
}

} // namespace

#include "model/kernels/kernel_isa_end.h"

void fillFloatKernels(KernelTable& table) {
    table.foldLanes8 = ggml::foldLanes8;
    table.foldLanes16 = ggml::foldLanes16;
    table.laneDot16 = ggml::laneDot16;
    table.vectorExp = ggml::vectorExp;
    table.softmaxRow = softmaxRow;
    table.swiglu = swiglu;
    table.matvecF32 = matvecF32;
}

} // namespace sinkscope::SINKSCOPE_ISA_NAMESPACE
