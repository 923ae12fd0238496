// Random rows of every weight type and their activations, for the tests of the dot products and
// the matrix products (model/quant_dot.h, model/kernels/kernel_table.h).
#pragma once

#include "gguf/dequantize.h"
#include "gguf/ggml_types.h"
#include "model/quant_dot.h"

#include <QtTest>

#include <bit>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace sinkscope::test {

using Bytes = std::vector<uint8_t>;

inline const GgmlType kWeightTypes[] = {
    GgmlType::F32,  GgmlType::F16,  GgmlType::BF16, GgmlType::Q4_0,   GgmlType::Q4_1,
    GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0, GgmlType::IQ4_NL, GgmlType::Q2_K,
    GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K,   GgmlType::IQ4_XS};

inline std::vector<float> randomValues(size_t count, float spread, std::mt19937& generator) {
    std::normal_distribution<float> normal(0.0f, spread);
    std::vector<float> values(count);
    for (float& value : values)
        value = normal(generator);
    return values;
}

// Byte offsets of the f16 scales in a block of `type` (ggml-common.h); all other bytes are quants
// or packed sub-block scales, where any bit pattern is valid.
inline std::vector<int> halfScaleOffsets(GgmlType type) {
    switch (type) {
    case GgmlType::Q4_1:
    case GgmlType::Q5_1:
    case GgmlType::Q4_K:
    case GgmlType::Q5_K:
        return {0, 2};
    case GgmlType::Q2_K:
        return {80, 82};
    case GgmlType::Q3_K:
        return {108};
    case GgmlType::Q6_K:
        return {208};
    default:
        return {0};
    }
}

// A row of n values of `type` from random bytes: every quant and sub-block scale bit pattern,
// with the f16 scales (and F16 / BF16 values) set to random finite values of size ~spread.
inline Bytes randomRow(GgmlType type, int64_t n, float spread, std::mt19937& generator) {
    Bytes row(*ggmlByteSize(type, n));
    for (uint8_t& byte : row)
        byte = static_cast<uint8_t>(generator());
    std::normal_distribution<float> normal(0.0f, spread);
    const auto putHalf = [&row](size_t at, uint16_t bits) {
        row[at] = static_cast<uint8_t>(bits & 0xff);
        row[at + 1] = static_cast<uint8_t>(bits >> 8);
    };
    if (type == GgmlType::F32) {
        const std::vector<float> values = randomValues(n, spread, generator);
        std::memcpy(row.data(), values.data(), row.size());
    } else if (type == GgmlType::F16 || type == GgmlType::BF16) {
        for (int64_t i = 0; i < n; ++i)
            putHalf(2 * i, type == GgmlType::F16 ? fp32ToFp16(normal(generator))
                                                 : fp32ToBf16(normal(generator)));
    } else {
        const auto blockBytes = static_cast<size_t>(ggmlBlockBytes(type));
        for (size_t block = 0; block < row.size(); block += blockBytes)
            for (int offset : halfScaleOffsets(type))
                putHalf(block + offset, fp32ToFp16(normal(generator)));
    }
    return row;
}

// x[n] quantized (or converted) as the products quantize it for weights of `type`.
inline Bytes activationsFor(GgmlType type, const std::vector<float>& x) {
    Bytes bytes(*ggmlByteSize(activationType(type), x.size()));
    quantizeActivations(type, x.data(), bytes.data(), int64_t(x.size()));
    return bytes;
}

// Fails the running test unless `got` equals `expected` bit for bit (naming the first output that
// differs).
inline void requireSameBits(const std::vector<float>& got, const std::vector<float>& expected,
                            const QString& what) {
    QCOMPARE(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i)
        QVERIFY2(std::bit_cast<uint32_t>(got[i]) == std::bit_cast<uint32_t>(expected[i]),
                 qPrintable(QStringLiteral("%1, output %2: %3, expected %4")
                                .arg(what)
                                .arg(i)
                                .arg(got[i], 0, 'g', 9)
                                .arg(expected[i], 0, 'g', 9)));
}

} // namespace sinkscope::test
