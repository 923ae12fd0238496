// Float arithmetic in the order llama.cpp's CPU backend (ggml) performs it on x86-64, so that
// Sinkscope's results can be checked against llama.cpp's bit for bit rather than to a tolerance.
// Why it matters: quantized models quantize every activation vector to 8 bits before a matrix
// product, and f16 attention rounds q, K, V and the softmax weights to 11 bits. A last-bit
// difference anywhere upstream moves a value across a rounding boundary now and then, and one such
// flip shifts the logits by a whole quantization step (0.03-0.1 on the reference models).
//
// The orders follow ggml's AVX-512 / AVX2 code (ggml-cpu.c, llamafile's sgemm.cpp): sums kept in
// 16 (or 8) float lanes with fused multiply-adds, then folded halves first. They are written with
// std::fma and plain loops (model/kernels/ggml_lanes.h, model/kernels/ggml_float.cpp), so any
// x86-64 CPU computes the same bits; these functions run the CPU's instruction-set level
// (model/kernels/kernel_table.h).
#pragma once

namespace sinkscope::ggml {

// The 16 lanes of an AVX-512 register added as _mm512_reduce_add_ps adds them: lanes i and i+8,
// then i and i+4, then i and i+2, then the last two.
float foldLanes16(const float lanes[16]);
// The 8 lanes of an AVX register added as ggml's hsum_float_8: i and i+4, i and i+2, then two.
float foldLanes8(const float lanes[8]);

// a . b over n floats as llama.cpp's f16 matrix product sums one output on AVX-512 (its
// llamafile tinyBLAS kernel, used for attention's q.K and p.V with more than one token): lane
// j accumulates the products i = j (mod 16) in increasing i with fused multiply-adds, then the
// lanes are folded. A length that is not a multiple of 16 sums as if padded with zeros.
float laneDot16(const float* a, const float* b, int n);

// e^x as ggml_v_expf (after ARM's optimized routines): x = n ln2 + r with n rounded to nearest,
// e^r by a degree-5 polynomial, scaled by 2^n; 0 below about -104, infinity above 88.38.
float vectorExp(float x);

// In place: x[n] -> softmax(x) as ggml_vec_soft_max_f32 computes a row of attention weights
// (row maximum subtracted, vectorExp in chunks of 16, each chunk's sum folded and added in
// double, then every value scaled by 1 / sum). n is padded to a multiple of 16 with weights that
// are 0 (masked cells, as llama.cpp's padded cache rows hold).
void softmaxRow(float* x, int n);

// gate[n] = silu(gate) * up as ggml_vec_silu_f32 then a product: x / (1 + vectorExp(-x)) in
// chunks of 16, the last n mod 16 with the C library's expf.
void swiglu(float* gate, const float* up, int n);

} // namespace sinkscope::ggml
