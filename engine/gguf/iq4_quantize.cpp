// ggml's reference quantizers for the non-linear 4-bit types (quantize_row_iq4_nl_ref and
// quantize_row_iq4_xs_ref, both through its quantize_row_iq4_nl_impl without importance
// weights): each value maps to the nearest of the 16 levels kIq4NlValues, with a per-32-value
// scale fitted by weighted least squares (weights x^2). IQ4_XS then quantizes the 8 scales of a
// super-block to 6 bits against one f16 scale and requantizes the values.
#include "gguf/quant_blocks.h"
#include "gguf/quant_rows.h"

#include "gguf/ggml_types.h"

#include <algorithm>
#include <cmath>

namespace sinkscope::quant {

namespace {

constexpr float kGroupMaxEps = 1e-15f; // ggml's GROUP_MAX_EPS

// ggml's best_index_int8 over kIq4NlValues: the index of the level nearest x (the upper one on a
// tie), by bisection. NaN gives the top index.
int nearestLevel(float x) {
    const int8_t* values = kIq4NlValues;
    if (x <= values[0]) return 0;
    if (x >= values[15]) return 15;
    int low = 0;
    int high = 15;
    while (high - low > 1) {
        const int middle = (low + high) / 2;
        if (x < values[middle])
            high = middle;
        else
            low = middle;
    }
    return x - values[high - 1] < values[high] - x ? high - 1 : high;
}

// The fitted scale of one 32-value block x; levels[32] are its level indices. `tries` > 0 also
// scans the grids (tries + values[0]) / max for a better fit, as ggml's IQ4_XS path does; the
// IQ4_NL reference passes -1 (no scan, first guess max / values[0]). An all-zero block (|x| below
// kGroupMaxEps) gives 0 and leaves levels as they are.
float fitBlock(const float* x, int tries, uint8_t levels[32]) {
    float absMax = 0.0f;
    float max = 0.0f;
    for (int j = 0; j < 32; ++j) {
        if (std::fabs(x[j]) > absMax) {
            absMax = std::fabs(x[j]);
            max = x[j];
        }
    }
    if (absMax < kGroupMaxEps) return 0.0f;
    const auto lowest = static_cast<float>(kIq4NlValues[0]);
    float d = tries > 0 ? -max / lowest : max / lowest;
    float id = 1.0f / d;
    float sumqx = 0.0f;
    float sumq2 = 0.0f;
    for (int j = 0; j < 32; ++j) {
        const int l = nearestLevel(id * x[j]);
        levels[j] = static_cast<uint8_t>(l);
        const auto q = static_cast<float>(kIq4NlValues[l]);
        const float w = x[j] * x[j];
        sumqx += w * q * x[j];
        sumq2 += w * q * q;
    }
    d = sumqx / sumq2;
    float best = d * sumqx;
    for (int attempt = -tries; attempt <= tries; ++attempt) {
        id = static_cast<float>(attempt + kIq4NlValues[0]) / max;
        sumqx = sumq2 = 0.0f;
        for (int j = 0; j < 32; ++j) {
            const auto q = static_cast<float>(kIq4NlValues[nearestLevel(id * x[j])]);
            const float w = x[j] * x[j];
            sumqx += w * q * x[j];
            sumq2 += w * q * q;
        }
        if (sumq2 > 0.0f && sumqx * sumqx > best * sumq2) {
            d = sumqx / sumq2;
            best = d * sumqx;
        }
    }
    return d;
}

// Value j < 16 of a 32-value block in the low nibble of qs[j], value j + 16 in the high one.
void packLevels(const uint8_t levels[32], uint8_t qs[16]) {
    for (int j = 0; j < 16; ++j)
        qs[j] = static_cast<uint8_t>(levels[j] | (levels[j + 16] << 4));
}

} // namespace

// An all-zero block gets d = 0 and level 0 everywhere (ggml leaves the previous block's levels
// there; with d = 0 both dequantize to zeros).
void quantizeIQ4_NL(const float* src, void* dst, int64_t blocks) {
    for (int64_t b = 0; b < blocks; ++b) {
        uint8_t levels[32] = {};
        const float d = fitBlock(src + b * kBlockValues, -1, levels);
        BlockIQ4_NL block{};
        block.d = fp32ToFp16(d);
        packLevels(levels, block.qs);
        storeBlock(dst, b, block);
    }
}

void quantizeIQ4_XS(const float* src, void* dst, int64_t blocks) {
    constexpr int kSubBlocks = kSuperBlockValues / 32;
    for (int64_t b = 0; b < blocks; ++b) {
        const float* x = src + b * kSuperBlockValues;
        uint8_t levels[kSuperBlockValues] = {};
        float scales[kSubBlocks];
        float maxScale = 0.0f;
        float absMaxScale = 0.0f;
        for (int j = 0; j < kSubBlocks; ++j) {
            scales[j] = fitBlock(x + 32 * j, 7, levels + 32 * j);
            if (std::fabs(scales[j]) > absMaxScale) {
                absMaxScale = std::fabs(scales[j]);
                maxScale = scales[j];
            }
        }
        BlockIQ4_XS block{};
        const float d = -maxScale / 32.0f;
        block.d = fp32ToFp16(d);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        for (int j = 0; j < kSubBlocks; ++j) {
            const int l = std::clamp(nearestInt(id * scales[j]), -32, 31);
            const float dl = d * static_cast<float>(l);
            const float idl = dl != 0.0f ? 1.0f / dl : 0.0f;
            for (int i = 32 * j; i < 32 * j + 32; ++i)
                levels[i] = static_cast<uint8_t>(nearestLevel(idl * x[i]));
            const int stored = l + 32; // 6 bits: low nibble in scalesLow, top 2 in scalesHigh
            block.scalesLow[j / 2] |= static_cast<uint8_t>((stored & 0x0f) << (4 * (j % 2)));
            block.scalesHigh = static_cast<uint16_t>(block.scalesHigh | ((stored >> 4) << (2 * j)));
        }
        for (int j = 0; j < kSubBlocks; ++j)
            packLevels(levels + 32 * j, block.qs + 16 * j);
        storeBlock(dst, b, block);
    }
}

} // namespace sinkscope::quant
