// The AVX-512 levels' F32 products with their lanes in registers (model/kernels/gemm_kernels.cpp,
// model/kernels/ggml_float.cpp): ggml::foldLanes16 of a 512-bit register, and a tile of rows by
// tokens summed as ggml::laneDot16 sums each. Include it after
// model/kernels/kernel_isa_begin.h, so that each copy is compiled for its own level; the source
// includes <immintrin.h>, <cstddef> and <cstdint> before the region opens. The other levels have
// none.
#pragma once

#ifndef SINKSCOPE_ISA_NAMESPACE
#error "include model/kernels/avx512_fold.h after model/kernels/kernel_isa_begin.h"
#endif

#if SINKSCOPE_KERNEL_ISA >= 2

namespace sinkscope::SINKSCOPE_ISA_NAMESPACE {

// Lane i + 8 onto lane i, then i + 4 onto i, then (q0 + q2) + (q1 + q3), as ggml::foldLanes16.
// (The halves by masked extracts: GCC 12 warns about the plain extract's and the cast's undefined
// source.)
inline float foldRegister(__m512 lanes) {
    const __m256 half = _mm256_add_ps(_mm512_maskz_extractf32x8_ps(0xff, lanes, 1),
                                      _mm512_maskz_extractf32x8_ps(0xff, lanes, 0));
    const __m128 quarter = _mm_add_ps(_mm256_extractf128_ps(half, 1), _mm256_castps256_ps128(half));
    const __m128 pairs = _mm_add_ps(quarter, _mm_movehl_ps(quarter, quarter));
    return _mm_cvtss_f32(_mm_add_ss(pairs, _mm_movehdup_ps(pairs)));
}

// out[t * outStride + k] = row k of w [Rows][cols] . token t of x [Tokens][cols], each summed as
// ggml::laneDot16 sums it (fused multiply-adds over consecutive 16-value chunks, the tail into the
// first lanes, then the fold) with the Rows x Tokens outputs' lanes in registers, where the
// portable loops leave them in memory and fold them one value at a time. The tail takes a masked
// multiply-add, so the lanes past it keep their value.
template <int Rows, int Tokens>
void f32TileInRegisters(const float* w, int64_t cols, const float* x, float* out,
                        size_t outStride) {
    __m512 lanes[Rows][Tokens];
    for (int k = 0; k < Rows; ++k)
        for (int t = 0; t < Tokens; ++t)
            lanes[k][t] = _mm512_setzero_ps();
    int64_t c = 0;
    for (; c + 16 <= cols; c += 16) {
        __m512 inputs[Tokens];
        for (int t = 0; t < Tokens; ++t)
            inputs[t] = _mm512_loadu_ps(x + t * cols + c);
        for (int k = 0; k < Rows; ++k) {
            const __m512 weights = _mm512_loadu_ps(w + k * cols + c);
            for (int t = 0; t < Tokens; ++t)
                lanes[k][t] = _mm512_fmadd_ps(weights, inputs[t], lanes[k][t]);
        }
    }
    if (c < cols) {
        const auto tail = static_cast<__mmask16>((1u << (cols - c)) - 1);
        __m512 inputs[Tokens];
        for (int t = 0; t < Tokens; ++t)
            inputs[t] = _mm512_maskz_loadu_ps(tail, x + t * cols + c);
        for (int k = 0; k < Rows; ++k) {
            const __m512 weights = _mm512_maskz_loadu_ps(tail, w + k * cols + c);
            for (int t = 0; t < Tokens; ++t)
                lanes[k][t] = _mm512_mask3_fmadd_ps(weights, inputs[t], lanes[k][t], tail);
        }
    }
    for (int k = 0; k < Rows; ++k)
        for (int t = 0; t < Tokens; ++t)
            out[t * outStride + k] = foldRegister(lanes[k][t]);
}

} // namespace sinkscope::SINKSCOPE_ISA_NAMESPACE

#endif
