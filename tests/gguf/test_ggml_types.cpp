// ggml tensor types: fp16 conversion, type ids and names, block layouts and byte sizes (the row
// codecs are tested in test_quant_blocks.cpp and test_quantize.cpp).
#include "gguf/ggml_types.h"

#include <QtTest>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include <immintrin.h>

using namespace sinkscope;

namespace {

// The CPU's own conversions (F16C), compiled for it whatever the build's target; only called
// where the CPU has them. _mm_cvtps_ph rather than _cvtss_sh, whose clang macro is a C99
// compound literal.
__attribute__((target("f16c"))) uint16_t hardwareToHalf(float value) {
    return static_cast<uint16_t>(
        _mm_extract_epi16(_mm_cvtps_ph(_mm_set_ss(value), _MM_FROUND_TO_NEAREST_INT), 0));
}

__attribute__((target("f16c"))) float hardwareFromHalf(uint16_t half) {
    return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(half)));
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
    void fp32ToBf16Table_data();
    void fp32ToBf16Table();
    void bf16ToFp32IsTheTopHalf();
    void typeIdsAndNames();
    void blockLayouts();
    void byteSize_data();
    void byteSize();
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
    __builtin_cpu_init(); // every CPU with AVX2 has F16C, which not every compiler's builtin names
    if (!__builtin_cpu_supports("avx2"))
        QSKIP("this CPU has no F16C: no hardware conversion to compare with");
    std::mt19937 generator(7);
    for (int i = 0; i < 1'000'000; ++i) {
        // Exponents concentrated on the half range, plus everything else.
        uint32_t bits = generator();
        if (i % 2 == 0) bits = (bits & 0x807fffffu) | ((100u + bits % 50u) << 23);
        const float value = std::bit_cast<float>(bits);
        if (std::isnan(value)) continue;
        const uint16_t hardware = hardwareToHalf(value);
        if (fp32ToFp16(value) != hardware)
            QFAIL(qPrintable(QStringLiteral("f32 0x%1: ours 0x%2, F16C 0x%3")
                                 .arg(bits, 8, 16)
                                 .arg(fp32ToFp16(value), 4, 16)
                                 .arg(hardware, 4, 16)));
    }
    for (uint32_t half = 0; half <= 0xffff; ++half) { // and every half back to f32
        const float hardware = hardwareFromHalf(static_cast<uint16_t>(half));
        const float ours = fp16ToFp32(static_cast<uint16_t>(half));
        if (std::isnan(hardware)) {
            QVERIFY(std::isnan(ours));
        } else if (std::bit_cast<uint32_t>(ours) != std::bit_cast<uint32_t>(hardware)) {
            QFAIL(qPrintable(QStringLiteral("half 0x%1: ours %2, F16C %3")
                                 .arg(half, 4, 16)
                                 .arg(ours)
                                 .arg(hardware)));
        }
    }
}

// bf16 keeps the top 16 bits of an f32, rounded to nearest even (ggml's GGML_FP32_TO_BF16).
void TestGgmlTypes::fp32ToBf16Table_data() {
    QTest::addColumn<uint32_t>("bits");
    QTest::addColumn<uint16_t>("expected");
    QTest::newRow("1") << 0x3f800000u << uint16_t(0x3f80);
    QTest::newRow("0.1 rounds up") << 0x3dcccccdu << uint16_t(0x3dcd);
    QTest::newRow("tie to even (down)") << 0x3f808000u << uint16_t(0x3f80);
    QTest::newRow("tie to even (up)") << 0x3f818000u << uint16_t(0x3f82);
    QTest::newRow("just above a tie") << 0x3f808001u << uint16_t(0x3f81);
    QTest::newRow("largest float rounds to inf") << 0x7f7fffffu << uint16_t(0x7f80);
    QTest::newRow("-inf") << 0xff800000u << uint16_t(0xff80);
    QTest::newRow("-0") << 0x80000000u << uint16_t(0x8000);
    QTest::newRow("signalling NaN becomes quiet") << 0x7f800001u << uint16_t(0x7fc0);
    QTest::newRow("negative NaN keeps its payload") << 0xffc12345u << uint16_t(0xffc1);
}

void TestGgmlTypes::fp32ToBf16Table() {
    QFETCH(uint32_t, bits);
    QFETCH(uint16_t, expected);
    QCOMPARE(fp32ToBf16(std::bit_cast<float>(bits)), expected);
}

void TestGgmlTypes::bf16ToFp32IsTheTopHalf() {
    for (uint32_t h = 0; h <= 0xffff; ++h) {
        const float value = bf16ToFp32(static_cast<uint16_t>(h));
        QCOMPARE(std::bit_cast<uint32_t>(value), h << 16);
        if (!std::isnan(value)) QCOMPARE(fp32ToBf16(value), static_cast<uint16_t>(h));
    }
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
    QVERIFY(ggmlTypeSupported(GgmlType::Q4_K));
    QVERIFY(ggmlTypeSupported(GgmlType::BF16));
    QVERIFY(!ggmlTypeSupported(GgmlType::IQ2_XXS));
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

QTEST_GUILESS_MAIN(TestGgmlTypes)
#include "test_ggml_types.moc"
