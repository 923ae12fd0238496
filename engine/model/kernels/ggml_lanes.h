// ggml's lane folds, lane dot and vector exp (model/kernels/ggml_float.h says what each computes)
// as inline functions of the instruction-set level being compiled, for the kernel sources: include
// it after model/kernels/kernel_isa_begin.h, so that every copy is compiled for its own level.
#pragma once

#ifndef SINKSCOPE_ISA_NAMESPACE
#error "include model/kernels/ggml_lanes.h after model/kernels/kernel_isa_begin.h"
#endif

#include <bit>
#include <cmath>
#include <cstdint>

namespace sinkscope::SINKSCOPE_ISA_NAMESPACE::ggml {

inline float foldLanes8(const float lanes[8]) {
    float half[4];
    for (int i = 0; i < 4; ++i)
        half[i] = lanes[i + 4] + lanes[i];
    return (half[0] + half[2]) + (half[1] + half[3]);
}

inline float foldLanes16(const float lanes[16]) {
    float half[8];
    for (int i = 0; i < 8; ++i)
        half[i] = lanes[i + 8] + lanes[i];
    return foldLanes8(half);
}

inline float laneDot16(const float* a, const float* b, int n) {
    float lanes[16] = {};
    int i = 0;
    for (; i + 16 <= n; i += 16)
        for (int j = 0; j < 16; ++j)
            lanes[j] = std::fma(a[i + j], b[i + j], lanes[j]);
    for (int j = 0; i + j < n; ++j)
        lanes[j] = std::fma(a[i + j], b[i + j], lanes[j]);
    return foldLanes16(lanes);
}

// x * 2^n for |n| <= 193 with one rounding, as std::ldexp (and _mm512_scalef_ps) gives it,
// without a library call: the power of two is built from its bits, and where it would not be a
// normal float, 2^127 or 2^-100 is applied first, exactly (0.5 < |x| < 2 here, so that product
// stays a normal float). Written with selects, not branches, so that loops over it vectorize.
inline float scaleByPowerOfTwo(float x, int n) {
    const float first = n > 127 ? 0x1p127f : n < -126 ? 0x1p-100f : 1.0f;
    const int rest = n > 127 ? n - 127 : n < -126 ? n + 100 : n;
    return (x * first) * std::bit_cast<float>(static_cast<uint32_t>(rest + 127) << 23);
}

// Branch-free, for the same reason: every step is computed, and the special cases (NaN in, n out
// of range) are selected at the end.
inline float vectorExp(float x) {
    constexpr float kShift = 0x1.8p23f; // adding it rounds to an integer (round to nearest)
    const float z = std::fma(x, 0x1.715476p+0f, kShift);
    const float n = z - kShift; // round(x / ln 2)
    // r = x - n ln2, with ln2 in two parts so that the first product is exact
    const float r = std::fma(-n, 0x1.7f7d1cp-20f, std::fma(-n, 0x1.62e4p-1f, x));
    const float r2 = r * r;
    const float poly = std::fma(std::fma(std::fma(0x1.0e4020p-7f, r, 0x1.573e2ep-5f), r2,
                                         std::fma(0x1.555e66p-3f, r, 0x1.fffdb6p-2f)),
                                r2, std::fma(0x1.ffffecp-1f, r, 1.0f));
    const float bounded = !(n >= -193.0f) ? -193.0f : n > 193.0f ? 193.0f : n; // NaN: -193
    const float scaled = scaleByPowerOfTwo(poly, static_cast<int>(bounded));
    const float outside = n <= 0 ? 0.0f : INFINITY;
    return n != n ? x : std::fabs(n) > 192 ? outside : scaled;
}

} // namespace sinkscope::SINKSCOPE_ISA_NAMESPACE::ggml
