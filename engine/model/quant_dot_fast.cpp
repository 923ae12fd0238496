// The default dot kernels: the reference arithmetic (model/quant_dot_ref.cpp) rearranged for the
// vectorizer, without target intrinsics. Blocks are read in place (byte offsets of the layouts
// in gguf/quant_blocks.h). Each block's quants are unpacked 32 at a time with GCC / Clang vector
// extensions (as in ops.h: byte shifts and masks defeat the auto-vectorizer) into int8 arrays,
// then multiplied with the activations' int8 quants: in dot32's fixed-length loop, which the
// compiler turns into multiply-add instructions, or in the eight int32 lanes the K-quant kernels
// keep. The integer sums are the reference's, regrouped (integer addition is exact), and the
// float steps are the reference's in the same order, so every quantized kernel returns its
// reference's bits. F32 / F16 / BF16 sum in float lanes instead of the reference's double.
#include "model/quant_dot_kernels.h"

#include "gguf/quant_blocks.h"

#include <cstddef>
#include <cstring>

namespace sinkscope::quant {

namespace {

using Bytes16 = uint8_t __attribute__((vector_size(16)));
using Bytes32 = uint8_t __attribute__((vector_size(32)));
using Quants16 = int8_t __attribute__((vector_size(16)));
using Quants32 = int8_t __attribute__((vector_size(32)));
using Products16 = int16_t __attribute__((vector_size(32)));
using Wide16 = int32_t __attribute__((vector_size(64)));
using LaneVector = int32_t __attribute__((vector_size(32)));

const uint8_t* bytesOf(const void* p) {
    return static_cast<const uint8_t*>(p);
}
const int8_t* quantsAt(const uint8_t* p) {
    return reinterpret_cast<const int8_t*>(p);
}

float halfAt(const uint8_t* p) {
    return fp16ToFp32(static_cast<uint16_t>(p[0] | (p[1] << 8)));
}
float floatAt(const uint8_t* p) {
    float value;
    std::memcpy(&value, p, sizeof value);
    return value;
}

int dot32(const int8_t* a, const int8_t* b) {
    int sum = 0;
    for (int k = 0; k < 32; ++k)
        sum += a[k] * b[k];
    return sum;
}

// Eight int32 lanes as ggml's K-quant kernels keep them: lane l gathers the values i = l mod 8.
// They are accumulated as sixteen (i mod 16) and folded once at the end: integer sums, so the
// lanes are the same.
struct Lanes {
    Wide16 sixteen = {};
    // 16 values (q[16], q8[16]) sharing one scale. |q8| <= 127 and |q| <= 64: the products fit
    // int16.
    void add16(const int8_t* q, const int8_t* q8, int scale) {
        Quants16 a, b;
        std::memcpy(&a, q, sizeof a);
        std::memcpy(&b, q8, sizeof b);
        const Products16 products =
            __builtin_convertvector(a, Products16) * __builtin_convertvector(b, Products16);
        sixteen += scale * __builtin_convertvector(products, Wide16);
    }
    // 32 values sharing one scale.
    void add32(const int8_t* q, const int8_t* q8, int scale) {
        add16(q, q8, scale);
        add16(q + 16, q8 + 16, scale);
    }
    LaneVector lanes() const {
        return __builtin_shufflevector(sixteen, sixteen, 0, 1, 2, 3, 4, 5, 6, 7) +
               __builtin_shufflevector(sixteen, sixteen, 8, 9, 10, 11, 12, 13, 14, 15);
    }
};

struct FloatLanes {
    float sums[8] = {};
    void add(float d, const Lanes& lanes) {
        const LaneVector lane = lanes.lanes();
        for (int l = 0; l < 8; ++l)
            sums[l] += d * static_cast<float>(lane[l]);
    }
    float total(float start) const {
        for (float s : sums)
            start += s;
        return start;
    }
};

Bytes16 load16(const uint8_t* p) {
    Bytes16 v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
Bytes32 load32(const uint8_t* p) {
    Bytes32 v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
// Each unpacker's 32 quants go to an array in one store, which the dot loops read back whole.
void store(int8_t q[32], Quants32 v) {
    std::memcpy(q, &v, sizeof v);
}

// {low[0..15], high[0..15]}
Bytes32 join(Bytes16 low, Bytes16 high) {
    return __builtin_shufflevector(low, high, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
                                   16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31);
}

// The nibbles of a 32-value block: value j < 16 is the low nibble of qs[j], j + 16 the high one.
Bytes32 nibbles(const uint8_t* qs) {
    const Bytes16 packed = load16(qs);
    return join(packed & 0x0f, packed >> 4);
}

// Q5_0 / Q5_1: 16 where bit j of the little-endian qh[4] is set, else 0, for j = 0..31.
Bytes32 fifthBits(const uint8_t* qh) {
    Bytes16 four = {};
    std::memcpy(&four, qh, 4);
    const Bytes32 spread =
        __builtin_shufflevector(four, four, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2,
                                2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    const Bytes32 bit = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128,
                         1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
    return (Bytes32)((spread & bit) != 0) & 16;
}

Quants32 minus(Bytes32 levels, int offset) {
    return (Quants32)levels - static_cast<int8_t>(offset);
}

// The IQ4 levels of 32 nibbles: a select per level (a portable table lookup; byte shuffles
// would need target intrinsics).
Quants32 iq4Levels(Bytes32 indices) {
    Quants32 levels = {};
    for (int v = 0; v < 16; ++v)
        levels |= (Quants32)(indices == static_cast<uint8_t>(v)) & kIq4NlValues[v];
    return levels;
}

// Every block starts with its f16 d (f32 for Q8_K) except Q2_K, Q3_K and Q6_K; the offsets of
// the other fields are named where they are read.
constexpr size_t kQ8_0Bytes = sizeof(BlockQ8_0);
constexpr size_t kQ8_0Quants = offsetof(BlockQ8_0, qs);
constexpr size_t kQ8_1Bytes = sizeof(BlockQ8_1);
constexpr size_t kQ8_1Sum = offsetof(BlockQ8_1, s);
constexpr size_t kQ8_1Quants = offsetof(BlockQ8_1, qs);
constexpr size_t kQ8KBytes = sizeof(BlockQ8_K);
constexpr size_t kQ8KQuants = offsetof(BlockQ8_K, qs);
constexpr size_t kQ8KSums = offsetof(BlockQ8_K, bsums);

float dotQ4_0(const void* w, const void* a, int64_t blocks) {
    float sum = 0.0f;
    for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* x = bytesOf(w) + b * sizeof(BlockQ4_0);
        const uint8_t* y = bytesOf(a) + b * kQ8_0Bytes;
        int8_t q[32];
        store(q, minus(nibbles(x + offsetof(BlockQ4_0, qs)), 8));
        sum += static_cast<float>(dot32(q, quantsAt(y + kQ8_0Quants))) * halfAt(x) * halfAt(y);
    }
    return sum;
}

float dotQ4_1(const void* w, const void* a, int64_t blocks) {
    float sum = 0.0f;
    for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* x = bytesOf(w) + b * sizeof(BlockQ4_1);
        const uint8_t* y = bytesOf(a) + b * kQ8_1Bytes;
        int8_t q[32];
        store(q, minus(nibbles(x + offsetof(BlockQ4_1, qs)), 0));
        const int sumi = dot32(q, quantsAt(y + kQ8_1Quants));
        sum += halfAt(x) * halfAt(y) * static_cast<float>(sumi) +
               halfAt(x + offsetof(BlockQ4_1, m)) * halfAt(y + kQ8_1Sum);
    }
    return sum;
}

float dotQ5_0(const void* w, const void* a, int64_t blocks) {
    float sum = 0.0f;
    for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* x = bytesOf(w) + b * sizeof(BlockQ5_0);
        const uint8_t* y = bytesOf(a) + b * kQ8_0Bytes;
        int8_t q[32];
        store(q,
              minus(nibbles(x + offsetof(BlockQ5_0, qs)) | fifthBits(x + offsetof(BlockQ5_0, qh)),
                    16));
        sum += halfAt(x) * halfAt(y) * static_cast<float>(dot32(q, quantsAt(y + kQ8_0Quants)));
    }
    return sum;
}

float dotQ5_1(const void* w, const void* a, int64_t blocks) {
    float sum = 0.0f;
    for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* x = bytesOf(w) + b * sizeof(BlockQ5_1);
        const uint8_t* y = bytesOf(a) + b * kQ8_1Bytes;
        int8_t q[32];
        store(q,
              minus(nibbles(x + offsetof(BlockQ5_1, qs)) | fifthBits(x + offsetof(BlockQ5_1, qh)),
                    0));
        const int sumi = dot32(q, quantsAt(y + kQ8_1Quants));
        sum += halfAt(x) * halfAt(y) * static_cast<float>(sumi) +
               halfAt(x + offsetof(BlockQ5_1, m)) * halfAt(y + kQ8_1Sum);
    }
    return sum;
}

float dotQ8_0(const void* w, const void* a, int64_t blocks) {
    float sum = 0.0f;
    for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* x = bytesOf(w) + b * kQ8_0Bytes;
        const uint8_t* y = bytesOf(a) + b * kQ8_0Bytes;
        const int sumi = dot32(quantsAt(x + kQ8_0Quants), quantsAt(y + kQ8_0Quants));
        sum += static_cast<float>(sumi) * (halfAt(x) * halfAt(y));
    }
    return sum;
}

float dotIQ4_NL(const void* w, const void* a, int64_t blocks) {
    float sum = 0.0f;
    for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* x = bytesOf(w) + b * sizeof(BlockIQ4_NL);
        const uint8_t* y = bytesOf(a) + b * kQ8_0Bytes;
        int8_t q[32];
        store(q, iq4Levels(nibbles(x + offsetof(BlockIQ4_NL, qs))));
        const float d = halfAt(y) * halfAt(x);
        sum += d * static_cast<float>(dot32(q, quantsAt(y + kQ8_0Quants)));
    }
    return sum;
}

// The 32 two-bit quants of quarter k of half h of a Q2_K / Q3_K super-block (values
// 128h + 32k + l), from qs[32h + l] bits 2k.
Bytes32 twoBits(const uint8_t* qs, int half, int k) {
    return (load32(qs + 32 * half) >> (2 * k)) & 3;
}

float dotQ2_K(const void* w, const void* a, int64_t blocks) {
    float sum = 0.0f;
    for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* x = bytesOf(w) + b * sizeof(BlockQ2_K);
        const uint8_t* y = bytesOf(a) + b * kQ8KBytes;
        const uint8_t* scales = x + offsetof(BlockQ2_K, scales);
        const int8_t* q8 = quantsAt(y + kQ8KQuants);
        int16_t bsums[16];
        std::memcpy(bsums, y + kQ8KSums, sizeof bsums);
        int minSum = 0;
        for (int j = 0; j < 16; ++j)
            minSum += bsums[j] * (scales[j] >> 4);
        Lanes lanes; // only their total counts here: ggml sums Q2_K's products in one int
        for (int quarter = 0; quarter < 8; ++quarter) {
            int8_t q[32];
            store(q, minus(twoBits(x + offsetof(BlockQ2_K, qs), quarter / 4, quarter % 4), 0));
            const int8_t* y8 = q8 + 32 * quarter;
            lanes.add16(q, y8, scales[2 * quarter] & 0x0f);
            lanes.add16(q + 16, y8 + 16, scales[2 * quarter + 1] & 0x0f);
        }
        const LaneVector lane = lanes.lanes();
        int isum = 0;
        for (int l = 0; l < 8; ++l)
            isum += lane[l];
        const float yd = floatAt(y);
        const float dAll = yd * halfAt(x + offsetof(BlockQ2_K, d));
        const float dMin = yd * halfAt(x + offsetof(BlockQ2_K, dmin));
        sum += dAll * static_cast<float>(isum) - dMin * static_cast<float>(minSum);
    }
    return sum;
}

float dotQ3_K(const void* w, const void* a, int64_t blocks) {
    FloatLanes sums;
    for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* x = bytesOf(w) + b * sizeof(BlockQ3_K);
        const uint8_t* y = bytesOf(a) + b * kQ8KBytes;
        const uint8_t* hmask = x + offsetof(BlockQ3_K, hmask);
        const uint8_t* scales = x + offsetof(BlockQ3_K, scales);
        const int8_t* q8 = quantsAt(y + kQ8KQuants);
        Lanes lanes;
        for (int quarter = 0; quarter < 8; ++quarter) { // values 32 * quarter ...
            // q = low bits - 4, plus 4 where the high bit (bit `quarter` of hmask[l]) is set
            const Bytes32 high = (load32(hmask) >> quarter) & 1;
            const Bytes32 low = twoBits(x + offsetof(BlockQ3_K, qs), quarter / 4, quarter % 4);
            int8_t q[32];
            store(q, minus(low + (high << 2), 4));
            const int8_t* y8 = q8 + 32 * quarter;
            lanes.add16(q, y8, q3KScale(scales, 2 * quarter));
            lanes.add16(q + 16, y8 + 16, q3KScale(scales, 2 * quarter + 1));
        }
        sums.add(halfAt(x + offsetof(BlockQ3_K, d)) * floatAt(y), lanes);
    }
    return sums.total(0.0f);
}

// Q4_K / Q5_K (d, dmin and scales at the same offsets): adds the scaled lanes to `sums` and
// returns the mins' share; `unpack(sub, q)` gives sub-block sub's 32 quants.
template <typename Unpack>
float affineKDot(const uint8_t* x, const uint8_t* y, FloatLanes& sums, Unpack unpack) {
    static_assert(offsetof(BlockQ4_K, scales) == offsetof(BlockQ5_K, scales));
    static_assert(offsetof(BlockQ4_K, dmin) == offsetof(BlockQ5_K, dmin));
    const uint8_t* scales = x + offsetof(BlockQ4_K, scales);
    const int8_t* q8 = quantsAt(y + kQ8KQuants);
    int16_t bsums[16];
    std::memcpy(bsums, y + kQ8KSums, sizeof bsums);
    int minSum = 0;
    Lanes lanes;
    for (int sub = 0; sub < 8; ++sub) {
        const ScaleMin packed = kQuantScaleMin(scales, sub);
        minSum += (bsums[2 * sub] + bsums[2 * sub + 1]) * packed.min;
        int8_t q[32];
        unpack(sub, q);
        lanes.add32(q, q8 + 32 * sub, packed.scale);
    }
    const float yd = floatAt(y);
    sums.add(halfAt(x) * yd, lanes);
    return halfAt(x + offsetof(BlockQ4_K, dmin)) * yd * static_cast<float>(minSum);
}

float dotQ4_K(const void* w, const void* a, int64_t blocks) {
    FloatLanes sums;
    float sum = 0.0f;
    for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* x = bytesOf(w) + b * sizeof(BlockQ4_K);
        const uint8_t* y = bytesOf(a) + b * kQ8KBytes;
        sum -= affineKDot(x, y, sums, [x](int sub, int8_t q[32]) {
            const Bytes32 packed = load32(x + offsetof(BlockQ4_K, qs) + 32 * (sub / 2));
            store(q, minus((packed >> (4 * (sub % 2))) & 0x0f, 0));
        });
    }
    return sums.total(sum);
}

float dotQ5_K(const void* w, const void* a, int64_t blocks) {
    FloatLanes sums;
    float sum = 0.0f;
    for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* x = bytesOf(w) + b * sizeof(BlockQ5_K);
        const uint8_t* y = bytesOf(a) + b * kQ8KBytes;
        sum -= affineKDot(x, y, sums, [x](int sub, int8_t q[32]) {
            const Bytes32 packed = load32(x + offsetof(BlockQ5_K, qs) + 32 * (sub / 2));
            const Bytes32 fifth = ((load32(x + offsetof(BlockQ5_K, qh)) >> sub) & 1) << 4;
            store(q, minus(((packed >> (4 * (sub % 2))) & 0x0f) | fifth, 0));
        });
    }
    return sums.total(sum);
}

float dotQ6_K(const void* w, const void* a, int64_t blocks) {
    FloatLanes sums;
    for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* x = bytesOf(w) + b * sizeof(BlockQ6_K);
        const uint8_t* y = bytesOf(a) + b * kQ8KBytes;
        const uint8_t* ql = x + offsetof(BlockQ6_K, ql);
        const uint8_t* qh = x + offsetof(BlockQ6_K, qh);
        const int8_t* scales = quantsAt(x + offsetof(BlockQ6_K, scales));
        const int8_t* q8 = quantsAt(y + kQ8KQuants);
        // All 256 quants first (value 128h + 32k + l in quarter 4h + k), then the products.
        int8_t q[256];
        for (int quarter = 0; quarter < 8; ++quarter) {
            const int half = quarter / 4;
            const int k = quarter % 4;
            const Bytes32 low = (load32(ql + 64 * half + 32 * (k & 1)) >> (k < 2 ? 0 : 4)) & 0x0f;
            const Bytes32 high = (load32(qh + 32 * half) >> (2 * k)) & 3;
            store(q + 32 * quarter, minus(low | (high << 4), 32));
        }
        Lanes lanes;
        for (int sub = 0; sub < 16; ++sub)
            lanes.add16(q + 16 * sub, q8 + 16 * sub, scales[sub]);
        sums.add(halfAt(x + offsetof(BlockQ6_K, d)) * floatAt(y), lanes);
    }
    return sums.total(0.0f);
}

float dotIQ4_XS(const void* w, const void* a, int64_t blocks) {
    float sum = 0.0f;
    for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* x = bytesOf(w) + b * sizeof(BlockIQ4_XS);
        const uint8_t* y = bytesOf(a) + b * kQ8KBytes;
        BlockIQ4_XS header;
        std::memcpy(&header, x, offsetof(BlockIQ4_XS, qs));
        const float d4d8 = halfAt(x) * floatAt(y);
        const int8_t* q8 = quantsAt(y + kQ8KQuants);
        for (int sub = 0; sub < 8; ++sub) {
            int8_t q[32];
            store(q, iq4Levels(nibbles(x + offsetof(BlockIQ4_XS, qs) + 16 * sub)));
            const float d = d4d8 * static_cast<float>(iq4XsScale(header, sub));
            sum += d * static_cast<float>(dot32(q, q8 + 32 * sub));
        }
    }
    return sum;
}

// F32 / F16 / BF16: four accumulators of 8 float lanes (ggml's SIMD kernels also sum f32 products
// in lanes), then the lanes pairwise. `load(p, i)` gives values i..i + 7 of the row at p.
using Floats8 = float __attribute__((vector_size(32)));
using Halves8 = uint16_t __attribute__((vector_size(16)));
using Words8 = uint32_t __attribute__((vector_size(32)));

template <typename Load, typename LoadOne>
float floatLaneDot(const uint8_t* w, const uint8_t* a, int64_t n, Load load, LoadOne loadOne) {
    Floats8 acc[4] = {};
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; ++k)
            acc[k] += load(w, i + 8 * k) * load(a, i + 8 * k);
    for (; i + 8 <= n; i += 8)
        acc[0] += load(w, i) * load(a, i);
    const Floats8 lanes = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    float sum = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
                ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
    for (; i < n; ++i)
        sum += loadOne(w, i) * loadOne(a, i);
    return sum;
}

Words8 halvesAt(const uint8_t* p, int64_t i) {
    Halves8 halves;
    std::memcpy(&halves, p + 2 * i, sizeof halves);
    return __builtin_convertvector(halves, Words8);
}

Floats8 floatsAt(const uint8_t* p, int64_t i) {
    Floats8 v;
    std::memcpy(&v, p + 4 * i, sizeof v);
    return v;
}

Floats8 bf16At(const uint8_t* p, int64_t i) {
    return (Floats8)(halvesAt(p, i) << 16);
}

// fp16ToFp32 (ggml_types.h) on 8 lanes, its selects as masks.
Floats8 f16At(const uint8_t* p, int64_t i) {
    const Words8 h = halvesAt(p, i);
    const Words8 sign = (h & 0x8000u) << 16;
    const Words8 magnitude = h & 0x7fffu;
    const Words8 normal = (magnitude << 13) + (112u << 23);
    const Words8 subnormal = (Words8)(__builtin_convertvector(magnitude, Floats8) * 0x1p-24f);
    const Words8 infNan = 0x7f800000u | ((magnitude & 0x3ffu) << 13);
    const Words8 isSubnormal = (Words8)(magnitude < 0x400u); // all ones where true
    const Words8 isSpecial = (Words8)(magnitude >= 0x7c00u);
    const Words8 finite = (isSubnormal & subnormal) | (~isSubnormal & normal);
    return (Floats8)(sign | (isSpecial & infNan) | (~isSpecial & finite));
}

float dotF32(const void* w, const void* a, int64_t n) {
    return floatLaneDot(bytesOf(w), bytesOf(a), n, floatsAt,
                        [](const uint8_t* p, int64_t i) { return floatAt(p + 4 * i); });
}

float dotF16(const void* w, const void* a, int64_t n) {
    return floatLaneDot(bytesOf(w), bytesOf(a), n, f16At,
                        [](const uint8_t* p, int64_t i) { return halfAt(p + 2 * i); });
}

float dotBF16(const void* w, const void* a, int64_t n) {
    return floatLaneDot(bytesOf(w), bytesOf(a), n, bf16At, [](const uint8_t* p, int64_t i) {
        return bf16ToFp32(static_cast<uint16_t>(p[2 * i] | (p[2 * i + 1] << 8)));
    });
}

} // namespace

DotKernel fastDotKernel(GgmlType weightType) {
    switch (weightType) {
    case GgmlType::F32:
        return dotF32;
    case GgmlType::F16:
        return dotF16;
    case GgmlType::BF16:
        return dotBF16;
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

} // namespace sinkscope::quant
