// Scalar reference dots: ggml's generic C kernels (ggml_vec_dot_*_q8_*, ggml_vec_dot_f16 / bf16 /
// f32 without SIMD) step for step: the same integer partial sums, the same float products and
// additions in the same order. The K-quant kernels keep ggml's eight lanes (value i of a
// super-block feeds lane i % 8 in int32, then each lane is scaled and summed in float).
#include "model/kernels/quant_dot_kernels.h"

#include "gguf/quant_blocks.h"

#include <cmath>
#include <cstring>

namespace sinkscope::quant {

namespace {

constexpr int kSuper = kSuperBlockValues;

template <typename T> T loadValue(const void* bytes, int64_t index) {
    T value;
    std::memcpy(&value, static_cast<const uint8_t*>(bytes) + index * sizeof(T), sizeof value);
    return value;
}

// ggml sums these in double (ggml_float) over f32 products.
float dotF32(const void* w, const void* a, int64_t n) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i)
        sum += static_cast<double>(loadValue<float>(w, i) * loadValue<float>(a, i));
    return static_cast<float>(sum);
}

template <float (*toFloat)(uint16_t)> float dotHalves(const void* w, const void* a, int64_t n) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i)
        sum += static_cast<double>(toFloat(loadValue<uint16_t>(w, i)) *
                                   toFloat(loadValue<uint16_t>(a, i)));
    return static_cast<float>(sum);
}

float dotQ4_0(const void* w, const void* a, int64_t blocks) {
    float sum = 0.0f;
    for (int64_t b = 0; b < blocks; ++b) {
        const auto x = loadBlock<BlockQ4_0>(w, b);
        const auto y = loadBlock<BlockQ8_0>(a, b);
        int sumLow = 0, sumHigh = 0;
        for (int j = 0; j < 16; ++j) {
            sumLow += ((x.qs[j] & 0x0f) - 8) * y.qs[j];
            sumHigh += ((x.qs[j] >> 4) - 8) * y.qs[j + 16];
        }
        sum += static_cast<float>(sumLow + sumHigh) * fp16ToFp32(x.d) * fp16ToFp32(y.d);
    }
    return sum;
}

float dotQ4_1(const void* w, const void* a, int64_t blocks) {
    float sum = 0.0f;
    for (int64_t b = 0; b < blocks; ++b) {
        const auto x = loadBlock<BlockQ4_1>(w, b);
        const auto y = loadBlock<BlockQ8_1>(a, b);
        int sumLow = 0, sumHigh = 0;
        for (int j = 0; j < 16; ++j) {
            sumLow += (x.qs[j] & 0x0f) * y.qs[j];
            sumHigh += (x.qs[j] >> 4) * y.qs[j + 16];
        }
        sum += fp16ToFp32(x.d) * fp16ToFp32(y.d) * static_cast<float>(sumLow + sumHigh) +
               fp16ToFp32(x.m) * fp16ToFp32(y.s);
    }
    return sum;
}

float dotQ5_0(const void* w, const void* a, int64_t blocks) {
    float sum = 0.0f;
    for (int64_t b = 0; b < blocks; ++b) {
        const auto x = loadBlock<BlockQ5_0>(w, b);
        const auto y = loadBlock<BlockQ8_0>(a, b);
        int sumLow = 0, sumHigh = 0;
        for (int j = 0; j < 16; ++j) {
            sumLow += (((x.qs[j] & 0x0f) | q5HighBit(x.qh, j)) - 16) * y.qs[j];
            sumHigh += (((x.qs[j] >> 4) | q5HighBit(x.qh, j + 16)) - 16) * y.qs[j + 16];
        }
        sum += fp16ToFp32(x.d) * fp16ToFp32(y.d) * static_cast<float>(sumLow + sumHigh);
    }
    return sum;
}

float dotQ5_1(const void* w, const void* a, int64_t blocks) {
    float sum = 0.0f;
    for (int64_t b = 0; b < blocks; ++b) {
        const auto x = loadBlock<BlockQ5_1>(w, b);
        const auto y = loadBlock<BlockQ8_1>(a, b);
        int sumLow = 0, sumHigh = 0;
        for (int j = 0; j < 16; ++j) {
            sumLow += ((x.qs[j] & 0x0f) | q5HighBit(x.qh, j)) * y.qs[j];
            sumHigh += ((x.qs[j] >> 4) | q5HighBit(x.qh, j + 16)) * y.qs[j + 16];
        }
        sum += fp16ToFp32(x.d) * fp16ToFp32(y.d) * static_cast<float>(sumLow + sumHigh) +
               fp16ToFp32(x.m) * fp16ToFp32(y.s);
    }
    return sum;
}

float dotQ8_0(const void* w, const void* a, int64_t blocks) {
    float sum = 0.0f;
    for (int64_t b = 0; b < blocks; ++b) {
        const auto x = loadBlock<BlockQ8_0>(w, b);
        const auto y = loadBlock<BlockQ8_0>(a, b);
        int sumi = 0;
        for (int j = 0; j < 32; ++j)
            sumi += x.qs[j] * y.qs[j];
        sum += static_cast<float>(sumi) * (fp16ToFp32(x.d) * fp16ToFp32(y.d));
    }
    return sum;
}

float dotIQ4_NL(const void* w, const void* a, int64_t blocks) {
    float sum = 0.0f;
    for (int64_t b = 0; b < blocks; ++b) {
        const auto x = loadBlock<BlockIQ4_NL>(w, b);
        const auto y = loadBlock<BlockQ8_0>(a, b);
        const float d = fp16ToFp32(y.d) * fp16ToFp32(x.d);
        int sumLow = 0, sumHigh = 0;
        for (int j = 0; j < 16; ++j) {
            sumLow += y.qs[j] * kIq4NlValues[x.qs[j] & 0x0f];
            sumHigh += y.qs[j + 16] * kIq4NlValues[x.qs[j] >> 4];
        }
        sum += d * static_cast<float>(sumLow + sumHigh);
    }
    return sum;
}

float dotQ2_K(const void* w, const void* a, int64_t blocks) {
    float sum = 0.0f;
    for (int64_t b = 0; b < blocks; ++b) {
        const auto x = loadBlock<BlockQ2_K>(w, b);
        const auto y = loadBlock<BlockQ8_K>(a, b);
        int minSum = 0;
        for (int j = 0; j < 16; ++j)
            minSum += y.bsums[j] * (x.scales[j] >> 4);
        const float dAll = y.d * fp16ToFp32(x.d);
        const float dMin = y.d * fp16ToFp32(x.dmin);
        int isum = 0;
        int sub = 0;
        const int8_t* q8 = y.qs;
        for (int half = 0; half < 2; ++half) {
            const uint8_t* q2 = x.qs + 32 * half;
            for (int shift = 0; shift < 8; shift += 2) {
                for (int part = 0; part < 2; ++part) { // values 0..15, then 16..31 of q2
                    int subSum = 0;
                    for (int l = 16 * part; l < 16 * part + 16; ++l)
                        subSum += q8[l] * ((q2[l] >> shift) & 3);
                    isum += (x.scales[sub++] & 0x0f) * subSum;
                }
                q8 += 32;
            }
        }
        sum += dAll * static_cast<float>(isum) - dMin * static_cast<float>(minSum);
    }
    return sum;
}

// ggml's eight-lane accumulation of one super-block: lane l sums scale(i) * q8[i] * q[i] over the
// values i = l (mod 8), in groups of `group` values sharing one scale.
struct Lanes {
    int32_t lane[8] = {};
    void add(const int8_t* q, const int8_t* q8, int scale, int group) {
        for (int start = 0; start < group; start += 8)
            for (int l = 0; l < 8; ++l) {
                const auto product = static_cast<int16_t>(q8[start + l] * q[start + l]);
                lane[l] += scale * product;
            }
    }
};

// ggml's float side: sums[8] += d * lane per super-block; the total is sums[0] + ... + sums[7]
// added to what the mins contributed.
struct FloatLanes {
    float sums[8] = {};
    void add(float d, const Lanes& lanes) {
        for (int l = 0; l < 8; ++l)
            sums[l] += d * static_cast<float>(lanes.lane[l]);
    }
    float total(float start) const {
        for (float s : sums)
            start += s;
        return start;
    }
};

float dotQ3_K(const void* w, const void* a, int64_t blocks) {
    FloatLanes sums;
    for (int64_t b = 0; b < blocks; ++b) {
        const auto x = loadBlock<BlockQ3_K>(w, b);
        const auto y = loadBlock<BlockQ8_K>(a, b);
        int8_t q[kSuper];
        for (int i = 0; i < kSuper; ++i) {
            const int low = (x.qs[32 * (i / 128) + i % 32] >> (2 * ((i % 128) / 32))) & 3;
            const bool high = (x.hmask[i % 32] >> (i / 32)) & 1;
            q[i] = static_cast<int8_t>(low - (high ? 0 : 4));
        }
        Lanes lanes;
        for (int j = 0; j < 16; ++j)
            lanes.add(q + 16 * j, y.qs + 16 * j, q3KScale(x.scales, j), 16);
        sums.add(fp16ToFp32(x.d) * y.d, lanes);
    }
    return sums.total(0.0f);
}

// Q4_K and Q5_K: q[256] the unsigned quants; the mins come in through the block sums.
template <typename Block>
float affineKDot(const Block& x, const BlockQ8_K& y, const int8_t* q, FloatLanes& sums) {
    int minSum = 0;
    for (int j = 0; j < 16; ++j)
        minSum += y.bsums[j] * kQuantScaleMin(x.scales, j / 2).min;
    Lanes lanes;
    for (int j = 0; j < 8; ++j)
        lanes.add(q + 32 * j, y.qs + 32 * j, kQuantScaleMin(x.scales, j).scale, 32);
    sums.add(fp16ToFp32(x.d) * y.d, lanes);
    const float dMin = fp16ToFp32(x.dmin) * y.d;
    return dMin * static_cast<float>(minSum);
}

float dotQ4_K(const void* w, const void* a, int64_t blocks) {
    FloatLanes sums;
    float sum = 0.0f;
    for (int64_t b = 0; b < blocks; ++b) {
        const auto x = loadBlock<BlockQ4_K>(w, b);
        const auto y = loadBlock<BlockQ8_K>(a, b);
        int8_t q[kSuper];
        for (int i = 0; i < kSuper; ++i) {
            const uint8_t byte = x.qs[32 * (i / 64) + i % 32];
            q[i] = static_cast<int8_t>((i % 64) < 32 ? byte & 0x0f : byte >> 4);
        }
        sum -= affineKDot(x, y, q, sums);
    }
    return sums.total(sum);
}

float dotQ5_K(const void* w, const void* a, int64_t blocks) {
    FloatLanes sums;
    float sum = 0.0f;
    for (int64_t b = 0; b < blocks; ++b) {
        const auto x = loadBlock<BlockQ5_K>(w, b);
        const auto y = loadBlock<BlockQ8_K>(a, b);
        int8_t q[kSuper];
        for (int i = 0; i < kSuper; ++i) {
            const uint8_t byte = x.qs[32 * (i / 64) + i % 32];
            const int nibble = (i % 64) < 32 ? byte & 0x0f : byte >> 4;
            const int fifth = ((x.qh[i % 32] >> (i / 32)) & 1) << 4;
            q[i] = static_cast<int8_t>(nibble + fifth);
        }
        sum -= affineKDot(x, y, q, sums);
    }
    return sums.total(sum);
}

float dotQ6_K(const void* w, const void* a, int64_t blocks) {
    FloatLanes sums;
    for (int64_t b = 0; b < blocks; ++b) {
        const auto x = loadBlock<BlockQ6_K>(w, b);
        const auto y = loadBlock<BlockQ8_K>(a, b);
        int8_t q[kSuper];
        for (int half = 0; half < 2; ++half) {
            const uint8_t* ql = x.ql + 64 * half;
            const uint8_t* qh = x.qh + 32 * half;
            int8_t* out = q + 128 * half;
            for (int l = 0; l < 32; ++l) {
                out[l] = static_cast<int8_t>(((ql[l] & 0x0f) | (((qh[l] >> 0) & 3) << 4)) - 32);
                out[l + 32] =
                    static_cast<int8_t>(((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32);
                out[l + 64] = static_cast<int8_t>(((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32);
                out[l + 96] =
                    static_cast<int8_t>(((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32);
            }
        }
        Lanes lanes;
        for (int j = 0; j < 16; ++j)
            lanes.add(q + 16 * j, y.qs + 16 * j, x.scales[j], 16);
        sums.add(fp16ToFp32(x.d) * y.d, lanes);
    }
    return sums.total(0.0f);
}

float dotIQ4_XS(const void* w, const void* a, int64_t blocks) {
    float sum = 0.0f;
    for (int64_t b = 0; b < blocks; ++b) {
        const auto x = loadBlock<BlockIQ4_XS>(w, b);
        const auto y = loadBlock<BlockQ8_K>(a, b);
        const float d4d8 = fp16ToFp32(x.d) * y.d;
        for (int j = 0; j < 8; ++j) {
            const float d = d4d8 * static_cast<float>(iq4XsScale(x, j));
            const uint8_t* qs = x.qs + 16 * j;
            const int8_t* q8 = y.qs + 32 * j;
            int sumLow = 0, sumHigh = 0;
            for (int l = 0; l < 16; ++l) {
                sumLow += q8[l] * kIq4NlValues[qs[l] & 0x0f];
                sumHigh += q8[l + 16] * kIq4NlValues[qs[l] >> 4];
            }
            sum += d * static_cast<float>(sumLow + sumHigh);
        }
    }
    return sum;
}

} // namespace

DotKernel referenceDotKernel(GgmlType weightType) {
    switch (weightType) {
    case GgmlType::F32:
        return dotF32;
    case GgmlType::F16:
        return dotHalves<fp16ToFp32>;
    case GgmlType::BF16:
        return dotHalves<bf16ToFp32>;
    case GgmlType::Q4_0:
        return dotQ4_0;
    case GgmlType::Q4_1:
        return dotQ4_1;
    case GgmlType::Q5_0:
        return dotQ5_0;
    case GgmlType::Q5_1:
        return dotQ5_1;
    case GgmlType::Q8_0:
        return dotQ8_0;
    case GgmlType::IQ4_NL:
        return dotIQ4_NL;
    case GgmlType::Q2_K:
        return dotQ2_K;
    case GgmlType::Q3_K:
        return dotQ3_K;
    case GgmlType::Q4_K:
        return dotQ4_K;
    case GgmlType::Q5_K:
        return dotQ5_K;
    case GgmlType::Q6_K:
        return dotQ6_K;
    case GgmlType::IQ4_XS:
        return dotIQ4_XS;
    default:
        return nullptr;
    }
}

namespace {

// The block's exact integer sum, w taken as ggml's AMX kernels take it: Q8_0's quants, Q4_0's
// nibbles less 8, Q5_0's five bits less 16.
int32_t tileBlockSum(GgmlType weightType, const void* w, const void* a, int64_t b) {
    const auto y = loadBlock<BlockQ8_0>(a, b);
    int32_t sum = 0;
    if (weightType == GgmlType::Q8_0) {
        const auto x = loadBlock<BlockQ8_0>(w, b);
        for (int j = 0; j < kBlockValues; ++j)
            sum += x.qs[j] * y.qs[j];
        return sum;
    }
    if (weightType == GgmlType::Q5_0) {
        const auto x = loadBlock<BlockQ5_0>(w, b);
        for (int j = 0; j < 16; ++j)
            sum += (((x.qs[j] & 0x0f) | q5HighBit(x.qh, j)) - 16) * y.qs[j] +
                   (((x.qs[j] >> 4) | q5HighBit(x.qh, j + 16)) - 16) * y.qs[j + 16];
        return sum;
    }
    const auto x = loadBlock<BlockQ4_0>(w, b);
    for (int j = 0; j < 16; ++j)
        sum += ((x.qs[j] & 0x0f) - 8) * y.qs[j] + ((x.qs[j] >> 4) - 8) * y.qs[j + 16];
    return sum;
}

// A block's f16 scale: the first field of every block type here.
float weightScaleOf(GgmlType weightType, const void* w, int64_t b) {
    uint16_t half;
    std::memcpy(&half, static_cast<const uint8_t*>(w) + b * ggmlBlockBytes(weightType),
                sizeof half);
    return fp16ToFp32(half);
}

} // namespace

float referenceTileOrderDot(GgmlType weightType, const void* weights, const void* activations,
                            int64_t blocks) {
    float sum = 0.0f;
    for (int64_t b = 0; b < blocks; ++b) {
        const float scale = fp16ToFp32(loadBlock<BlockQ8_0>(activations, b).d);
        sum = std::fma(static_cast<float>(tileBlockSum(weightType, weights, activations, b)),
                       weightScaleOf(weightType, weights, b) * scale, sum);
    }
    return sum;
}

} // namespace sinkscope::quant
