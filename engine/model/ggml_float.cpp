#include "model/ggml_float.h"

#include <algorithm>
#include <cmath>

namespace sinkscope::ggml {

float foldLanes8(const float lanes[8]) {
    float half[4];
    for (int i = 0; i < 4; ++i)
        half[i] = lanes[i + 4] + lanes[i];
    return (half[0] + half[2]) + (half[1] + half[3]);
}

float foldLanes16(const float lanes[16]) {
    float half[8];
    for (int i = 0; i < 8; ++i)
        half[i] = lanes[i + 8] + lanes[i];
    return foldLanes8(half);
}

float laneDot16(const float* a, const float* b, int n) {
    float lanes[16] = {};
    int i = 0;
    for (; i + 16 <= n; i += 16)
        for (int j = 0; j < 16; ++j)
            lanes[j] = std::fma(a[i + j], b[i + j], lanes[j]);
    for (int j = 0; i + j < n; ++j)
        lanes[j] = std::fma(a[i + j], b[i + j], lanes[j]);
    return foldLanes16(lanes);
}

float vectorExp(float x) {
    constexpr float kShift = 0x1.8p23f; // adding it rounds to an integer (round to nearest)
    const float z = std::fma(x, 0x1.715476p+0f, kShift);
    const float n = z - kShift; // round(x / ln 2)
    if (std::isnan(n)) return x;
    if (std::fabs(n) > 192) return n <= 0 ? 0.0f : INFINITY;
    // r = x - n ln2, with ln2 in two parts so that the first product is exact
    const float r = std::fma(-n, 0x1.7f7d1cp-20f, std::fma(-n, 0x1.62e4p-1f, x));
    const float r2 = r * r;
    const float poly = std::fma(std::fma(std::fma(0x1.0e4020p-7f, r, 0x1.573e2ep-5f), r2,
                                         std::fma(0x1.555e66p-3f, r, 0x1.fffdb6p-2f)),
                                r2, std::fma(0x1.ffffecp-1f, r, 1.0f));
    return std::ldexp(poly, static_cast<int>(n)); // _mm512_scalef_ps: exact scaling, one rounding
}

void softmaxRow(float* x, int n) {
    const float maxValue = *std::max_element(x, x + n);
    double sum = 0;
    for (int start = 0; start < n; start += 16) {
        float chunk[16] = {};
        for (int j = 0; j < 16 && start + j < n; ++j) {
            x[start + j] = vectorExp(x[start + j] - maxValue);
            chunk[j] = x[start + j];
        }
        sum += static_cast<double>(foldLanes16(chunk));
    }
    const auto inverse = static_cast<float>(1.0 / sum);
    for (int i = 0; i < n; ++i)
        x[i] *= inverse;
}

void swiglu(float* gate, const float* up, int n) {
    const int vectorEnd = n / 16 * 16;
    for (int i = 0; i < vectorEnd; ++i)
        gate[i] = gate[i] / (1.0f + vectorExp(-gate[i])) * up[i];
    for (int i = vectorEnd; i < n; ++i)
        gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

} // namespace sinkscope::ggml
