// ggml::foldLanes16 of a 512-bit register, for the AVX-512 levels' kernels that keep their lanes
// in registers (model/kernels/gemm_kernels.cpp, model/kernels/ggml_float.cpp). Include it after
// model/kernels/kernel_isa_begin.h, so that each copy is compiled for its own level; the source
// includes <immintrin.h> before the region opens. The other levels have none.
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

} // namespace sinkscope::SINKSCOPE_ISA_NAMESPACE

#endif
