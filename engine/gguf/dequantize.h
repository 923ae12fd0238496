// Row codecs for every ggml type Sinkscope supports (ggmlTypeSupported): dequantization exactly as
// ggml's dequantize_row_* computes it, and ggml's reference quantizers (quantize_row_*_ref), bit
// for bit. Block layouts: gguf/quant_blocks.h.
//
// A row of n values is n / ggmlBlockValues(type) blocks, ggmlByteSize(type, n) bytes, with no
// alignment required. Both functions throw std::invalid_argument for an unsupported type or an n
// that is not a multiple of the block size.
#pragma once

#include "gguf/ggml_types.h"

#include <cstdint>

namespace sinkscope {

// dst[n] = the values of the row at src.
void dequantizeRow(GgmlType type, const void* src, float* dst, int64_t n);
// dst = src[n] in `type`. F16 / BF16 round to nearest even; the quantized types use ggml's
// reference quantizers quantize_row_*_ref (no importance weights).
void quantizeRow(GgmlType type, const float* src, void* dst, int64_t n);

// The activation quantizers of ggml's CPU backend (n a multiple of 32, or 256 for Q8_K):
// Q8_0 for Q4_0, Q5_0, Q8_0 and IQ4_NL weights; Q8_1 (with its sums) for Q4_1 and Q5_1;
// Q8_K (with its 16 block sums) for the K-quants and IQ4_XS. Bit for bit ggml's
// quantize_row_q8_0_ref, quantize_row_q8_1_ref and quantize_row_q8_K_ref. (ggml's x86 AVX
// quantize_row_q8_0 / q8_1 scale by 127 / absmax and round ties to even instead: on random rows
// about one block in 12,000 gets a quant one step away. Its Q8_K is the reference one.)
void quantizeRowQ8_0(const float* src, void* dst, int64_t n);
void quantizeRowQ8_1(const float* src, void* dst, int64_t n);
void quantizeRowQ8_K(const float* src, void* dst, int64_t n);

} // namespace sinkscope
