// Dequantization of the 256-value K-quant super-blocks, Q8_K and the non-linear IQ4 types, with
// ggml's arithmetic (dequantize_row_*: the sub-block scale is formed first, then times the quant).
// Layouts in gguf/quant_blocks.h.
#include "gguf/quant_blocks.h"
#include "gguf/quant_rows.h"

#include "gguf/ggml_types.h"

namespace sinkscope::quant {

namespace {

constexpr int kSuper = kSuperBlockValues;

// The 2 low bits of value i of a Q2_K / Q3_K super-block: value 128h + 32k + l is bits 2k..2k+1
// of qs[32h + l].
int twoBitQuant(const uint8_t qs[64], int i) {
    const int half = i / 128;
    const int k = (i % 128) / 32;
    const int l = i % 32;
    return (qs[32 * half + l] >> (2 * k)) & 3;
}

// The nibble of value i of a Q4_K / Q5_K super-block: value 64p + l is the low nibble of
// qs[32p + l], value 64p + 32 + l its high nibble.
int kNibble(const uint8_t qs[128], int i) {
    const int pair = i / 64;
    const int l = i % 32;
    const uint8_t byte = qs[32 * pair + l];
    return (i % 64) < 32 ? byte & 0x0f : byte >> 4;
}

// The 6-bit quant of value i of a Q6_K super-block, 0..63 (before the offset 32).
int sixBitQuant(const BlockQ6_K& block, int i) {
    const int half = i / 128;
    const int k = (i % 128) / 32;
    const int l = i % 32;
    const uint8_t low = block.ql[64 * half + 32 * (k & 1) + l];
    const int nibble = k < 2 ? low & 0x0f : low >> 4;
    const int high = (block.qh[32 * half + l] >> (2 * k)) & 3;
    return nibble | (high << 4);
}

// The nibble of value j (0..31) of a 32-value IQ4 (sub-)block at qs[16].
int iq4Nibble(const uint8_t qs[16], int j) {
    return j < 16 ? qs[j] & 0x0f : qs[j - 16] >> 4;
}

} // namespace

void dequantizeQ2_K(const void* src, float* dst, int64_t blocks) {
    for (int64_t b = 0; b < blocks; ++b) {
        const auto block = loadBlock<BlockQ2_K>(src, b);
        const float d = fp16ToFp32(block.d);
        const float dmin = fp16ToFp32(block.dmin);
        float* out = dst + b * kSuper;
        for (int sub = 0; sub < 16; ++sub) {
            const float scale = d * static_cast<float>(block.scales[sub] & 0x0f);
            const float min = dmin * static_cast<float>(block.scales[sub] >> 4);
            for (int i = 16 * sub; i < 16 * sub + 16; ++i)
                out[i] = scale * static_cast<float>(twoBitQuant(block.qs, i)) - min;
        }
    }
}

void dequantizeQ3_K(const void* src, float* dst, int64_t blocks) {
    for (int64_t b = 0; b < blocks; ++b) {
        const auto block = loadBlock<BlockQ3_K>(src, b);
        const float d = fp16ToFp32(block.d);
        float* out = dst + b * kSuper;
        for (int sub = 0; sub < 16; ++sub) {
            const float scale = d * static_cast<float>(q3KScale(block.scales, sub));
            for (int i = 16 * sub; i < 16 * sub + 16; ++i) {
                const int highBit = (block.hmask[i % 32] >> (i / 32)) & 1;
                const int q = twoBitQuant(block.qs, i) - (highBit ? 0 : 4);
                out[i] = scale * static_cast<float>(q);
            }
        }
    }
}

void dequantizeQ4_K(const void* src, float* dst, int64_t blocks) {
    for (int64_t b = 0; b < blocks; ++b) {
        const auto block = loadBlock<BlockQ4_K>(src, b);
        const float d = fp16ToFp32(block.d);
        const float dmin = fp16ToFp32(block.dmin);
        float* out = dst + b * kSuper;
        for (int sub = 0; sub < 8; ++sub) {
            const ScaleMin packed = kQuantScaleMin(block.scales, sub);
            const float scale = d * static_cast<float>(packed.scale);
            const float min = dmin * static_cast<float>(packed.min);
            for (int i = 32 * sub; i < 32 * sub + 32; ++i)
                out[i] = scale * static_cast<float>(kNibble(block.qs, i)) - min;
        }
    }
}

void dequantizeQ5_K(const void* src, float* dst, int64_t blocks) {
    for (int64_t b = 0; b < blocks; ++b) {
        const auto block = loadBlock<BlockQ5_K>(src, b);
        const float d = fp16ToFp32(block.d);
        const float dmin = fp16ToFp32(block.dmin);
        float* out = dst + b * kSuper;
        for (int sub = 0; sub < 8; ++sub) {
            const ScaleMin packed = kQuantScaleMin(block.scales, sub);
            const float scale = d * static_cast<float>(packed.scale);
            const float min = dmin * static_cast<float>(packed.min);
            for (int i = 32 * sub; i < 32 * sub + 32; ++i) {
                const int fifth = ((block.qh[i % 32] >> sub) & 1) << 4; // bit `sub` of qh[l]
                out[i] = scale * static_cast<float>(kNibble(block.qs, i) | fifth) - min;
            }
        }
    }
}

void dequantizeQ6_K(const void* src, float* dst, int64_t blocks) {
    for (int64_t b = 0; b < blocks; ++b) {
        const auto block = loadBlock<BlockQ6_K>(src, b);
        const float d = fp16ToFp32(block.d);
        float* out = dst + b * kSuper;
        for (int sub = 0; sub < 16; ++sub) {
            const float scale = d * static_cast<float>(block.scales[sub]);
            for (int i = 16 * sub; i < 16 * sub + 16; ++i)
                out[i] = scale * static_cast<float>(sixBitQuant(block, i) - 32);
        }
    }
}

void dequantizeQ8_K(const void* src, float* dst, int64_t blocks) {
    for (int64_t b = 0; b < blocks; ++b) {
        const auto block = loadBlock<BlockQ8_K>(src, b);
        for (int i = 0; i < kSuper; ++i)
            dst[b * kSuper + i] = block.d * static_cast<float>(block.qs[i]);
    }
}

void dequantizeIQ4_NL(const void* src, float* dst, int64_t blocks) {
    for (int64_t b = 0; b < blocks; ++b) {
        const auto block = loadBlock<BlockIQ4_NL>(src, b);
        const float d = fp16ToFp32(block.d);
        for (int j = 0; j < kBlockValues; ++j)
            dst[b * kBlockValues + j] =
                d * static_cast<float>(kIq4NlValues[iq4Nibble(block.qs, j)]);
    }
}

void dequantizeIQ4_XS(const void* src, float* dst, int64_t blocks) {
    for (int64_t b = 0; b < blocks; ++b) {
        const auto block = loadBlock<BlockIQ4_XS>(src, b);
        const float d = fp16ToFp32(block.d);
        float* out = dst + b * kSuper;
        for (int sub = 0; sub < 8; ++sub) {
            const float scale = d * static_cast<float>(iq4XsScale(block, sub));
            const uint8_t* qs = block.qs + 16 * sub;
            for (int j = 0; j < 32; ++j)
                out[32 * sub + j] = scale * static_cast<float>(kIq4NlValues[iq4Nibble(qs, j)]);
        }
    }
}

} // namespace sinkscope::quant
