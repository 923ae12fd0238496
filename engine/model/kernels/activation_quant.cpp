// A kernel source (model/kernels/kernel_isa_begin.h): a matrix product's input quantized to Q8_0 /
// Q8_1 blocks, compiled once per instruction-set level. Every level computes the same bytes; the
// AVX2 and AVX-512 builds round eight or sixteen values in one instruction, where the baseline
// build of the same loop calls the C library's nearbyint once per value (14% of a small model's
// prefill went there).
//
// The blocks are what ggml's AVX2 quantize_row_q8_0 / _q8_1 write, which is what llama.cpp computes
// on x86-64: d = amax / 127 (stored as f16), each value times 127 / amax (not 1 / d), rounded half
// to even; Q8_1's s = d * the sum of the quants. The portable quantizer in gguf/ (ggml's
// reference) differs in a last bit now and then, enough to change a quant.
#include "gguf/ggml_types.h"
#include "gguf/quant_blocks.h"
#include "model/kernels/kernel_table.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "model/kernels/kernel_isa_begin.h"

namespace sinkscope::SINKSCOPE_ISA_NAMESPACE {

namespace {

// A rounded value as _mm256_cvtps_epi32 and the saturating packs make it an int8: NaN and values
// outside int32 (which a non-finite activation, or 127 / amax overflowing for a tiny amax, gives)
// become INT_MIN and so -128; the rest saturate to [-128, 127]. Written as selects, without a
// branch, so that the loop over a block vectorizes.
int8_t saturatedQuant(float rounded) {
    const bool inInt32 = rounded >= -2147483648.0f && rounded < 2147483648.0f;
    const float clamped = rounded < -128.0f ? -128.0f : (rounded > 127.0f ? 127.0f : rounded);
    return static_cast<int8_t>(static_cast<int>(inInt32 ? clamped : -128.0f));
}

// The largest |x[i]| of a block, NaNs passed over (as std::max(amax, |x|) from 0 passes them),
// in eight running maxima so that the loop vectorizes: the maximum is exact in any order. (One
// running maximum made a chain of 32 dependent steps per block, most of a small model's
// quantization time.)
float blockAbsMax(const float* x) {
    float lanes[8] = {};
    for (int i = 0; i < 32; i += 8)
        for (int j = 0; j < 8; ++j) {
            const float magnitude = std::fabs(x[i + j]);
            lanes[j] = magnitude > lanes[j] ? magnitude : lanes[j];
        }
    float amax = 0.0f;
    for (const float lane : lanes)
        amax = lane > amax ? lane : amax;
    return amax;
}

// x[32 * blocks] into `blocks` blocks at dst.
template <typename Block> void quantizeQ8(const float* x, void* dst, int64_t blocks) {
    for (int64_t b = 0; b < blocks; ++b) {
        const float* values = x + 32 * b;
        float amax = blockAbsMax(values);
        const float d = amax / 127.0f;
        const float inverse = amax != 0.0f ? 127.0f / amax : 0.0f;
        float rounded[32];
        for (int i = 0; i < 32; ++i)
            rounded[i] = std::nearbyint(values[i] * inverse);
        Block block{};
        block.d = fp32ToFp16(d);
        int sum = 0;
        for (int i = 0; i < 32; ++i) {
            block.qs[i] = saturatedQuant(rounded[i]);
            sum += block.qs[i];
        }
        if constexpr (requires { block.s; }) block.s = fp32ToFp16(d * static_cast<float>(sum));
        std::memcpy(static_cast<uint8_t*>(dst) + b * sizeof(Block), &block, sizeof block);
    }
}

void quantizeQ8_0(const float* x, void* dst, int64_t blocks) {
    quantizeQ8<quant::BlockQ8_0>(x, dst, blocks);
}
void quantizeQ8_1(const float* x, void* dst, int64_t blocks) {
    quantizeQ8<quant::BlockQ8_1>(x, dst, blocks);
}

} // namespace

#include "model/kernels/kernel_isa_end.h"

void fillActivationKernels(KernelTable& table) {
    table.quantizeQ8_0 = quantizeQ8_0;
    table.quantizeQ8_1 = quantizeQ8_1;
}

} // namespace sinkscope::SINKSCOPE_ISA_NAMESPACE
