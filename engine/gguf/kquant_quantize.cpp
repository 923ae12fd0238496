// ggml's reference quantizers for the K-quants and Q8_K (quantize_row_*_ref), step for step and
// in the same float order, so that a row quantizes to the bytes ggml writes. The searches fit
// each sub-block's scale (and min) by weighted least squares over a few candidate grids, then
// quantize the scales themselves to 4, 6 or 8 bits against one f16 super-block scale.
#include "gguf/quant_blocks.h"
#include "gguf/quant_rows.h"

#include "gguf/ggml_types.h"

#include <algorithm>
#include <cmath>

namespace sinkscope::quant {

namespace {

constexpr int kSuper = kSuperBlockValues;
constexpr float kGroupMaxEps = 1e-15f; // ggml's GROUP_MAX_EPS: below it a group is all zero

// The value with the largest magnitude, sign kept, the first one winning ties.
float signedAbsMax(const float* x, int n) {
    float absMax = 0.0f;
    float signedMax = 0.0f;
    for (int i = 0; i < n; ++i) {
        if (std::fabs(x[i]) > absMax) {
            absMax = std::fabs(x[i]);
            signedMax = x[i];
        }
    }
    return signedMax;
}

// ggml's make_qx_quants with rmse_type 1 and no importance weights: levels[n] in 0..2 nmax - 1
// (q + nmax) for x ~ scale * q, q in [-nmax, nmax), weights x^2. Returns the scale.
float fitSymmetricLevels(const float* x, int n, int nmax, int8_t* levels) {
    const float max = signedAbsMax(x, n);
    if (std::fabs(max) < kGroupMaxEps) {
        std::fill(levels, levels + n, int8_t{0});
        return 0.0f;
    }
    const auto quantAt = [&](float iscale, int i) {
        return std::clamp(nearestInt(iscale * x[i]), -nmax, nmax - 1);
    };
    float iscale = static_cast<float>(-nmax) / max;
    float sumlx = 0.0f;
    float suml2 = 0.0f;
    for (int i = 0; i < n; ++i) {
        const int l = quantAt(iscale, i);
        levels[i] = static_cast<int8_t>(l + nmax);
        const float w = x[i] * x[i];
        sumlx += w * x[i] * static_cast<float>(l);
        suml2 += w * static_cast<float>(l) * static_cast<float>(l);
    }
    float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
    float best = scale * sumlx;
    for (int step = -9; step <= 9; ++step) {
        if (step == 0) continue;
        iscale = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(step)) / max;
        sumlx = suml2 = 0.0f;
        for (int i = 0; i < n; ++i) {
            const int l = quantAt(iscale, i);
            const float w = x[i] * x[i];
            sumlx += w * x[i] * static_cast<float>(l);
            suml2 += w * static_cast<float>(l) * static_cast<float>(l);
        }
        if (suml2 > 0.0f && sumlx * sumlx > best * suml2) {
            for (int i = 0; i < n; ++i)
                levels[i] = static_cast<int8_t>(quantAt(iscale, i) + nmax);
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

// ggml's make_q3_quants with do_rmse: q in [-nmax, nmax) refined one value at a time (up to five
// passes) while the weighted fit improves; levels[n] = q + nmax. Returns the scale.
float fitQ3Levels(const float* x, int n, int nmax, int8_t* levels) {
    const float max = signedAbsMax(x, n);
    if (std::fabs(max) < kGroupMaxEps) {
        std::fill(levels, levels + n, int8_t{0});
        return 0.0f;
    }
    const float iscale = static_cast<float>(-nmax) / max;
    float sumlx = 0.0f;
    float suml2 = 0.0f;
    for (int i = 0; i < n; ++i) {
        const int l = std::clamp(nearestInt(iscale * x[i]), -nmax, nmax - 1);
        levels[i] = static_cast<int8_t>(l);
        const float w = x[i] * x[i];
        sumlx += w * x[i] * static_cast<float>(l);
        suml2 += w * static_cast<float>(l) * static_cast<float>(l);
    }
    for (int pass = 0; pass < 5; ++pass) {
        int changed = 0;
        for (int i = 0; i < n; ++i) {
            const float w = x[i] * x[i];
            const auto old = static_cast<float>(levels[i]);
            float slx = sumlx - w * x[i] * old;
            if (!(slx > 0.0f)) continue;
            float sl2 = suml2 - w * old * old;
            const int candidate = std::clamp(nearestInt(x[i] * sl2 / slx), -nmax, nmax - 1);
            if (candidate == levels[i]) continue;
            const auto fresh = static_cast<float>(candidate);
            slx += w * x[i] * fresh;
            sl2 += w * fresh * fresh;
            if (sl2 > 0.0f && slx * slx * suml2 > sumlx * sumlx * sl2) {
                levels[i] = static_cast<int8_t>(candidate);
                sumlx = slx;
                suml2 = sl2;
                ++changed;
            }
        }
        if (changed == 0) break;
    }
    for (int i = 0; i < n; ++i)
        levels[i] = static_cast<int8_t>(levels[i] + nmax);
    return sumlx / suml2;
}

// ggml's make_qkx2_quants: x ~ scale * l - min with l in 0..nmax and min >= 0, fitted by weighted
// least squares over nstep + 1 grids (rmin + rdelta * step + nmax levels across the range); the
// error is |diff| (useMad) or diff^2. Returns the scale; *minOut = min.
float fitAffineLevels(const float* x, const float* weights, int n, int nmax, uint8_t* levels,
                      float* minOut, float rmin, float rdelta, int nstep, bool useMad) {
    float min = x[0];
    float max = x[0];
    float sumW = weights[0];
    float sumX = sumW * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        sumW += weights[i];
        sumX += weights[i] * x[i];
    }
    if (min > 0.0f) min = 0.0f;
    if (max == min) {
        std::fill(levels, levels + n, uint8_t{0});
        *minOut = -min;
        return 0.0f;
    }
    const auto levelAt = [&](float iscale, int i) {
        return std::clamp(nearestInt(iscale * (x[i] - min)), 0, nmax);
    };
    const auto error = [&](float scale, float offset, const uint8_t* l) {
        float total = 0.0f;
        for (int i = 0; i < n; ++i) {
            const float diff = scale * static_cast<float>(l[i]) + offset - x[i];
            total += weights[i] * (useMad ? std::fabs(diff) : diff * diff);
        }
        return total;
    };
    float iscale = static_cast<float>(nmax) / (max - min);
    float scale = 1.0f / iscale;
    for (int i = 0; i < n; ++i)
        levels[i] = static_cast<uint8_t>(levelAt(iscale, i));
    float bestError = error(scale, min, levels);
    uint8_t candidate[32];
    for (int step = 0; step <= nstep; ++step) {
        iscale =
            (rmin + rdelta * static_cast<float>(step) + static_cast<float>(nmax)) / (max - min);
        float sumL = 0.0f, sumL2 = 0.0f, sumXL = 0.0f;
        for (int i = 0; i < n; ++i) {
            const int l = levelAt(iscale, i);
            candidate[i] = static_cast<uint8_t>(l);
            const auto level = static_cast<float>(l);
            sumL += weights[i] * level;
            sumL2 += weights[i] * level * level;
            sumXL += weights[i] * level * x[i];
        }
        const float det = sumW * sumL2 - sumL * sumL;
        if (!(det > 0.0f)) continue;
        float thisScale = (sumW * sumXL - sumX * sumL) / det;
        float thisMin = (sumL2 * sumX - sumL * sumXL) / det;
        if (thisMin > 0.0f) {
            thisMin = 0.0f;
            thisScale = sumXL / sumL2;
        }
        const float thisError = error(thisScale, thisMin, candidate);
        if (thisError < bestError) {
            std::copy(candidate, candidate + n, levels);
            bestError = thisError;
            scale = thisScale;
            min = thisMin;
        }
    }
    *minOut = -min;
    return scale;
}

// Packs 256 two-bit levels as Q2_K / Q3_K store them: value 128h + 32k + l in bits 2k of
// qs[32h + l].
void packTwoBitLevels(const uint8_t* levels, uint8_t qs[64]) {
    for (int half = 0; half < 2; ++half)
        for (int l = 0; l < 32; ++l) {
            const uint8_t* v = levels + 128 * half + l;
            qs[32 * half + l] =
                static_cast<uint8_t>(v[0] | (v[32] << 2) | (v[64] << 4) | (v[96] << 6));
        }
}

// Q4_K / Q5_K: 6-bit scales and mins of the 8 sub-blocks into 12 bytes (see kQuantScaleMin).
void packScaleMins(const uint8_t scale[8], const uint8_t min[8], uint8_t packed[12]) {
    std::fill(packed, packed + 12, uint8_t{0});
    for (int j = 0; j < 8; ++j) {
        if (j < 4) {
            packed[j] = scale[j];
            packed[j + 4] = min[j];
        } else {
            packed[j + 4] = static_cast<uint8_t>((scale[j] & 0x0f) | ((min[j] & 0x0f) << 4));
            packed[j - 4] |= static_cast<uint8_t>((scale[j] >> 4) << 6);
            packed[j] |= static_cast<uint8_t>((min[j] >> 4) << 6);
        }
    }
}

// The shared part of Q4_K and Q5_K: sub-block scales and mins (weights: rms of the sub-block
// plus |x|), quantized to 6 bits, then every value requantized against the stored scales.
// levels[256] in 0..nmax.
struct AffineSuperBlock {
    uint16_t d;
    uint16_t dmin;
    uint8_t scales[12];
};
AffineSuperBlock quantizeAffineSuperBlock(const float* x, int nmax, float rmin, int nstep,
                                          uint8_t levels[kSuper]) {
    float scales[8];
    float mins[8];
    float maxScale = 0.0f;
    float maxMin = 0.0f;
    for (int j = 0; j < 8; ++j) {
        const float* xs = x + 32 * j;
        float sumX2 = 0.0f;
        for (int l = 0; l < 32; ++l)
            sumX2 += xs[l] * xs[l];
        const float averageX = std::sqrt(sumX2 / 32.0f);
        float weights[32];
        for (int l = 0; l < 32; ++l)
            weights[l] = averageX + std::fabs(xs[l]);
        scales[j] = fitAffineLevels(xs, weights, 32, nmax, levels + 32 * j, &mins[j], rmin, 0.1f,
                                    nstep, false);
        if (scales[j] > maxScale) maxScale = scales[j];
        if (mins[j] > maxMin) maxMin = mins[j];
    }
    const float inverseScale = maxScale > 0.0f ? 63.0f / maxScale : 0.0f;
    const float inverseMin = maxMin > 0.0f ? 63.0f / maxMin : 0.0f;
    uint8_t scaleLevels[8];
    uint8_t minLevels[8];
    for (int j = 0; j < 8; ++j) {
        // ggml stores nearest_int in a uint8_t before clamping to 63: a negative fit wraps high.
        scaleLevels[j] =
            std::min<uint8_t>(63, static_cast<uint8_t>(nearestInt(inverseScale * scales[j])));
        minLevels[j] =
            std::min<uint8_t>(63, static_cast<uint8_t>(nearestInt(inverseMin * mins[j])));
    }
    AffineSuperBlock block{};
    packScaleMins(scaleLevels, minLevels, block.scales);
    block.d = fp32ToFp16(maxScale / 63.0f);
    block.dmin = fp32ToFp16(maxMin / 63.0f);
    for (int j = 0; j < 8; ++j) {
        const ScaleMin packed = kQuantScaleMin(block.scales, j);
        const float d = fp16ToFp32(block.d) * static_cast<float>(packed.scale);
        if (d == 0.0f) continue;
        const float dm = fp16ToFp32(block.dmin) * static_cast<float>(packed.min);
        for (int i = 32 * j; i < 32 * j + 32; ++i)
            levels[i] = static_cast<uint8_t>(std::clamp(nearestInt((x[i] + dm) / d), 0, nmax));
    }
    return block;
}

} // namespace

void quantizeQ2_K(const float* src, void* dst, int64_t blocks) {
    constexpr float kScaleLevels = 15.0f;
    for (int64_t b = 0; b < blocks; ++b) {
        const float* x = src + b * kSuper;
        uint8_t levels[kSuper];
        float scales[16];
        float mins[16];
        float maxScale = 0.0f;
        float maxMin = 0.0f;
        for (int j = 0; j < 16; ++j) {
            float weights[16];
            for (int l = 0; l < 16; ++l)
                weights[l] = std::fabs(x[16 * j + l]);
            scales[j] = fitAffineLevels(x + 16 * j, weights, 16, 3, levels + 16 * j, &mins[j],
                                        -0.5f, 0.1f, 15, true);
            if (scales[j] > maxScale) maxScale = scales[j];
            if (mins[j] > maxMin) maxMin = mins[j];
        }
        BlockQ2_K block{};
        if (maxScale > 0.0f) {
            const float iscale = kScaleLevels / maxScale;
            for (int j = 0; j < 16; ++j)
                block.scales[j] = static_cast<uint8_t>(nearestInt(iscale * scales[j]));
            block.d = fp32ToFp16(maxScale / kScaleLevels);
        }
        if (maxMin > 0.0f) {
            const float iscale = kScaleLevels / maxMin;
            for (int j = 0; j < 16; ++j)
                block.scales[j] = static_cast<uint8_t>(
                    block.scales[j] | (static_cast<unsigned>(nearestInt(iscale * mins[j])) << 4));
            block.dmin = fp32ToFp16(maxMin / kScaleLevels);
        }
        for (int j = 0; j < 16; ++j) {
            const float d = fp16ToFp32(block.d) * static_cast<float>(block.scales[j] & 0x0f);
            if (d == 0.0f) continue;
            const float dm = fp16ToFp32(block.dmin) * static_cast<float>(block.scales[j] >> 4);
            for (int i = 16 * j; i < 16 * j + 16; ++i)
                levels[i] = static_cast<uint8_t>(std::clamp(nearestInt((x[i] + dm) / d), 0, 3));
        }
        packTwoBitLevels(levels, block.qs);
        storeBlock(dst, b, block);
    }
}

void quantizeQ3_K(const float* src, void* dst, int64_t blocks) {
    for (int64_t b = 0; b < blocks; ++b) {
        const float* x = src + b * kSuper;
        int8_t levels[kSuper];
        float scales[16];
        float maxScale = 0.0f;
        float absMaxScale = 0.0f;
        for (int j = 0; j < 16; ++j) {
            scales[j] = fitQ3Levels(x + 16 * j, 16, 4, levels + 16 * j);
            if (std::fabs(scales[j]) > absMaxScale) {
                absMaxScale = std::fabs(scales[j]);
                maxScale = scales[j];
            }
        }
        BlockQ3_K block{};
        if (maxScale != 0.0f) {
            const float iscale = -32.0f / maxScale;
            for (int j = 0; j < 16; ++j) {
                const auto rounded = static_cast<int8_t>(nearestInt(iscale * scales[j]));
                const int level = std::clamp<int>(rounded, -32, 31) + 32; // 6 bits
                if (j < 8)
                    block.scales[j] = static_cast<uint8_t>(level & 0x0f);
                else
                    block.scales[j - 8] |= static_cast<uint8_t>((level & 0x0f) << 4);
                block.scales[8 + j % 4] |= static_cast<uint8_t>((level >> 4) << (2 * (j / 4)));
            }
            block.d = fp32ToFp16(1.0f / iscale);
        }
        for (int j = 0; j < 16; ++j) {
            const float d = fp16ToFp32(block.d) * static_cast<float>(q3KScale(block.scales, j));
            if (d == 0.0f) continue;
            for (int i = 16 * j; i < 16 * j + 16; ++i)
                levels[i] = static_cast<int8_t>(std::clamp(nearestInt(x[i] / d), -4, 3) + 4);
        }
        // Level 4..7: the high bit set in hmask (bit i / 32 of hmask[i % 32]), low bits kept.
        uint8_t lowBits[kSuper];
        for (int i = 0; i < kSuper; ++i) {
            const bool high = levels[i] > 3;
            if (high) block.hmask[i % 32] |= static_cast<uint8_t>(1u << (i / 32));
            lowBits[i] = static_cast<uint8_t>(high ? levels[i] - 4 : levels[i]);
        }
        packTwoBitLevels(lowBits, block.qs);
        storeBlock(dst, b, block);
    }
}

void quantizeQ4_K(const float* src, void* dst, int64_t blocks) {
    for (int64_t b = 0; b < blocks; ++b) {
        uint8_t levels[kSuper];
        const AffineSuperBlock fitted =
            quantizeAffineSuperBlock(src + b * kSuper, 15, -1.0f, 20, levels);
        BlockQ4_K block{};
        block.d = fitted.d;
        block.dmin = fitted.dmin;
        std::copy(fitted.scales, fitted.scales + 12, block.scales);
        for (int pair = 0; pair < 4; ++pair)
            for (int l = 0; l < 32; ++l)
                block.qs[32 * pair + l] =
                    static_cast<uint8_t>(levels[64 * pair + l] | (levels[64 * pair + 32 + l] << 4));
        storeBlock(dst, b, block);
    }
}

void quantizeQ5_K(const float* src, void* dst, int64_t blocks) {
    for (int64_t b = 0; b < blocks; ++b) {
        uint8_t levels[kSuper];
        const AffineSuperBlock fitted =
            quantizeAffineSuperBlock(src + b * kSuper, 31, -0.5f, 15, levels);
        BlockQ5_K block{};
        block.d = fitted.d;
        block.dmin = fitted.dmin;
        std::copy(fitted.scales, fitted.scales + 12, block.scales);
        for (int pair = 0; pair < 4; ++pair)
            for (int l = 0; l < 32; ++l) {
                const int low = levels[64 * pair + l];
                const int high = levels[64 * pair + 32 + l];
                block.qs[32 * pair + l] = static_cast<uint8_t>((low & 0x0f) | ((high & 0x0f) << 4));
                block.qh[l] |= static_cast<uint8_t>(((low >> 4) << (2 * pair)) |
                                                    ((high >> 4) << (2 * pair + 1)));
            }
        storeBlock(dst, b, block);
    }
}

void quantizeQ6_K(const float* src, void* dst, int64_t blocks) {
    for (int64_t b = 0; b < blocks; ++b) {
        const float* x = src + b * kSuper;
        int8_t levels[kSuper];
        float scales[16];
        float maxScale = 0.0f;
        float absMaxScale = 0.0f;
        for (int j = 0; j < 16; ++j) {
            scales[j] = fitSymmetricLevels(x + 16 * j, 16, 32, levels + 16 * j);
            if (std::fabs(scales[j]) > absMaxScale) {
                absMaxScale = std::fabs(scales[j]);
                maxScale = scales[j];
            }
        }
        BlockQ6_K block{};
        if (absMaxScale < kGroupMaxEps) { // all zero: ggml writes a zero block
            storeBlock(dst, b, block);
            continue;
        }
        const float iscale = -128.0f / maxScale;
        block.d = fp32ToFp16(1.0f / iscale);
        for (int j = 0; j < 16; ++j)
            block.scales[j] = static_cast<int8_t>(std::min(127, nearestInt(iscale * scales[j])));
        for (int j = 0; j < 16; ++j) {
            const float d = fp16ToFp32(block.d) * static_cast<float>(block.scales[j]);
            if (d == 0.0f) continue;
            for (int i = 16 * j; i < 16 * j + 16; ++i)
                levels[i] = static_cast<int8_t>(std::clamp(nearestInt(x[i] / d), -32, 31) + 32);
        }
        for (int half = 0; half < 2; ++half)
            for (int l = 0; l < 32; ++l) {
                const int8_t* v = levels + 128 * half + l; // values l, l + 32, l + 64, l + 96
                block.ql[64 * half + l] =
                    static_cast<uint8_t>((v[0] & 0x0f) | ((v[64] & 0x0f) << 4));
                block.ql[64 * half + 32 + l] =
                    static_cast<uint8_t>((v[32] & 0x0f) | ((v[96] & 0x0f) << 4));
                block.qh[32 * half + l] = static_cast<uint8_t>(
                    (v[0] >> 4) | ((v[32] >> 4) << 2) | ((v[64] >> 4) << 4) | ((v[96] >> 4) << 6));
            }
        storeBlock(dst, b, block);
    }
}

// d = max / -127 with max the signed value of largest magnitude (so max itself maps to -127),
// q = nearest_int(x / d) (ties to even) capped at 127; bsums: sums of 16 consecutive quants.
void quantizeQ8_K(const float* src, void* dst, int64_t blocks) {
    for (int64_t b = 0; b < blocks; ++b) {
        const float* x = src + b * kSuper;
        const float max = signedAbsMax(x, kSuper);
        BlockQ8_K block{};
        if (max != 0.0f) {
            const float iscale = -127.0f / max;
            for (int i = 0; i < kSuper; ++i)
                block.qs[i] = static_cast<int8_t>(std::clamp(nearestInt(iscale * x[i]), -128, 127));
            for (int j = 0; j < 16; ++j) {
                int sum = 0;
                for (int i = 16 * j; i < 16 * j + 16; ++i)
                    sum += block.qs[i];
                block.bsums[j] = static_cast<int16_t>(sum);
            }
            block.d = 1.0f / iscale;
        }
        storeBlock(dst, b, block);
    }
}

} // namespace sinkscope::quant
