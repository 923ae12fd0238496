// The 32-value block types: dequantization as ggml's dequantize_row_* and the reference
// quantizers quantize_row_*_ref, step for step (layouts in gguf/quant_blocks.h).
#include "gguf/quant_blocks.h"
#include "gguf/quant_rows.h"

#include "gguf/ggml_types.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace sinkscope::quant {

namespace {

constexpr int kHalf = kBlockValues / 2;

// ggml's MIN(maxLevel, (int8_t)value) and (uint8_t)value for the shifted, scaled values it
// quantizes: truncation toward zero. Finite rows keep value in [0, maxLevel + 1); NaN and
// out-of-range values (rows with inf) clamp instead of being undefined behaviour.
uint8_t truncatedLevel(float value, int maxLevel) {
    if (!(value >= 0.0f)) return 0; // (int8_t) of a value in (-1, 0) is 0 as well
    if (value >= static_cast<float>(maxLevel)) return static_cast<uint8_t>(maxLevel);
    return static_cast<uint8_t>(value);
}

// roundf(value) as an int8 quant; |value| <= 127 for finite rows (NaN gives 0).
int8_t roundedQuant(float value) {
    const float rounded = std::round(value);
    if (std::isnan(rounded)) return 0;
    return static_cast<int8_t>(std::clamp(rounded, -127.0f, 127.0f));
}

// The value with the largest magnitude, sign kept; the first one wins a tie (ggml's `max`).
float signedAbsMax(const float* values, int count) {
    float absMax = 0.0f;
    float signedMax = 0.0f;
    for (int j = 0; j < count; ++j) {
        if (absMax < std::fabs(values[j])) {
            absMax = std::fabs(values[j]);
            signedMax = values[j];
        }
    }
    return signedMax;
}

float absMax(const float* values, int count) {
    float result = 0.0f;
    for (int j = 0; j < count; ++j)
        result = std::max(result, std::fabs(values[j]));
    return result;
}

struct MinMax {
    float min;
    float max;
};
MinMax minMax(const float* values, int count) {
    MinMax result{FLT_MAX, -FLT_MAX};
    for (int j = 0; j < count; ++j) {
        if (values[j] < result.min) result.min = values[j];
        if (values[j] > result.max) result.max = values[j];
    }
    return result;
}

float inverseOf(float scale) {
    return scale != 0.0f ? 1.0f / scale : 0.0f;
}

// Packs 32 levels (0..31) into nibbles (value j low in byte j, j + 16 high) and, for 5-bit
// types, their fifth bits into qh (bit j for value j).
void packNibbles(const uint8_t levels[kBlockValues], uint8_t qs[kHalf]) {
    for (int j = 0; j < kHalf; ++j)
        qs[j] = static_cast<uint8_t>((levels[j] & 0x0f) | ((levels[j + kHalf] & 0x0f) << 4));
}
void packFifthBits(const uint8_t levels[kBlockValues], uint8_t qh[4]) {
    uint32_t bits = 0;
    for (int j = 0; j < kBlockValues; ++j)
        bits |= static_cast<uint32_t>((levels[j] >> 4) & 1) << j;
    for (int b = 0; b < 4; ++b)
        qh[b] = static_cast<uint8_t>(bits >> (8 * b));
}

int nibble(const uint8_t qs[kHalf], int j) {
    return j < kHalf ? qs[j] & 0x0f : qs[j - kHalf] >> 4;
}

} // namespace

void dequantizeQ4_0(const void* src, float* dst, int64_t blocks) {
    for (int64_t b = 0; b < blocks; ++b) {
        const auto block = loadBlock<BlockQ4_0>(src, b);
        const float d = fp16ToFp32(block.d);
        for (int j = 0; j < kBlockValues; ++j)
            dst[b * kBlockValues + j] = static_cast<float>(nibble(block.qs, j) - 8) * d;
    }
}

void dequantizeQ4_1(const void* src, float* dst, int64_t blocks) {
    for (int64_t b = 0; b < blocks; ++b) {
        const auto block = loadBlock<BlockQ4_1>(src, b);
        const float d = fp16ToFp32(block.d);
        const float m = fp16ToFp32(block.m);
        for (int j = 0; j < kBlockValues; ++j)
            dst[b * kBlockValues + j] = static_cast<float>(nibble(block.qs, j)) * d + m;
    }
}

void dequantizeQ5_0(const void* src, float* dst, int64_t blocks) {
    for (int64_t b = 0; b < blocks; ++b) {
        const auto block = loadBlock<BlockQ5_0>(src, b);
        const float d = fp16ToFp32(block.d);
        for (int j = 0; j < kBlockValues; ++j) {
            const int q = nibble(block.qs, j) | q5HighBit(block.qh, j);
            dst[b * kBlockValues + j] = static_cast<float>(q - 16) * d;
        }
    }
}

void dequantizeQ5_1(const void* src, float* dst, int64_t blocks) {
    for (int64_t b = 0; b < blocks; ++b) {
        const auto block = loadBlock<BlockQ5_1>(src, b);
        const float d = fp16ToFp32(block.d);
        const float m = fp16ToFp32(block.m);
        for (int j = 0; j < kBlockValues; ++j) {
            const int q = nibble(block.qs, j) | q5HighBit(block.qh, j);
            dst[b * kBlockValues + j] = static_cast<float>(q) * d + m;
        }
    }
}

void dequantizeQ8_0(const void* src, float* dst, int64_t blocks) {
    for (int64_t b = 0; b < blocks; ++b) {
        const auto block = loadBlock<BlockQ8_0>(src, b);
        const float d = fp16ToFp32(block.d);
        for (int j = 0; j < kBlockValues; ++j)
            dst[b * kBlockValues + j] = static_cast<float>(block.qs[j]) * d;
    }
}

void dequantizeQ8_1(const void* src, float* dst, int64_t blocks) {
    for (int64_t b = 0; b < blocks; ++b) {
        const auto block = loadBlock<BlockQ8_1>(src, b);
        const float d = fp16ToFp32(block.d);
        for (int j = 0; j < kBlockValues; ++j)
            dst[b * kBlockValues + j] = static_cast<float>(block.qs[j]) * d;
    }
}

// d = max / -8, so the value of largest magnitude maps to level 0 and the opposite extreme may
// need level 16, which clamps to 15.
void quantizeQ4_0(const float* src, void* dst, int64_t blocks) {
    for (int64_t b = 0; b < blocks; ++b) {
        const float* x = src + b * kBlockValues;
        const float d = signedAbsMax(x, kBlockValues) / -8.0f;
        const float id = inverseOf(d);
        uint8_t levels[kBlockValues];
        for (int j = 0; j < kBlockValues; ++j)
            levels[j] = truncatedLevel(x[j] * id + 8.5f, 15);
        BlockQ4_0 block{};
        block.d = fp32ToFp16(d);
        packNibbles(levels, block.qs);
        storeBlock(dst, b, block);
    }
}

// d = (max - min) / 15, m = min: every level in 0..15 is used from min upwards.
void quantizeQ4_1(const float* src, void* dst, int64_t blocks) {
    for (int64_t b = 0; b < blocks; ++b) {
        const float* x = src + b * kBlockValues;
        const MinMax range = minMax(x, kBlockValues);
        const float d = (range.max - range.min) / 15.0f;
        const float id = inverseOf(d);
        uint8_t levels[kBlockValues];
        for (int j = 0; j < kBlockValues; ++j)
            levels[j] = truncatedLevel((x[j] - range.min) * id + 0.5f, 15);
        BlockQ4_1 block{};
        block.d = fp32ToFp16(d);
        block.m = fp32ToFp16(range.min);
        packNibbles(levels, block.qs);
        storeBlock(dst, b, block);
    }
}

void quantizeQ5_0(const float* src, void* dst, int64_t blocks) {
    for (int64_t b = 0; b < blocks; ++b) {
        const float* x = src + b * kBlockValues;
        const float d = signedAbsMax(x, kBlockValues) / -16.0f;
        const float id = inverseOf(d);
        uint8_t levels[kBlockValues];
        for (int j = 0; j < kBlockValues; ++j)
            levels[j] = truncatedLevel(x[j] * id + 16.5f, 31);
        BlockQ5_0 block{};
        block.d = fp32ToFp16(d);
        packNibbles(levels, block.qs);
        packFifthBits(levels, block.qh);
        storeBlock(dst, b, block);
    }
}

void quantizeQ5_1(const float* src, void* dst, int64_t blocks) {
    for (int64_t b = 0; b < blocks; ++b) {
        const float* x = src + b * kBlockValues;
        const MinMax range = minMax(x, kBlockValues);
        const float d = (range.max - range.min) / 31.0f;
        const float id = inverseOf(d);
        uint8_t levels[kBlockValues];
        for (int j = 0; j < kBlockValues; ++j)
            levels[j] = truncatedLevel((x[j] - range.min) * id + 0.5f, 31);
        BlockQ5_1 block{};
        block.d = fp32ToFp16(d);
        block.m = fp32ToFp16(range.min);
        packNibbles(levels, block.qs);
        packFifthBits(levels, block.qh);
        storeBlock(dst, b, block);
    }
}

// d = absmax / 127, q = roundf(x / d): ties round away from zero.
void quantizeQ8_0(const float* src, void* dst, int64_t blocks) {
    for (int64_t b = 0; b < blocks; ++b) {
        const float* x = src + b * kBlockValues;
        const float d = absMax(x, kBlockValues) / 127.0f;
        const float id = inverseOf(d);
        BlockQ8_0 block{};
        block.d = fp32ToFp16(d);
        for (int j = 0; j < kBlockValues; ++j)
            block.qs[j] = roundedQuant(x[j] * id);
        storeBlock(dst, b, block);
    }
}

// As Q8_0, plus s = f16(d * sum of the quants): the Q4_1 / Q5_1 dots take their mins' share
// from it.
void quantizeQ8_1(const float* src, void* dst, int64_t blocks) {
    for (int64_t b = 0; b < blocks; ++b) {
        const float* x = src + b * kBlockValues;
        const float d = absMax(x, kBlockValues) / 127.0f;
        const float id = inverseOf(d);
        BlockQ8_1 block{};
        block.d = fp32ToFp16(d);
        int sum = 0;
        for (int j = 0; j < kBlockValues; ++j) {
            block.qs[j] = roundedQuant(x[j] * id);
            sum += block.qs[j];
        }
        block.s = fp32ToFp16(static_cast<float>(sum) * d);
        storeBlock(dst, b, block);
    }
}

} // namespace sinkscope::quant
