// A kernel source (model/kernels/kernel_isa_begin.h), compiled once per instruction-set level. The
// default dot kernels: the integer arithmetic of the references (model/kernels/quant_dot_ref.cpp)
// with the float steps of ggml's x86-64 kernels (its AVX2 vec_dot kernels and llamafile's
// tinyBLAS, which llama.cpp runs on these CPUs), so that products match llama.cpp's bit for bit
// (model/kernels/ggml_float.h says why that matters). Written without target intrinsics: blocks are
// read in place (byte offsets of the layouts in gguf/quant_blocks.h), unpacked 32 quants at a time
// with GCC / Clang vector extensions (byte shifts and masks defeat the auto-vectorizer) into int8
// arrays, and multiplied with the activations' int8 quants in fixed-length loops that the
// compiler turns into multiply-add instructions.
//
// ggml's x86 kernels keep eight int32 lanes per block (a 32-value block, or each 32-value chunk
// of a 256-value super-block): lane l holds the products of values 4l..4l+3, each scaled by its
// sub-block's scale. Each block adds d * lane to eight float lanes with a fused multiply-add, and
// the float lanes are folded once at the end (ggml::foldLanes8); the K-quants' mins take the
// paths named at each kernel. F32 / F16 / BF16 follow tinyBLAS's AVX-512 kernels (16 lanes).
#include "gguf/quant_blocks.h"
#include "model/kernels/kernel_table.h"
#include "model/row_layout.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstring>

#include "model/kernels/kernel_isa_begin.h"

// After the region opens: compiled for its level.
#include "model/kernels/ggml_lanes.h"

namespace sinkscope::SINKSCOPE_ISA_NAMESPACE {

namespace {

using namespace sinkscope::quant;

using Bytes16 = uint8_t __attribute__((vector_size(16)));
using Bytes32 = uint8_t __attribute__((vector_size(32)));
using Quants16 = int8_t __attribute__((vector_size(16)));
using Quants32 = int8_t __attribute__((vector_size(32)));
using Products32 = int16_t __attribute__((vector_size(64)));
using Wide32 = int32_t __attribute__((vector_size(128)));

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

// Eight int32 lanes as ggml's x86 kernels keep them, over the 32-value chunks added: lane l holds
// the products of values 4l..4l+3 of each chunk. Kept per value position (32 lanes) while adding,
// folded by four at the end: integer sums, so the lanes are the same.
struct Lanes {
    Wide32 byPosition = {};
    // 32 values (q[32], q8[32]): the first 16 scaled by scaleLow, the last 16 by scaleHigh.
    // |q8| <= 127 and |q| <= 127: the products fit int16.
    void add32(const int8_t* q, const int8_t* q8, int scaleLow = 1, int scaleHigh = 1) {
        Quants32 a, b;
        std::memcpy(&a, q, sizeof a);
        std::memcpy(&b, q8, sizeof b);
        const Products32 products =
            __builtin_convertvector(a, Products32) * __builtin_convertvector(b, Products32);
        Wide32 scales;
        for (int i = 0; i < 32; ++i)
            scales[i] = i < 16 ? scaleLow : scaleHigh;
        byPosition += scales * __builtin_convertvector(products, Wide32);
    }
    int lane(int l) const {
        return (byPosition[4 * l] + byPosition[4 * l + 1]) +
               (byPosition[4 * l + 2] + byPosition[4 * l + 3]);
    }
};

// The eight float lanes: each block adds d * lane with a fused multiply-add (_mm256_fmadd_ps).
struct FloatLanes {
    float sums[8] = {};
    void add(float d, const Lanes& lanes) {
        for (int l = 0; l < 8; ++l)
            sums[l] = std::fma(d, static_cast<float>(lanes.lane(l)), sums[l]);
    }
    float total() const { return ggml::foldLanes8(sums); }
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

// The 32-value types against Q8_0 (Q5_0, Q8_0, IQ4_NL: tinyBLAS's Q0 kernel and ggml's AVX2
// vec_dot): d = d_w * d_a per block, `unpack(x, q)` gives the block's 32 quants.
template <size_t BlockBytes, typename Unpack>
float q8_0Dot(const void* w, const void* a, int64_t blocks, Unpack unpack) {
    FloatLanes sums;
    for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* x = bytesOf(w) + b * BlockBytes;
        const uint8_t* y = bytesOf(a) + b * kQ8_0Bytes;
        int8_t q[32];
        unpack(x, q);
        Lanes lanes;
        lanes.add32(q, quantsAt(y + kQ8_0Quants));
        sums.add(halfAt(x) * halfAt(y), lanes);
    }
    return sums.total();
}

// Q4_1 / Q5_1 against Q8_1: the lanes as above, and the mins' share m * s summed apart in one
// float with fused multiply-adds (ggml's `summs`), added last.
template <size_t BlockBytes, size_t MinOffset, typename Unpack>
float q8_1Dot(const void* w, const void* a, int64_t blocks, Unpack unpack) {
    FloatLanes sums;
    float minShare = 0.0f;
    for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* x = bytesOf(w) + b * BlockBytes;
        const uint8_t* y = bytesOf(a) + b * kQ8_1Bytes;
        int8_t q[32];
        unpack(x, q);
        Lanes lanes;
        lanes.add32(q, quantsAt(y + kQ8_1Quants));
        sums.add(halfAt(x) * halfAt(y), lanes);
        minShare = std::fma(halfAt(x + MinOffset), halfAt(y + kQ8_1Sum), minShare);
    }
    return sums.total() + minShare;
}

// Q4_0: llama.cpp repacks Q4_0 weights on AVX2 CPUs (eight rows interleaved, "Q4_0_8x8"), and
// those kernels keep one float per output: each block's whole integer dot times d_w * d_a, added
// with a fused multiply-add.
float dotQ4_0(const void* w, const void* a, int64_t blocks) {
    float sum = 0.0f;
    for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* x = bytesOf(w) + b * sizeof(BlockQ4_0);
        const uint8_t* y = bytesOf(a) + b * kQ8_0Bytes;
        int8_t q[32];
        store(q, minus(nibbles(x + offsetof(BlockQ4_0, qs)), 8));
        Lanes lanes;
        lanes.add32(q, quantsAt(y + kQ8_0Quants));
        int isum = 0;
        for (int l = 0; l < 8; ++l)
            isum += lanes.lane(l);
        sum = std::fma(static_cast<float>(isum), halfAt(x) * halfAt(y), sum);
    }
    return sum;
}

float dotQ4_1(const void* w, const void* a, int64_t blocks) {
    return q8_1Dot<sizeof(BlockQ4_1), offsetof(BlockQ4_1, m)>(
        w, a, blocks, [](const uint8_t* x, int8_t q[32]) {
            store(q, minus(nibbles(x + offsetof(BlockQ4_1, qs)), 0));
        });
}

float dotQ5_0(const void* w, const void* a, int64_t blocks) {
    return q8_0Dot<sizeof(BlockQ5_0)>(w, a, blocks, [](const uint8_t* x, int8_t q[32]) {
        store(q,
              minus(nibbles(x + offsetof(BlockQ5_0, qs)) | fifthBits(x + offsetof(BlockQ5_0, qh)),
                    16));
    });
}

float dotQ5_1(const void* w, const void* a, int64_t blocks) {
    return q8_1Dot<sizeof(BlockQ5_1), offsetof(BlockQ5_1, m)>(
        w, a, blocks, [](const uint8_t* x, int8_t q[32]) {
            store(q, minus(nibbles(x + offsetof(BlockQ5_1, qs)) |
                               fifthBits(x + offsetof(BlockQ5_1, qh)),
                           0));
        });
}

float dotQ8_0(const void* w, const void* a, int64_t blocks) {
    return q8_0Dot<kQ8_0Bytes>(
        w, a, blocks, [](const uint8_t* x, int8_t q[32]) { std::memcpy(q, x + kQ8_0Quants, 32); });
}

float dotIQ4_NL(const void* w, const void* a, int64_t blocks) {
    return q8_0Dot<sizeof(BlockIQ4_NL)>(w, a, blocks, [](const uint8_t* x, int8_t q[32]) {
        store(q, iq4Levels(nibbles(x + offsetof(BlockIQ4_NL, qs))));
    });
}

// The 32 two-bit quants of quarter k of half h of a Q2_K / Q3_K super-block (values
// 128h + 32k + l), from qs[32h + l] bits 2k.
Bytes32 twoBits(const uint8_t* qs, int half, int k) {
    return (load32(qs + 32 * half) >> (2 * k)) & 3;
}

// Q2_K: the mins go into the same float lanes first, lane l taking sub-blocks 2l and 2l + 1
// (min * bsum, as _mm256_madd_epi16 pairs them), with -d_a * dmin.
float dotQ2_K(const void* w, const void* a, int64_t blocks) {
    FloatLanes sums;
    for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* x = bytesOf(w) + b * sizeof(BlockQ2_K);
        const uint8_t* y = bytesOf(a) + b * kQ8KBytes;
        const uint8_t* scales = x + offsetof(BlockQ2_K, scales);
        const int8_t* q8 = quantsAt(y + kQ8KQuants);
        int16_t bsums[16];
        std::memcpy(bsums, y + kQ8KSums, sizeof bsums);
        Lanes mins;
        for (int l = 0; l < 8; ++l)
            mins.byPosition[4 * l] =
                bsums[2 * l] * (scales[2 * l] >> 4) + bsums[2 * l + 1] * (scales[2 * l + 1] >> 4);
        Lanes lanes;
        for (int quarter = 0; quarter < 8; ++quarter) {
            int8_t q[32];
            store(q, minus(twoBits(x + offsetof(BlockQ2_K, qs), quarter / 4, quarter % 4), 0));
            lanes.add32(q, q8 + 32 * quarter, scales[2 * quarter] & 0x0f,
                        scales[2 * quarter + 1] & 0x0f);
        }
        const float yd = floatAt(y);
        sums.add(-yd * halfAt(x + offsetof(BlockQ2_K, dmin)), mins);
        sums.add(yd * halfAt(x + offsetof(BlockQ2_K, d)), lanes);
    }
    return sums.total();
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
            lanes.add32(q, q8 + 32 * quarter, q3KScale(scales, 2 * quarter),
                        q3KScale(scales, 2 * quarter + 1));
        }
        sums.add(floatAt(y) * halfAt(x + offsetof(BlockQ3_K, d)), lanes);
    }
    return sums.total();
}

// Q4_K / Q5_K (d, dmin and scales at the same offsets): adds the scaled lanes to `sums`; returns
// the four sums min[2k] * bsum(2k) + min[2k + 1] * bsum(2k + 1) over the 32-value sub-blocks, as
// ggml's _mm_madd_epi16 pairs them. `unpack(sub, q)` gives sub-block sub's 32 quants.
template <typename Unpack>
std::array<int, 4> affineKDot(const uint8_t* x, const uint8_t* y, FloatLanes& sums, Unpack unpack) {
    static_assert(offsetof(BlockQ4_K, scales) == offsetof(BlockQ5_K, scales));
    static_assert(offsetof(BlockQ4_K, dmin) == offsetof(BlockQ5_K, dmin));
    const uint8_t* scales = x + offsetof(BlockQ4_K, scales);
    const int8_t* q8 = quantsAt(y + kQ8KQuants);
    int16_t bsums[16];
    std::memcpy(bsums, y + kQ8KSums, sizeof bsums);
    std::array<int, 4> minPairs = {};
    Lanes lanes;
    for (int sub = 0; sub < 8; ++sub) {
        const ScaleMin packed = kQuantScaleMin(scales, sub);
        minPairs[sub / 2] += (bsums[2 * sub] + bsums[2 * sub + 1]) * packed.min;
        int8_t q[32];
        unpack(sub, q);
        lanes.add32(q, q8 + 32 * sub, packed.scale, packed.scale);
    }
    sums.add(floatAt(y) * halfAt(x), lanes);
    return minPairs;
}

float dmin(const uint8_t* x, const uint8_t* y) {
    return -floatAt(y) * halfAt(x + offsetof(BlockQ4_K, dmin));
}

Bytes32 q4KNibbles(const uint8_t* qs, int sub) {
    return (load32(qs + 32 * (sub / 2)) >> (4 * (sub % 2))) & 0x0f;
}

// Q4_K's mins: four float lanes of their own (fused multiply-adds), folded and added last.
float dotQ4_K(const void* w, const void* a, int64_t blocks) {
    FloatLanes sums;
    float minLanes[4] = {};
    for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* x = bytesOf(w) + b * sizeof(BlockQ4_K);
        const uint8_t* y = bytesOf(a) + b * kQ8KBytes;
        const std::array<int, 4> minPairs = affineKDot(x, y, sums, [x](int sub, int8_t q[32]) {
            store(q, minus(q4KNibbles(x + offsetof(BlockQ4_K, qs), sub), 0));
        });
        for (int k = 0; k < 4; ++k)
            minLanes[k] = std::fma(dmin(x, y), static_cast<float>(minPairs[k]), minLanes[k]);
    }
    return sums.total() + ((minLanes[0] + minLanes[2]) + (minLanes[1] + minLanes[3]));
}

// Q5_K's mins: their integer total per super-block, into one float with a fused multiply-add.
float dotQ5_K(const void* w, const void* a, int64_t blocks) {
    FloatLanes sums;
    float minShare = 0.0f;
    for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* x = bytesOf(w) + b * sizeof(BlockQ5_K);
        const uint8_t* y = bytesOf(a) + b * kQ8KBytes;
        const std::array<int, 4> minPairs = affineKDot(x, y, sums, [x](int sub, int8_t q[32]) {
            const Bytes32 fifth = ((load32(x + offsetof(BlockQ5_K, qh)) >> sub) & 1) << 4;
            store(q, minus(q4KNibbles(x + offsetof(BlockQ5_K, qs), sub) | fifth, 0));
        });
        const int total = (minPairs[0] + minPairs[1]) + (minPairs[2] + minPairs[3]);
        minShare = std::fma(dmin(x, y), static_cast<float>(total), minShare);
    }
    return sums.total() + minShare;
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
        Lanes lanes;
        for (int quarter = 0; quarter < 8; ++quarter) { // values 128h + 32k + l
            const int half = quarter / 4;
            const int k = quarter % 4;
            const Bytes32 low = (load32(ql + 64 * half + 32 * (k & 1)) >> (k < 2 ? 0 : 4)) & 0x0f;
            const Bytes32 high = (load32(qh + 32 * half) >> (2 * k)) & 3;
            int8_t q[32];
            store(q, minus(low | (high << 4), 32));
            lanes.add32(q, q8 + 32 * quarter, scales[2 * quarter], scales[2 * quarter + 1]);
        }
        sums.add(floatAt(y) * halfAt(x + offsetof(BlockQ6_K, d)), lanes);
    }
    return sums.total();
}

float dotIQ4_XS(const void* w, const void* a, int64_t blocks) {
    FloatLanes sums;
    for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* x = bytesOf(w) + b * sizeof(BlockIQ4_XS);
        const uint8_t* y = bytesOf(a) + b * kQ8KBytes;
        BlockIQ4_XS header;
        std::memcpy(&header, x, offsetof(BlockIQ4_XS, qs));
        const int8_t* q8 = quantsAt(y + kQ8KQuants);
        Lanes lanes;
        for (int sub = 0; sub < 8; ++sub) {
            int8_t q[32];
            store(q, iq4Levels(nibbles(x + offsetof(BlockIQ4_XS, qs) + 16 * sub)));
            const int scale = iq4XsScale(header, sub);
            lanes.add32(q, q8 + 32 * sub, scale, scale);
        }
        sums.add(halfAt(x) * floatAt(y), lanes);
    }
    return sums.total();
}

// F32 / F16 / BF16 weights, as tinyBLAS's AVX-512 kernels sum them: 16 float lanes over
// consecutive 16-value (BF16: 32-value) chunks, folded at the end. `load(p, i, count, out)` puts
// values i .. i + count - 1 of the row at p into out; a short last chunk is padded with zeros.
using Floats8 = float __attribute__((vector_size(32)));
using Halves8 = uint16_t __attribute__((vector_size(16)));
using Words8 = uint32_t __attribute__((vector_size(32)));

// F32 and F16: lane j takes values i = j (mod 16), each with a fused multiply-add.
template <typename Load>
float sixteenLaneDot(const uint8_t* w, const uint8_t* a, int64_t n, Load load) {
    float lanes[16] = {};
    for (int64_t i = 0; i < n; i += 16) {
        const int count = static_cast<int>(std::min<int64_t>(16, n - i));
        float x[16] = {}, y[16] = {};
        load(w, i, count, x);
        load(a, i, count, y);
        for (int j = 0; j < 16; ++j)
            lanes[j] = std::fma(x[j], y[j], lanes[j]);
    }
    return ggml::foldLanes16(lanes);
}

Words8 halvesAt(const uint8_t* p, int64_t i) {
    Halves8 halves;
    std::memcpy(&halves, p + 2 * i, sizeof halves);
    return __builtin_convertvector(halves, Words8);
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
    return sixteenLaneDot(bytesOf(w), bytesOf(a), n,
                          [](const uint8_t* p, int64_t i, int count, float out[16]) {
                              std::memcpy(out, p + 4 * i, sizeof(float) * count);
                          });
}

float dotF16(const void* w, const void* a, int64_t n) {
    return sixteenLaneDot(bytesOf(w), bytesOf(a), n,
                          [](const uint8_t* p, int64_t i, int count, float out[16]) {
                              if (count == 16) {
                                  const Floats8 low = f16At(p, i), high = f16At(p, i + 8);
                                  std::memcpy(out, &low, sizeof low);
                                  std::memcpy(out + 8, &high, sizeof high);
                                  return;
                              }
                              for (int j = 0; j < count; ++j)
                                  out[j] = halfAt(p + 2 * (i + j));
                          });
}

// BF16: _mm512_dpbf16_ps over 32-value chunks: lane j adds the (exact) product of values 2j + 1,
// then that of 2j, each addition rounded.
float dotBF16(const void* w, const void* a, int64_t n) {
    const auto load = [](const uint8_t* p, int64_t i) {
        return bf16ToFp32(static_cast<uint16_t>(p[2 * i] | (p[2 * i + 1] << 8)));
    };
    float lanes[16] = {};
    for (int64_t i = 0; i < n; i += 32)
        for (int j = 0; j < 16; ++j)
            for (const int64_t v : {i + 2 * j + 1, i + 2 * j})
                if (v < n) lanes[j] += load(bytesOf(w), v) * load(bytesOf(a), v);
    return ggml::foldLanes16(lanes);
}

struct TypeKernels {
    DotKernel dot = nullptr;
    decltype(&dotRows<dotF32>) rows = nullptr;
};

template <DotKernel Kernel> TypeKernels kernelsOf() {
    return {Kernel, dotRows<Kernel>};
}

TypeKernels typeKernels(GgmlType weightType) {
    switch (weightType) {
    case GgmlType::F32:
        return kernelsOf<dotF32>();
    case GgmlType::F16:
        return kernelsOf<dotF16>();
    case GgmlType::BF16:
        return kernelsOf<dotBF16>();
    case GgmlType::Q4_0:
        return kernelsOf<dotQ4_0>();
    case GgmlType::Q4_1:
        return kernelsOf<dotQ4_1>();
    case GgmlType::Q5_0:
        return kernelsOf<dotQ5_0>();
    case GgmlType::Q5_1:
        return kernelsOf<dotQ5_1>();
    case GgmlType::Q8_0:
        return kernelsOf<dotQ8_0>();
    case GgmlType::IQ4_NL:
        return kernelsOf<dotIQ4_NL>();
    case GgmlType::Q2_K:
        return kernelsOf<dotQ2_K>();
    case GgmlType::Q3_K:
        return kernelsOf<dotQ3_K>();
    case GgmlType::Q4_K:
        return kernelsOf<dotQ4_K>();
    case GgmlType::Q5_K:
        return kernelsOf<dotQ5_K>();
    case GgmlType::Q6_K:
        return kernelsOf<dotQ6_K>();
    case GgmlType::IQ4_XS:
        return kernelsOf<dotIQ4_XS>();
    default:
        return {};
    }
}

DotKernel dotKernel(GgmlType weightType) {
    return typeKernels(weightType).dot;
}

void quantRows(GgmlType type, const uint8_t* rows, size_t rowBytes, int64_t blocks,
               const void* activations, float* out, int64_t rowBegin, int64_t rowEnd) {
    typeKernels(type).rows(rows, rowBytes, blocks, activations, out, rowBegin, rowEnd);
}

// Q4_0 rows in RowLayout::Q4_0x8: each row's blocks gathered back into row order, then dotQ4_0
// (the levels with intrinsics read the eight rows of a run together instead).
void q4_0x8Rows(const uint8_t* rows, int64_t blocks, const void* activations, float* out,
                int64_t rowBegin, int64_t rowEnd) {
    uint8_t row[kQ4_0x8MaxBlocks * sizeof(BlockQ4_0)];
    for (int64_t r = rowBegin; r < rowEnd; ++r) {
        for (int64_t b = 0; b < blocks; ++b)
            std::memcpy(row + b * sizeof(BlockQ4_0), rows + q4_0x8Offset(blocks, r, b),
                        sizeof(BlockQ4_0));
        out[r] = dotQ4_0(row, activations, blocks);
    }
}

} // namespace

#include "model/kernels/kernel_isa_end.h"

void fillDotKernels(KernelTable& table) {
    table.dot = dotKernel;
    table.quantRows = quantRows;
    table.q4_0x8Rows = q4_0x8Rows;
}

} // namespace sinkscope::SINKSCOPE_ISA_NAMESPACE
