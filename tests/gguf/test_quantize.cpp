// ggml's reference quantizers (quantizeRow) on hand-made rows with hand-computed bytes, their
// error bounds and round trips, and the activation quantizers Q8_0 / Q8_1 / Q8_K.
#include "gguf/dequantize.h"

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace sinkscope;

namespace {

using Bytes = std::vector<uint8_t>;

uint16_t halfAt(const Bytes& bytes, size_t at) {
    return static_cast<uint16_t>(bytes[at] | (bytes[at + 1] << 8));
}

std::vector<float> randomValues(size_t count, float spread, uint32_t seed) {
    std::mt19937 generator(seed);
    std::normal_distribution<float> normal(0.0f, spread);
    std::vector<float> values(count);
    for (float& value : values)
        value = normal(generator);
    return values;
}

Bytes quantized(GgmlType type, const std::vector<float>& values) {
    Bytes bytes(*ggmlByteSize(type, values.size()), 0xaa);
    quantizeRow(type, values.data(), bytes.data(), int64_t(values.size()));
    return bytes;
}

std::vector<float> dequantized(GgmlType type, const Bytes& bytes, size_t n) {
    std::vector<float> values(n);
    dequantizeRow(type, bytes.data(), values.data(), int64_t(n));
    return values;
}

const GgmlType kQuantizedTypes[] = {
    GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0,   GgmlType::Q5_1,  GgmlType::Q8_0,
    GgmlType::Q8_1, GgmlType::Q2_K, GgmlType::Q3_K,   GgmlType::Q4_K,  GgmlType::Q5_K,
    GgmlType::Q6_K, GgmlType::Q8_K, GgmlType::IQ4_NL, GgmlType::IQ4_XS};

} // namespace

class TestQuantize : public QObject {
    Q_OBJECT

private slots:
    void q8_0KnownBlock();
    void q8_0RoundsTiesAwayFromZero();
    void q8_1CarriesTheScaledSum();
    void q8_KRoundsTiesToEvenAndSumsGroups();
    void q8_KTakesTheSignOfTheLargest();
    void q4_0KnownBlock();
    void q4_0KeepsSignOfFirstLargest();
    void q4_1KnownBlock();
    void q5_0KnownBlock();
    void q5_1KnownBlock();
    void q6_KKeepsSmallIntegersExactly();
    void zeroRowsStayZero();
    void legacyErrorBounds_data();
    void legacyErrorBounds();
    void roundTrips_data();
    void roundTrips();
};

void TestQuantize::q8_0KnownBlock() {
    // x = j - 16: absmax 16, d = 16/127, q = round(x * 127/16).
    std::vector<float> values(32);
    for (int j = 0; j < 32; ++j)
        values[j] = static_cast<float>(j - 16);
    const Bytes block = quantized(GgmlType::Q8_0, values);
    QCOMPARE(halfAt(block, 0), fp32ToFp16(16.0f / 127.0f));
    QCOMPARE(static_cast<int8_t>(block[2 + 0]), int8_t(-127));
    QCOMPARE(static_cast<int8_t>(block[2 + 16]), int8_t(0));
    QCOMPARE(static_cast<int8_t>(block[2 + 17]), int8_t(8));   // 7.9375 rounds to 8
    QCOMPARE(static_cast<int8_t>(block[2 + 18]), int8_t(16));  // 15.875 rounds to 16
    QCOMPARE(static_cast<int8_t>(block[2 + 31]), int8_t(119)); // 119.0625 rounds to 119
}

// x0 = 127 makes d = 1 exactly; x_j = +-(j - 0.5) are ties, which roundf takes away from zero.
std::vector<float> q8Ties() {
    std::vector<float> values(32);
    values[0] = 127.0f;
    for (int j = 1; j < 32; ++j)
        values[j] = (j % 2 ? -1.0f : 1.0f) * (static_cast<float>(j) - 0.5f);
    return values;
}

void TestQuantize::q8_0RoundsTiesAwayFromZero() {
    const Bytes block = quantized(GgmlType::Q8_0, q8Ties());
    QCOMPARE(halfAt(block, 0), uint16_t(0x3c00));
    QCOMPARE(static_cast<int8_t>(block[2]), int8_t(127));
    for (int j = 1; j < 32; ++j)
        QCOMPARE(static_cast<int8_t>(block[2 + j]), int8_t(j % 2 ? -j : j));
}

// The same quants; s = f16(d * sum) = 127 + (2 + 4 + ... + 30) - (1 + 3 + ... + 31) = 111.
void TestQuantize::q8_1CarriesTheScaledSum() {
    const Bytes block = quantized(GgmlType::Q8_1, q8Ties());
    QCOMPARE(halfAt(block, 0), uint16_t(0x3c00));
    QCOMPARE(fp16ToFp32(halfAt(block, 2)), 111.0f);
    for (int j = 1; j < 32; ++j)
        QCOMPARE(static_cast<int8_t>(block[4 + j]), int8_t(j % 2 ? -j : j));
    std::vector<float> half(32);
    for (int j = 0; j < 32; ++j)
        half[j] = 0.5f * q8Ties()[j]; // d = 0.5: s = f16(0.5 * 111) = 55.5
    QCOMPARE(fp16ToFp32(halfAt(quantized(GgmlType::Q8_1, half), 2)), 55.5f);
}

// x0 = -127 is the largest magnitude, so iscale = -127 / -127 = 1 and d = 1. The others repeat
// 2.5, 3.5, -0.5, -1.5, which nearest_int takes to the even 2, 4, 0, -2.
void TestQuantize::q8_KRoundsTiesToEvenAndSumsGroups() {
    std::vector<float> values(256);
    const float pattern[4] = {-1.5f, 2.5f, 3.5f, -0.5f};
    for (int i = 0; i < 256; ++i)
        values[i] = pattern[i % 4];
    values[0] = -127.0f;
    Bytes block(292);
    quantizeRowQ8_K(values.data(), block.data(), 256);
    float d;
    std::memcpy(&d, block.data(), sizeof d);
    QCOMPARE(d, 1.0f);
    const int expected[4] = {-2, 2, 4, 0};
    QCOMPARE(static_cast<int8_t>(block[4]), int8_t(-127));
    for (int i = 1; i < 256; ++i)
        QCOMPARE(static_cast<int8_t>(block[4 + i]), int8_t(expected[i % 4]));
    // bsums: group 0 is -127 + 3 * (2 + 4 + 0 - 2) + (2 + 4 + 0) = -109, the others 4 * 4 = 16.
    int16_t sums[16];
    std::memcpy(sums, block.data() + 260, sizeof sums);
    QCOMPARE(sums[0], int16_t(-109));
    for (int j = 1; j < 16; ++j)
        QCOMPARE(sums[j], int16_t(16));
    // A zero row: d = 0, no quants, no sums.
    const std::vector<float> zeros(256, 0.0f);
    Bytes zero(292, 0xaa);
    quantizeRowQ8_K(zeros.data(), zero.data(), 256);
    QVERIFY(std::all_of(zero.begin(), zero.end(), [](uint8_t b) { return b == 0; }));
}

// A positive largest value maps to -127: d = 1 / (-127 / max) is negative.
void TestQuantize::q8_KTakesTheSignOfTheLargest() {
    std::vector<float> values(256, 0.25f);
    values[7] = 63.5f;
    values[9] = -63.5f; // same magnitude, later: the first one wins
    Bytes block(292);
    quantizeRowQ8_K(values.data(), block.data(), 256);
    float d;
    std::memcpy(&d, block.data(), sizeof d);
    QCOMPARE(d, -0.5f);
    QCOMPARE(static_cast<int8_t>(block[4 + 7]), int8_t(-127));
    QCOMPARE(static_cast<int8_t>(block[4 + 9]), int8_t(127));
    QCOMPARE(static_cast<int8_t>(block[4 + 0]), int8_t(0)); // -0.5 ties to the even 0
    QCOMPARE(dequantized(GgmlType::Q8_K, block, 256)[9], -63.5f);
}

void TestQuantize::q4_0KnownBlock() {
    // x = j - 24: the largest magnitude is -24, so d = -24 / -8 = 3 and -24 maps to nibble 0.
    std::vector<float> values(32);
    for (int j = 0; j < 32; ++j)
        values[j] = static_cast<float>(j - 24);
    const Bytes block = quantized(GgmlType::Q4_0, values);
    QCOMPARE(halfAt(block, 0), uint16_t(0x4200)); // 3.0
    const auto nibble = [&block](int j) {
        return j < 16 ? block[2 + j] & 0x0f : block[2 + j - 16] >> 4;
    };
    QCOMPARE(nibble(0), 0);   // -24/3 + 8.5 = 0.5
    QCOMPARE(nibble(1), 0);   // -23/3 + 8.5 = 0.83
    QCOMPARE(nibble(2), 1);   // -22/3 + 8.5 = 1.17
    QCOMPARE(nibble(24), 8);  // 0 + 8.5
    QCOMPARE(nibble(31), 10); // 7/3 + 8.5 = 10.83
    const std::vector<float> back = dequantized(GgmlType::Q4_0, block, 32);
    QCOMPARE(back[0], -24.0f);
    QCOMPARE(back[31], 6.0f);
}

void TestQuantize::q4_0KeepsSignOfFirstLargest() {
    std::vector<float> values(32, 1.0f);
    values[3] = -3.0f;
    values[9] = 3.0f; // same magnitude, later: -3 is `max`, so d = 0.375 > 0
    Bytes block = quantized(GgmlType::Q4_0, values);
    QCOMPARE(fp16ToFp32(halfAt(block, 0)), 0.375f);
    // +max would need nibble 16 and is clamped to 15: 0.375 * 7 = 2.625.
    const std::vector<float> back = dequantized(GgmlType::Q4_0, block, 32);
    QCOMPARE(back[3], -3.0f);
    QCOMPARE(back[9], 2.625f);
    std::swap(values[3], values[9]);
    block = quantized(GgmlType::Q4_0, values);
    QCOMPARE(fp16ToFp32(halfAt(block, 0)), -0.375f);
}

// x = (j % 16) - 8: min -8, max 7, so d = 15 / 15 = 1, m = -8 and level = trunc(x + 8 + 0.5);
// x5 = -7.5 sits on a half step and goes up to 1, x6 = -2.51 goes down to 5.
void TestQuantize::q4_1KnownBlock() {
    std::vector<float> values(32);
    for (int j = 0; j < 32; ++j)
        values[j] = static_cast<float>(j % 16 - 8);
    values[5] = -7.5f;
    values[6] = -2.51f;
    const Bytes block = quantized(GgmlType::Q4_1, values);
    QCOMPARE(halfAt(block, 0), uint16_t(0x3c00)); // d = 1
    QCOMPARE(halfAt(block, 2), uint16_t(0xc800)); // m = -8
    QCOMPARE(block[4 + 0], uint8_t(0x00));
    QCOMPARE(block[4 + 5], uint8_t(0x51)); // value 5: 1, value 21: 5
    QCOMPARE(block[4 + 6], uint8_t(0x65)); // value 6: 5, value 22: 6
    QCOMPARE(block[4 + 15], uint8_t(0xff));
}

// x = j - 16: the first largest magnitude is -16, d = -16 / -16 = 1, level = trunc(x + 16.5) = j:
// nibbles j | j << 4, fifth bits set for j >= 16. With x = 16 - j, d = -1 and the same levels.
void TestQuantize::q5_0KnownBlock() {
    for (const float sign : {1.0f, -1.0f}) {
        std::vector<float> values(32);
        for (int j = 0; j < 32; ++j)
            values[j] = sign * static_cast<float>(j - 16);
        const Bytes block = quantized(GgmlType::Q5_0, values);
        QCOMPARE(fp16ToFp32(halfAt(block, 0)), sign);
        QCOMPARE(block[2], uint8_t(0x00));
        QCOMPARE(block[3], uint8_t(0x00));
        QCOMPARE(block[4], uint8_t(0xff));
        QCOMPARE(block[5], uint8_t(0xff));
        for (int j = 0; j < 16; ++j)
            QCOMPARE(block[6 + j], uint8_t(j | (j << 4)));
        QCOMPARE(dequantized(GgmlType::Q5_0, block, 32), values);
    }
}

// x = j / 2: min 0, max 15.5, d = 15.5 / 31 = 0.5, levels j.
void TestQuantize::q5_1KnownBlock() {
    std::vector<float> values(32);
    for (int j = 0; j < 32; ++j)
        values[j] = 0.5f * static_cast<float>(j);
    const Bytes block = quantized(GgmlType::Q5_1, values);
    QCOMPARE(halfAt(block, 0), uint16_t(0x3800)); // 0.5
    QCOMPARE(halfAt(block, 2), uint16_t(0x0000));
    QCOMPARE(block[4] | (block[5] << 8) | (block[6] << 16) | (uint32_t(block[7]) << 24),
             0xffff0000u);
    for (int j = 0; j < 16; ++j)
        QCOMPARE(block[8 + j], uint8_t(j | (j << 4)));
    QCOMPARE(dequantized(GgmlType::Q5_1, block, 32), values);
}

// Integers in [-32, 31], each group of 16 led by -32: every group fits scale 1 exactly, so the
// super-block scale is d = 1 / -128 (f16 0xa000) with every sub-block scale -128.
void TestQuantize::q6_KKeepsSmallIntegersExactly() {
    std::vector<float> values(256);
    for (int i = 0; i < 256; ++i)
        values[i] = i % 16 == 0 ? -32.0f : static_cast<float>((7 * i) % 64 - 32);
    const Bytes block = quantized(GgmlType::Q6_K, values);
    QCOMPARE(halfAt(block, 208), uint16_t(0xa000));
    for (int j = 0; j < 16; ++j)
        QCOMPARE(static_cast<int8_t>(block[192 + j]), int8_t(-128));
    QCOMPARE(dequantized(GgmlType::Q6_K, block, 256), values);
}

void TestQuantize::zeroRowsStayZero() {
    for (GgmlType type : kQuantizedTypes) {
        const std::vector<float> zeros(256, 0.0f);
        const std::vector<float> back = dequantized(type, quantized(type, zeros), 256);
        QVERIFY2(std::all_of(back.begin(), back.end(), [](float v) { return v == 0.0f; }),
                 ggmlTypeName(type));
    }
    const Bytes q4 = quantized(GgmlType::Q4_0, std::vector<float>(32, 0.0f));
    QCOMPARE(halfAt(q4, 0), uint16_t(0x8000)); // 0 / -8 is -0, as ggml writes it
    for (int j = 0; j < 16; ++j)
        QCOMPARE(q4[2 + j], uint8_t(0x88)); // nibble 8 = zero
}

void TestQuantize::legacyErrorBounds_data() {
    QTest::addColumn<uint32_t>("type");
    QTest::addColumn<double>("spread");
    for (GgmlType type : {GgmlType::Q8_0, GgmlType::Q8_1, GgmlType::Q4_0, GgmlType::Q4_1,
                          GgmlType::Q5_0, GgmlType::Q5_1})
        for (double spread : {1.0, 1e-3, 300.0})
            QTest::addRow("%s x%g", ggmlTypeName(type), spread) << uint32_t(type) << spread;
}

// Per 32-value block, with `levels` steps across it:
//   symmetric (Q8_0, Q8_1: d = absmax / 127; Q4_0, Q5_0: d = max / -8, max / -16): half a step,
//     except Q4_0 / Q5_0's value opposite max, clamped from level 16 (32) to 15 (31): one step;
//   affine (Q4_1, Q5_1: d = (max - min) / 15 or 31, m = min): half a step;
// plus the f16 rounding of d (relative 2^-11, or 2^-25 absolute for subnormal scales) times the
// largest level, and for the affine types the f16 rounding of m.
void TestQuantize::legacyErrorBounds() {
    QFETCH(uint32_t, type);
    QFETCH(double, spread);
    const auto ggmlType = static_cast<GgmlType>(type);
    constexpr int64_t n = 32 * 64;
    const std::vector<float> values = randomValues(n, static_cast<float>(spread), 42);
    const std::vector<float> back = dequantized(ggmlType, quantized(ggmlType, values), n);
    const bool affine = ggmlType == GgmlType::Q4_1 || ggmlType == GgmlType::Q5_1;
    const bool clamped = ggmlType == GgmlType::Q4_0 || ggmlType == GgmlType::Q5_0;
    const double levels = ggmlType == GgmlType::Q4_0   ? 8
                          : ggmlType == GgmlType::Q5_0 ? 16
                          : ggmlType == GgmlType::Q4_1 ? 15
                          : ggmlType == GgmlType::Q5_1 ? 31
                                                       : 127;
    const auto fp16Error = [](double value) {
        return std::max(std::fabs(value) * std::ldexp(1.0, -11), std::ldexp(1.0, -25));
    };
    for (int64_t block = 0; block < n / 32; ++block) {
        const float* x = values.data() + block * 32;
        const auto [low, high] = std::minmax_element(x, x + 32);
        const double absMax = std::max(std::fabs(double(*low)), std::fabs(double(*high)));
        const double step = affine ? (double(*high) - *low) / levels : absMax / levels;
        const double bound = (clamped ? step : 0.5 * step) + levels * fp16Error(step) +
                             (affine ? fp16Error(*low) : 0.0);
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

// Normal rows at three scales: the rms error relative to the rms value. The bounds sit ~20% above
// what these quantizers reach on Gaussian rows (uniform rounding gives step / sqrt(12): Q8_0
// 0.005, Q4_0 0.08); the K-quant and IQ4 searches are not closed-form, so their bounds are
// measured ones with that margin.
void TestQuantize::roundTrips_data() {
    QTest::addColumn<uint32_t>("type");
    QTest::addColumn<double>("spread");
    QTest::addColumn<double>("bound");
    const struct {
        GgmlType type;
        double bound;
    } cases[] = {{GgmlType::Q8_0, 0.0065}, {GgmlType::Q8_1, 0.0065},  {GgmlType::Q8_K, 0.0082},
                 {GgmlType::Q6_K, 0.025},  {GgmlType::Q5_0, 0.052},   {GgmlType::Q5_1, 0.046},
                 {GgmlType::Q5_K, 0.045},  {GgmlType::Q4_0, 0.103},   {GgmlType::Q4_1, 0.094},
                 {GgmlType::Q4_K, 0.086},  {GgmlType::IQ4_NL, 0.095}, {GgmlType::IQ4_XS, 0.096},
                 {GgmlType::Q3_K, 0.182},  {GgmlType::Q2_K, 0.357}};
    for (const auto& c : cases)
        for (double spread : {1.0, 1e-3, 300.0})
            QTest::addRow("%s x%g", ggmlTypeName(c.type), spread)
                << uint32_t(c.type) << spread << c.bound;
}

void TestQuantize::roundTrips() {
    QFETCH(uint32_t, type);
    QFETCH(double, spread);
    QFETCH(double, bound);
    constexpr int64_t n = 256 * 64;
    const std::vector<float> values = randomValues(n, static_cast<float>(spread), 7);
    const std::vector<float> back =
        dequantized(GgmlType(type), quantized(GgmlType(type), values), n);
    double error = 0.0, total = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        QVERIFY(std::isfinite(back[i]));
        error += (double(values[i]) - back[i]) * (double(values[i]) - back[i]);
        total += double(values[i]) * values[i];
    }
    const double relative = std::sqrt(error / total);
    QVERIFY2(relative < bound, qPrintable(QString::number(relative)));
    QVERIFY2(relative > bound / 2, qPrintable(QString::number(relative))); // a real quantizer
}

QTEST_GUILESS_MAIN(TestQuantize)
#include "test_quantize.moc"
