// ggml tensor types: fp16 conversion, block layouts, byte sizes and the Q8_0 / Q4_0 codecs.
#include "gguf/ggml_types.h"

#include <QtTest>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#if defined(__F16C__)
#include <immintrin.h>
#endif

using namespace sinkscope;

namespace {

// One Q8_0 block: f16 scale, then 32 int8 quants.
std::vector<uint8_t> q8Block(uint16_t scaleBits, const std::vector<int8_t>& quants) {
    std::vector<uint8_t> block{static_cast<uint8_t>(scaleBits & 0xff),
                               static_cast<uint8_t>(scaleBits >> 8)};
    for (int8_t q : quants)
        block.push_back(static_cast<uint8_t>(q));
    return block;
}

uint16_t blockScaleBits(const std::vector<uint8_t>& block) {
    return static_cast<uint16_t>(block[0] | (block[1] << 8));
}

std::vector<float> randomValues(size_t count, float spread, uint32_t seed) {
    std::mt19937 generator(seed);
    std::normal_distribution<float> normal(0.0f, spread);
    std::vector<float> values(count);
    for (float& value : values)
        value = normal(generator);
    return values;
}

} // namespace

class TestGgmlTypes : public QObject {
    Q_OBJECT

private slots:
    void fp32ToFp16Table_data();
    void fp32ToFp16Table();
    void fp16ToFp32Table_data();
    void fp16ToFp32Table();
    void fp16RoundTripsEveryHalf();
    void fp16NanStaysNan();
    void fp16MatchesHardwareConversion();
    void typeIdsAndNames();
    void blockLayouts();
    void byteSize_data();
    void byteSize();
    void dequantizeQ8_0HandMadeBlock();
    void dequantizeQ4_0HandMadeBlock();
    void quantizeQ8_0KnownBlock();
    void quantizeQ4_0KnownBlock();
    void quantizeQ4_0KeepsSignOfFirstLargest();
    void quantizeZeroBlocks();
    void quantizeErrorBounds_data();
    void quantizeErrorBounds();
    void f16AndF32Rows();
    void unsupportedRowsThrow();
};

void TestGgmlTypes::fp32ToFp16Table_data() {
    QTest::addColumn<float>("input");
    QTest::addColumn<uint16_t>("expected");
    const float ulpAtOne = std::ldexp(1.0f, -10);
    QTest::newRow("+0") << 0.0f << uint16_t(0x0000);
    QTest::newRow("-0") << -0.0f << uint16_t(0x8000);
    QTest::newRow("1") << 1.0f << uint16_t(0x3c00);
    QTest::newRow("-2") << -2.0f << uint16_t(0xc000);
    QTest::newRow("0.1") << 0.1f << uint16_t(0x2e66);
    QTest::newRow("max half 65504") << 65504.0f << uint16_t(0x7bff);
    QTest::newRow("65519 rounds down to max") << 65519.0f << uint16_t(0x7bff);
    QTest::newRow("65520 ties to even: inf") << 65520.0f << uint16_t(0x7c00);
    QTest::newRow("1e6 overflows to inf") << 1e6f << uint16_t(0x7c00);
    QTest::newRow("-1e6 overflows to -inf") << -1e6f << uint16_t(0xfc00);
    QTest::newRow("+inf") << std::numeric_limits<float>::infinity() << uint16_t(0x7c00);
    QTest::newRow("-inf") << -std::numeric_limits<float>::infinity() << uint16_t(0xfc00);
    QTest::newRow("smallest normal 2^-14") << std::ldexp(1.0f, -14) << uint16_t(0x0400);
    QTest::newRow("largest subnormal") << 1023.0f * std::ldexp(1.0f, -24) << uint16_t(0x03ff);
    QTest::newRow("smallest subnormal 2^-24") << std::ldexp(1.0f, -24) << uint16_t(0x0001);
    QTest::newRow("-smallest subnormal") << -std::ldexp(1.0f, -24) << uint16_t(0x8001);
    QTest::newRow("2^-25 ties to even: 0") << std::ldexp(1.0f, -25) << uint16_t(0x0000);
    QTest::newRow("1.5 * 2^-25 rounds up") << 1.5f * std::ldexp(1.0f, -25) << uint16_t(0x0001);
    QTest::newRow("3 * 2^-25 ties to even: 2") << 3.0f * std::ldexp(1.0f, -25) << uint16_t(0x0002);
    QTest::newRow("2^-26 underflows") << std::ldexp(1.0f, -26) << uint16_t(0x0000);
    QTest::newRow("f32 subnormal") << 1e-40f << uint16_t(0x0000);
    QTest::newRow("subnormal to normal carry")
        << 1023.5f * std::ldexp(1.0f, -24) << uint16_t(0x0400);
    QTest::newRow("1 + half ulp ties to even") << 1.0f + ulpAtOne / 2 << uint16_t(0x3c00);
    QTest::newRow("1 + 3 half ulps ties to even") << 1.0f + 3 * ulpAtOne / 2 << uint16_t(0x3c02);
    QTest::newRow("just above a tie rounds up")
        << 1.0f + ulpAtOne / 2 + std::ldexp(1.0f, -20) << uint16_t(0x3c01);
    QTest::newRow("2049 ties to 2048") << 2049.0f << uint16_t(0x6800);
    QTest::newRow("2051 ties to 2052") << 2051.0f << uint16_t(0x6802);
}

void TestGgmlTypes::fp32ToFp16Table() {
    QFETCH(float, input);
    QFETCH(uint16_t, expected);
    QCOMPARE(fp32ToFp16(input), expected);
}

void TestGgmlTypes::fp16ToFp32Table_data() {
    QTest::addColumn<uint16_t>("half");
    QTest::addColumn<float>("expected");
    QTest::newRow("-0") << uint16_t(0x8000) << -0.0f;
    QTest::newRow("1") << uint16_t(0x3c00) << 1.0f;
    QTest::newRow("1 + ulp") << uint16_t(0x3c01) << 1.0f + std::ldexp(1.0f, -10);
    QTest::newRow("-1.5") << uint16_t(0xbe00) << -1.5f;
    QTest::newRow("max") << uint16_t(0x7bff) << 65504.0f;
    QTest::newRow("smallest normal") << uint16_t(0x0400) << std::ldexp(1.0f, -14);
    QTest::newRow("smallest subnormal") << uint16_t(0x0001) << std::ldexp(1.0f, -24);
    QTest::newRow("largest subnormal") << uint16_t(0x03ff) << 1023.0f * std::ldexp(1.0f, -24);
    QTest::newRow("-subnormal") << uint16_t(0x8200) << -std::ldexp(1.0f, -15);
    QTest::newRow("inf") << uint16_t(0x7c00) << std::numeric_limits<float>::infinity();
    QTest::newRow("-inf") << uint16_t(0xfc00) << -std::numeric_limits<float>::infinity();
}

void TestGgmlTypes::fp16ToFp32Table() {
    QFETCH(uint16_t, half);
    QFETCH(float, expected);
    const float value = fp16ToFp32(half);
    QCOMPARE(std::bit_cast<uint32_t>(value), std::bit_cast<uint32_t>(expected)); // keeps -0
}

void TestGgmlTypes::fp16RoundTripsEveryHalf() {
    for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
        const auto half = static_cast<uint16_t>(bits);
        const bool isNan = (half & 0x7c00) == 0x7c00 && (half & 0x03ff) != 0;
        if (isNan) continue; // fp16NanStaysNan covers these
        if (fp32ToFp16(fp16ToFp32(half)) != half)
            QFAIL(qPrintable(QStringLiteral("half 0x%1 does not round-trip").arg(bits, 4, 16)));
    }
}

void TestGgmlTypes::fp16NanStaysNan() {
    QVERIFY(std::isnan(fp16ToFp32(0x7e00)));
    QVERIFY(std::isnan(fp16ToFp32(0x7c01)));
    QVERIFY(std::signbit(fp16ToFp32(0xfe00)));
    const uint16_t quiet = fp32ToFp16(std::numeric_limits<float>::quiet_NaN());
    QCOMPARE(quiet & 0x7c00, 0x7c00);
    QVERIFY((quiet & 0x03ff) != 0);
    // A signalling NaN whose payload lives only in the low bits must not become inf.
    const uint16_t lowPayload = fp32ToFp16(std::bit_cast<float>(0x7f800001u));
    QCOMPARE(lowPayload & 0x7c00, 0x7c00);
    QVERIFY((lowPayload & 0x03ff) != 0);
    QCOMPARE(fp32ToFp16(std::bit_cast<float>(0xffc00000u)) & 0x8000, 0x8000);
}

void TestGgmlTypes::fp16MatchesHardwareConversion() {
#if defined(__F16C__)
    std::mt19937 generator(7);
    for (int i = 0; i < 1'000'000; ++i) {
        // Exponents concentrated on the half range, plus everything else.
        uint32_t bits = generator();
        if (i % 2 == 0) bits = (bits & 0x807fffffu) | ((100u + bits % 50u) << 23);
        const float value = std::bit_cast<float>(bits);
        if (std::isnan(value)) continue;
        // _mm_cvtps_ph rather than _cvtss_sh, whose clang definition is a C99 compound literal.
        const auto hardware = static_cast<uint16_t>(
            _mm_cvtsi128_si32(_mm_cvtps_ph(_mm_set_ss(value), _MM_FROUND_TO_NEAREST_INT)));
        if (fp32ToFp16(value) != hardware)
            QFAIL(qPrintable(QStringLiteral("f32 0x%1: ours 0x%2, F16C 0x%3")
                                 .arg(bits, 8, 16)
                                 .arg(fp32ToFp16(value), 4, 16)
                                 .arg(hardware, 4, 16)));
    }
#else
    QSKIP("built without F16C: no hardware conversion to compare with");
#endif
}

void TestGgmlTypes::typeIdsAndNames() {
    for (uint32_t id : {0u, 1u, 2u, 3u, 6u, 8u, 14u, 24u, 28u, 30u, 34u, 35u})
        QVERIFY2(ggmlTypeKnown(id), qPrintable(QString::number(id)));
    for (uint32_t id : {4u, 5u, 31u, 32u, 33u, 36u, 77u, 0xffffffffu})
        QVERIFY2(!ggmlTypeKnown(id), qPrintable(QString::number(id)));
    QVERIFY(ggmlTypeSupported(GgmlType::F32));
    QVERIFY(ggmlTypeSupported(GgmlType::F16));
    QVERIFY(ggmlTypeSupported(GgmlType::Q8_0));
    QVERIFY(ggmlTypeSupported(GgmlType::Q4_0));
    QVERIFY(!ggmlTypeSupported(GgmlType::Q4_K));
    QVERIFY(!ggmlTypeSupported(GgmlType::BF16));
    QCOMPARE(ggmlTypeName(GgmlType::Q4_K), "Q4_K");
    QCOMPARE(ggmlTypeName(GgmlType::F32), "F32");
    QCOMPARE(ggmlTypeName(static_cast<GgmlType>(77)), "type 77");
}

void TestGgmlTypes::blockLayouts() {
    QCOMPARE(ggmlBlockValues(GgmlType::F32), 1);
    QCOMPARE(ggmlBlockBytes(GgmlType::F32), 4);
    QCOMPARE(ggmlBlockBytes(GgmlType::F16), 2);
    QCOMPARE(ggmlBlockValues(GgmlType::Q8_0), 32);
    QCOMPARE(ggmlBlockBytes(GgmlType::Q8_0), 34);
    QCOMPARE(ggmlBlockValues(GgmlType::Q4_0), 32);
    QCOMPARE(ggmlBlockBytes(GgmlType::Q4_0), 18);
    QCOMPARE(ggmlBlockValues(GgmlType::Q6_K), 256);
    QCOMPARE(ggmlBlockBytes(GgmlType::Q6_K), 210);
    QCOMPARE(ggmlBlockBytes(GgmlType::Q4_K), 144);
    QCOMPARE(ggmlBlockValues(static_cast<GgmlType>(77)), 0);
    QCOMPARE(ggmlBlockBytes(static_cast<GgmlType>(4)), 0);
}

void TestGgmlTypes::byteSize_data() {
    QTest::addColumn<uint32_t>("type");
    QTest::addColumn<quint64>("count");
    QTest::addColumn<bool>("valid");
    QTest::addColumn<quint64>("expected");
    const auto id = [](GgmlType type) { return static_cast<uint32_t>(type); };
    QTest::newRow("F32 x10") << id(GgmlType::F32) << quint64(10) << true << quint64(40);
    QTest::newRow("F16 x3") << id(GgmlType::F16) << quint64(3) << true << quint64(6);
    QTest::newRow("Q8_0 x64") << id(GgmlType::Q8_0) << quint64(64) << true << quint64(68);
    QTest::newRow("Q4_0 x96") << id(GgmlType::Q4_0) << quint64(96) << true << quint64(54);
    QTest::newRow("zero values") << id(GgmlType::Q8_0) << quint64(0) << true << quint64(0);
    QTest::newRow("Q8_0 partial block") << id(GgmlType::Q8_0) << quint64(33) << false << quint64(0);
    QTest::newRow("unknown type") << 77u << quint64(32) << false << quint64(0);
    QTest::newRow("F32 largest that fits")
        << id(GgmlType::F32) << quint64((1ull << 62) - 1) << true << quint64(0xfffffffffffffffcull);
    QTest::newRow("F32 overflows")
        << id(GgmlType::F32) << quint64(1ull << 62) << false << quint64(0);
    QTest::newRow("F64 overflows")
        << id(GgmlType::F64) << quint64(UINT64_MAX / 4) << false << quint64(0);
    QTest::newRow("Q4_0 largest count fits (18 bytes per 32 values)")
        << id(GgmlType::Q4_0) << quint64(UINT64_MAX / 32 * 32) << true
        << quint64(UINT64_MAX / 32 * 18);
    QTest::newRow("Q8_0 just fits") << id(GgmlType::Q8_0) << quint64(UINT64_MAX / 34 * 32) << true
                                    << quint64(UINT64_MAX / 34 * 34);
    QTest::newRow("Q8_0 one block over")
        << id(GgmlType::Q8_0) << quint64((UINT64_MAX / 34 + 1) * 32) << false << quint64(0);
}

void TestGgmlTypes::byteSize() {
    QFETCH(uint32_t, type);
    QFETCH(quint64, count);
    QFETCH(bool, valid);
    QFETCH(quint64, expected);
    const std::optional<uint64_t> size = ggmlByteSize(static_cast<GgmlType>(type), count);
    QCOMPARE(size.has_value(), valid);
    if (valid) QCOMPARE(*size, expected);
}

void TestGgmlTypes::dequantizeQ8_0HandMadeBlock() {
    std::vector<int8_t> quants(32);
    for (int j = 0; j < 32; ++j)
        quants[j] = static_cast<int8_t>(j - 16);
    quants[31] = -128;
    quants[30] = 127;
    // Two blocks: scale 0.5 (0x3800), then scale -2 (0xc000) with the same quants.
    std::vector<uint8_t> row = q8Block(0x3800, quants);
    const std::vector<uint8_t> second = q8Block(0xc000, quants);
    row.insert(row.end(), second.begin(), second.end());
    std::vector<float> values(64);
    dequantizeRow(GgmlType::Q8_0, row.data(), values.data(), 64);
    for (int j = 0; j < 32; ++j) {
        QCOMPARE(values[j], 0.5f * quants[j]);
        QCOMPARE(values[32 + j], -2.0f * quants[j]);
    }
    QCOMPARE(values[31], -64.0f);
    QCOMPARE(values[30], 63.5f);
    QCOMPARE(values[0], -8.0f);
}

void TestGgmlTypes::dequantizeQ4_0HandMadeBlock() {
    // Scale 2 (0x4000); byte j holds value j in its low nibble and value j + 16 in its high one.
    std::vector<uint8_t> block{0x00, 0x40};
    for (int j = 0; j < 16; ++j)
        block.push_back(static_cast<uint8_t>(j | ((15 - j) << 4)));
    std::vector<float> values(32);
    dequantizeRow(GgmlType::Q4_0, block.data(), values.data(), 32);
    for (int j = 0; j < 16; ++j) {
        QCOMPARE(values[j], 2.0f * static_cast<float>(j - 8));
        QCOMPARE(values[j + 16], 2.0f * static_cast<float>(15 - j - 8));
    }
    QCOMPARE(values[0], -16.0f);
    QCOMPARE(values[15], 14.0f);
}

void TestGgmlTypes::quantizeQ8_0KnownBlock() {
    // x = j - 16: absmax 16, d = 16/127, q = round(x * 127/16).
    std::vector<float> values(32);
    for (int j = 0; j < 32; ++j)
        values[j] = static_cast<float>(j - 16);
    std::vector<uint8_t> block(34);
    quantizeRow(GgmlType::Q8_0, values.data(), block.data(), 32);
    QCOMPARE(blockScaleBits(block), fp32ToFp16(16.0f / 127.0f));
    QCOMPARE(static_cast<int8_t>(block[2 + 0]), int8_t(-127));
    QCOMPARE(static_cast<int8_t>(block[2 + 16]), int8_t(0));
    QCOMPARE(static_cast<int8_t>(block[2 + 17]), int8_t(8));   // 7.9375 rounds to 8
    QCOMPARE(static_cast<int8_t>(block[2 + 18]), int8_t(16));  // 15.875 rounds to 16
    QCOMPARE(static_cast<int8_t>(block[2 + 31]), int8_t(119)); // 119.0625 rounds to 119
}

void TestGgmlTypes::quantizeQ4_0KnownBlock() {
    // x = j - 24: the largest magnitude is -24, so d = -24 / -8 = 3 and -24 maps to nibble 0.
    std::vector<float> values(32);
    for (int j = 0; j < 32; ++j)
        values[j] = static_cast<float>(j - 24);
    std::vector<uint8_t> block(18);
    quantizeRow(GgmlType::Q4_0, values.data(), block.data(), 32);
    QCOMPARE(blockScaleBits(block), uint16_t(0x4200)); // 3.0
    const auto nibble = [&block](int j) {
        return j < 16 ? block[2 + j] & 0x0f : block[2 + j - 16] >> 4;
    };
    QCOMPARE(nibble(0), 0);   // -24/3 + 8.5 = 0.5
    QCOMPARE(nibble(1), 0);   // -23/3 + 8.5 = 0.83
    QCOMPARE(nibble(2), 1);   // -22/3 + 8.5 = 1.17
    QCOMPARE(nibble(24), 8);  // 0 + 8.5
    QCOMPARE(nibble(31), 10); // 7/3 + 8.5 = 10.83
    std::vector<float> back(32);
    dequantizeRow(GgmlType::Q4_0, block.data(), back.data(), 32);
    QCOMPARE(back[0], -24.0f);
    QCOMPARE(back[31], 6.0f);
}

void TestGgmlTypes::quantizeQ4_0KeepsSignOfFirstLargest() {
    std::vector<float> values(32, 1.0f);
    values[3] = -3.0f;
    values[9] = 3.0f; // same magnitude, later: -3 is `max`, so d = 0.375 > 0
    std::vector<uint8_t> block(18);
    quantizeRow(GgmlType::Q4_0, values.data(), block.data(), 32);
    QCOMPARE(fp16ToFp32(blockScaleBits(block)), 0.375f);
    // +max would need nibble 16 and is clamped to 15: 0.375 * 7 = 2.625.
    std::vector<float> back(32);
    dequantizeRow(GgmlType::Q4_0, block.data(), back.data(), 32);
    QCOMPARE(back[3], -3.0f);
    QCOMPARE(back[9], 2.625f);

    std::swap(values[3], values[9]);
    quantizeRow(GgmlType::Q4_0, values.data(), block.data(), 32);
    QCOMPARE(fp16ToFp32(blockScaleBits(block)), -0.375f);
}

void TestGgmlTypes::quantizeZeroBlocks() {
    const std::vector<float> zeros(32, 0.0f);
    std::vector<uint8_t> q8(34, 0xaa);
    quantizeRow(GgmlType::Q8_0, zeros.data(), q8.data(), 32);
    QCOMPARE(blockScaleBits(q8), uint16_t(0));
    for (int j = 0; j < 32; ++j)
        QCOMPARE(q8[2 + j], uint8_t(0));
    std::vector<uint8_t> q4(18, 0xaa);
    quantizeRow(GgmlType::Q4_0, zeros.data(), q4.data(), 32);
    QCOMPARE(blockScaleBits(q4), uint16_t(0x8000)); // 0 / -8 is -0, as ggml writes it
    for (int j = 0; j < 16; ++j)
        QCOMPARE(q4[2 + j], uint8_t(0x88)); // nibble 8 = zero
}

void TestGgmlTypes::quantizeErrorBounds_data() {
    QTest::addColumn<uint32_t>("type");
    QTest::addColumn<double>("spread");
    QTest::newRow("Q8_0 unit") << static_cast<uint32_t>(GgmlType::Q8_0) << 1.0;
    QTest::newRow("Q8_0 small") << static_cast<uint32_t>(GgmlType::Q8_0) << 1e-3;
    QTest::newRow("Q4_0 unit") << static_cast<uint32_t>(GgmlType::Q4_0) << 1.0;
    QTest::newRow("Q4_0 large") << static_cast<uint32_t>(GgmlType::Q4_0) << 300.0;
}

// Per block: Q8_0 errs by at most half a step d, Q4_0 by half a step except the value opposite
// `max`, clamped from nibble 16 to 15: one step. Both add the f16 rounding error of d (relative
// 2^-11, or 2^-25 absolute for subnormal scales) times the largest quant (127 or 8).
void TestGgmlTypes::quantizeErrorBounds() {
    QFETCH(uint32_t, type);
    QFETCH(double, spread);
    const auto ggmlType = static_cast<GgmlType>(type);
    constexpr int64_t n = 32 * 64;
    const std::vector<float> values = randomValues(n, static_cast<float>(spread), 42);
    std::vector<uint8_t> packed(*ggmlByteSize(ggmlType, n));
    quantizeRow(ggmlType, values.data(), packed.data(), n);
    std::vector<float> back(n);
    dequantizeRow(ggmlType, packed.data(), back.data(), n);
    for (int64_t block = 0; block < n / 32; ++block) {
        double absMax = 0.0;
        for (int j = 0; j < 32; ++j)
            absMax = std::max(absMax, std::fabs(double(values[block * 32 + j])));
        const bool isQ8 = ggmlType == GgmlType::Q8_0;
        const double step = isQ8 ? absMax / 127.0 : absMax / 8.0;
        const double scaleError = std::max(step * std::ldexp(1.0, -11), std::ldexp(1.0, -25));
        const double bound = (isQ8 ? 0.5 * step : step) + (isQ8 ? 127.0 : 8.0) * scaleError;
        for (int j = 0; j < 32; ++j) {
            const int64_t i = block * 32 + j;
            const double error = std::fabs(double(values[i]) - double(back[i]));
            if (error > bound)
                QFAIL(qPrintable(QStringLiteral("value %1: %2 came back as %3 (bound %4)")
                                     .arg(i)
                                     .arg(values[i])
                                     .arg(back[i])
                                     .arg(bound)));
        }
    }
}

void TestGgmlTypes::f16AndF32Rows() {
    const std::vector<float> values{1.0f, -0.5f, 65504.0f, 0.1f, 1e-7f, -3.25f};
    std::vector<uint8_t> f16(values.size() * 2);
    quantizeRow(GgmlType::F16, values.data(), f16.data(), 6);
    QCOMPARE(f16[0], uint8_t(0x00)); // 1.0 = 0x3c00, little-endian
    QCOMPARE(f16[1], uint8_t(0x3c));
    std::vector<float> back(values.size());
    dequantizeRow(GgmlType::F16, f16.data(), back.data(), 6);
    for (size_t i = 0; i < values.size(); ++i)
        QCOMPARE(back[i], fp16ToFp32(fp32ToFp16(values[i])));
    std::vector<uint8_t> f32(values.size() * 4);
    quantizeRow(GgmlType::F32, values.data(), f32.data(), 6);
    dequantizeRow(GgmlType::F32, f32.data(), back.data(), 6);
    for (size_t i = 0; i < values.size(); ++i)
        QCOMPARE(back[i], values[i]);
}

void TestGgmlTypes::unsupportedRowsThrow() {
    std::vector<uint8_t> bytes(256);
    std::vector<float> values(256);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             dequantizeRow(GgmlType::Q4_K, bytes.data(), values.data(), 256));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             quantizeRow(GgmlType::Q8_0, values.data(), bytes.data(), 33));
}

QTEST_GUILESS_MAIN(TestGgmlTypes)
#include "test_ggml_types.moc"
