// Dequantization of every supported ggml type from hand-made blocks (bytes placed at the offsets
// ggml-common.h gives, expected values computed from the layout), and row-length errors.
#include "gguf/dequantize.h"
#include "gguf/quant_blocks.h"

#include <QtTest>

#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <vector>

using namespace sinkscope;

namespace {

using Bytes = std::vector<uint8_t>;

// Little-endian f16 of a value exact in f16, at byte `at`.
void putHalf(Bytes& bytes, size_t at, float value) {
    const uint16_t bits = fp32ToFp16(value);
    QCOMPARE(fp16ToFp32(bits), value);
    bytes[at] = static_cast<uint8_t>(bits & 0xff);
    bytes[at + 1] = static_cast<uint8_t>(bits >> 8);
}

// Dequantizes `bytes` (n values of `type`) and compares every value with expected(i), exactly:
// the blocks are chosen so that every product is exact in f32.
void expectValues(GgmlType type, const Bytes& bytes, int n,
                  const std::function<double(int)>& expected) {
    QCOMPARE(bytes.size(), size_t(*ggmlByteSize(type, n)));
    std::vector<float> values(n);
    dequantizeRow(type, bytes.data(), values.data(), n);
    for (int i = 0; i < n; ++i)
        if (double(values[i]) != expected(i))
            QFAIL(qPrintable(QStringLiteral("%1 value %2: %3, expected %4")
                                 .arg(ggmlTypeName(type))
                                 .arg(i)
                                 .arg(values[i])
                                 .arg(expected(i))));
}

// The low nibble of byte j for value j < 16 of a 32-value group, the high nibble for j + 16.
int nibble(const uint8_t* qs, int j) {
    return j < 16 ? qs[j] & 0x0f : qs[j - 16] >> 4;
}

// Q4_K / Q5_K: 6-bit scales and mins of sub-blocks 0..7 packed as ggml's get_scale_min_k4 reads
// them: 0..3 in the low 6 bits of bytes j (scale) and j + 4 (min); 4..7 in the nibbles of byte
// j + 4 with their top 2 bits in the top bits of bytes j - 4 and j.
void packKScales(const int scale[8], const int min[8], uint8_t* out) {
    for (int j = 0; j < 4; ++j) {
        out[j] = static_cast<uint8_t>(scale[j] | ((scale[j + 4] >> 4) << 6));
        out[j + 4] = static_cast<uint8_t>(min[j] | ((min[j + 4] >> 4) << 6));
        out[j + 8] = static_cast<uint8_t>((scale[j + 4] & 0x0f) | ((min[j + 4] & 0x0f) << 4));
    }
}

const int kKScale[8] = {40, 43, 46, 49, 52, 55, 58, 61}; // top bits 2 and 3
const int kKMin[8] = {63, 58, 53, 48, 43, 38, 33, 28};

// ggml's kvalues_iq4nl.
const int kIq4Levels[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                            1,    13,   25,  38,  53,  69,  89,  113};

} // namespace

class TestQuantBlocks : public QObject {
    Q_OBJECT

private slots:
    void blockStructsHaveTheTableSizes_data();
    void blockStructsHaveTheTableSizes();
    void supportedTypes();
    void f16Bf16AndF32Rows();
    void dequantizeQ8_0();
    void dequantizeQ8_1();
    void dequantizeQ4_0();
    void dequantizeQ4_1();
    void dequantizeQ5_0();
    void dequantizeQ5_1();
    void dequantizeIQ4_NL();
    void dequantizeQ2_K();
    void dequantizeQ3_K();
    void dequantizeQ4_K();
    void dequantizeQ5_K();
    void dequantizeQ6_K();
    void dequantizeIQ4_XS();
    void dequantizeQ8_K();
    void rowErrors_data();
    void rowErrors();
};

void TestQuantBlocks::blockStructsHaveTheTableSizes_data() {
    QTest::addColumn<uint32_t>("type");
    QTest::addColumn<int>("values");
    QTest::addColumn<int>("structSize");
    using namespace quant;
    const auto row = [](GgmlType type, int values, size_t size) {
        QTest::newRow(ggmlTypeName(type)) << uint32_t(type) << values << int(size);
    };
    row(GgmlType::Q4_0, 32, sizeof(BlockQ4_0));
    row(GgmlType::Q4_1, 32, sizeof(BlockQ4_1));
    row(GgmlType::Q5_0, 32, sizeof(BlockQ5_0));
    row(GgmlType::Q5_1, 32, sizeof(BlockQ5_1));
    row(GgmlType::Q8_0, 32, sizeof(BlockQ8_0));
    row(GgmlType::Q8_1, 32, sizeof(BlockQ8_1));
    row(GgmlType::IQ4_NL, 32, sizeof(BlockIQ4_NL));
    row(GgmlType::Q2_K, 256, sizeof(BlockQ2_K));
    row(GgmlType::Q3_K, 256, sizeof(BlockQ3_K));
    row(GgmlType::Q4_K, 256, sizeof(BlockQ4_K));
    row(GgmlType::Q5_K, 256, sizeof(BlockQ5_K));
    row(GgmlType::Q6_K, 256, sizeof(BlockQ6_K));
    row(GgmlType::Q8_K, 256, sizeof(BlockQ8_K));
    row(GgmlType::IQ4_XS, 256, sizeof(BlockIQ4_XS));
}

void TestQuantBlocks::blockStructsHaveTheTableSizes() {
    QFETCH(uint32_t, type);
    QFETCH(int, values);
    QFETCH(int, structSize);
    QCOMPARE(ggmlBlockValues(GgmlType(type)), values);
    QCOMPARE(ggmlBlockBytes(GgmlType(type)), structSize);
    QVERIFY(ggmlTypeSupported(GgmlType(type)));
}

void TestQuantBlocks::supportedTypes() {
    for (GgmlType type : {GgmlType::F32, GgmlType::F16, GgmlType::BF16})
        QVERIFY(ggmlTypeSupported(type));
    for (GgmlType type : {GgmlType::IQ2_XXS, GgmlType::IQ3_S, GgmlType::IQ1_M, GgmlType::TQ1_0,
                          GgmlType::I8, GgmlType::F64, GgmlType(4), GgmlType(77)})
        QVERIFY2(!ggmlTypeSupported(type), ggmlTypeName(type));
}

void TestQuantBlocks::f16Bf16AndF32Rows() {
    const std::vector<float> values{1.0f, -0.5f, 65504.0f, 0.1f, 1e-7f, -3.25f};
    const int n = int(values.size());
    std::vector<float> back(values.size());
    Bytes f16(2 * values.size());
    quantizeRow(GgmlType::F16, values.data(), f16.data(), n);
    QCOMPARE(f16[0], uint8_t(0x00)); // 1.0 = 0x3c00, little-endian
    QCOMPARE(f16[1], uint8_t(0x3c));
    dequantizeRow(GgmlType::F16, f16.data(), back.data(), n);
    for (int i = 0; i < n; ++i)
        QCOMPARE(back[i], fp16ToFp32(fp32ToFp16(values[i])));
    // bf16 keeps the top 16 bits of an f32, rounded to nearest even: 0.1 = 0x3dcccccd -> 0x3dcd.
    Bytes bf16(2 * values.size());
    quantizeRow(GgmlType::BF16, values.data(), bf16.data(), n);
    QCOMPARE(bf16[0] | (bf16[1] << 8), 0x3f80);
    QCOMPARE(bf16[6] | (bf16[7] << 8), 0x3dcd);
    dequantizeRow(GgmlType::BF16, bf16.data(), back.data(), n);
    QCOMPARE(back[1], -0.5f);
    QCOMPARE(back[3], std::bit_cast<float>(0x3dcd0000u));
    QCOMPARE(back[5], -3.25f);
    Bytes f32(4 * values.size());
    quantizeRow(GgmlType::F32, values.data(), f32.data(), n);
    dequantizeRow(GgmlType::F32, f32.data(), back.data(), n);
    QCOMPARE(back, values);
}

// Two blocks: d = 0.5 and d = -2 (0x3800, 0xc000) over the quants j - 16, with 127 and -128.
void TestQuantBlocks::dequantizeQ8_0() {
    Bytes row(68);
    putHalf(row, 0, 0.5f);
    putHalf(row, 34, -2.0f);
    const auto quant = [](int j) { return j == 30 ? 127 : j == 31 ? -128 : j - 16; };
    for (int j = 0; j < 32; ++j)
        row[2 + j] = row[36 + j] = static_cast<uint8_t>(quant(j));
    expectValues(GgmlType::Q8_0, row, 64,
                 [&](int i) { return (i < 32 ? 0.5 : -2.0) * quant(i % 32); });
    std::vector<float> values(64);
    dequantizeRow(GgmlType::Q8_0, row.data(), values.data(), 64);
    QCOMPARE(values[31], -64.0f);
    QCOMPARE(values[62], -254.0f);
}

// Q8_1 is d, s, qs[32]: s (the activations' sum for the Q4_1 / Q5_1 dots) plays no part here.
void TestQuantBlocks::dequantizeQ8_1() {
    Bytes block(36);
    putHalf(block, 0, 0.25f);
    putHalf(block, 2, 1000.0f);
    for (int j = 0; j < 32; ++j)
        block[4 + j] = static_cast<uint8_t>(int8_t(3 * j - 50));
    expectValues(GgmlType::Q8_1, block, 32, [](int i) { return 0.25 * (3 * i - 50); });
}

// d = 2; byte j holds value j in its low nibble and value j + 16 in its high one: x = d (q - 8).
void TestQuantBlocks::dequantizeQ4_0() {
    Bytes block(18);
    putHalf(block, 0, 2.0f);
    for (int j = 0; j < 16; ++j)
        block[2 + j] = static_cast<uint8_t>(j | ((15 - j) << 4));
    expectValues(GgmlType::Q4_0, block, 32,
                 [](int i) { return 2.0 * ((i < 16 ? i : 31 - i) - 8); });
    std::vector<float> values(32);
    dequantizeRow(GgmlType::Q4_0, block.data(), values.data(), 32);
    QCOMPARE(values[0], -16.0f);
    QCOMPARE(values[15], 14.0f);
    QCOMPARE(values[16], 14.0f);
}

// d = 0.5, m = -1 at bytes 0 and 2: x = d q + m.
void TestQuantBlocks::dequantizeQ4_1() {
    Bytes block(20);
    putHalf(block, 0, 0.5f);
    putHalf(block, 2, -1.0f);
    for (int j = 0; j < 16; ++j)
        block[4 + j] = static_cast<uint8_t>(j | ((15 - j) << 4));
    expectValues(GgmlType::Q4_1, block, 32,
                 [](int i) { return 0.5 * (i < 16 ? i : 31 - i) - 1.0; });
}

// d = 2, qh = bits 0 and 31 (value 0 and value 31 get their fifth bit): x = d (q - 16).
void TestQuantBlocks::dequantizeQ5_0() {
    Bytes block(22);
    putHalf(block, 0, 2.0f);
    block[2] = 0x01;
    block[5] = 0x80;
    for (int j = 0; j < 16; ++j)
        block[6 + j] = static_cast<uint8_t>(j | ((15 - j) << 4));
    expectValues(GgmlType::Q5_0, block, 32, [](int i) {
        const int low = i < 16 ? i : 31 - i;
        return 2.0 * ((low | (i == 0 || i == 31 ? 16 : 0)) - 16);
    });
    std::vector<float> values(32);
    dequantizeRow(GgmlType::Q5_0, block.data(), values.data(), 32);
    QCOMPARE(values[0], 0.0f);   // 0 | 16 - 16
    QCOMPARE(values[1], -30.0f); // 1 - 16
    QCOMPARE(values[31], 0.0f);  // high nibble of byte 15 is 0, | 16
}

// d = 0.25, m = 10, qh = bits 1 and 16 (bytes 4..7 hold qh): x = d q + m.
void TestQuantBlocks::dequantizeQ5_1() {
    Bytes block(24);
    putHalf(block, 0, 0.25f);
    putHalf(block, 2, 10.0f);
    block[4] = 0x02;
    block[6] = 0x01;
    for (int j = 0; j < 16; ++j)
        block[8 + j] = static_cast<uint8_t>(j | ((15 - j) << 4));
    expectValues(GgmlType::Q5_1, block, 32, [](int i) {
        const int low = i < 16 ? i : 31 - i;
        return 0.25 * (low | (i == 1 || i == 16 ? 16 : 0)) + 10.0;
    });
    std::vector<float> values(32);
    dequantizeRow(GgmlType::Q5_1, block.data(), values.data(), 32);
    QCOMPARE(values[1], 14.25f);  // 17 / 4 + 10
    QCOMPARE(values[16], 17.75f); // 31 / 4 + 10
}

// Every nibble 0..15 once per half: x = d kvalues_iq4nl[q].
void TestQuantBlocks::dequantizeIQ4_NL() {
    Bytes block(18);
    putHalf(block, 0, -0.5f);
    for (int j = 0; j < 16; ++j)
        block[2 + j] = static_cast<uint8_t>(j | ((15 - j) << 4));
    expectValues(GgmlType::IQ4_NL, block, 32,
                 [](int i) { return -0.5 * kIq4Levels[i < 16 ? i : 31 - i]; });
}

// scales[j] = scale j | min (15 - j) << 4 (bytes 0..15), qs at 16, d = 1 at 80, dmin = 0.5 at 82.
// qs[l] is 0xe4 (quarters k = 0..3 hold 0, 1, 2, 3) for even l and 0x1b (3, 2, 1, 0) for odd l.
void TestQuantBlocks::dequantizeQ2_K() {
    Bytes block(84);
    for (int j = 0; j < 16; ++j)
        block[j] = static_cast<uint8_t>(j | ((15 - j) << 4));
    for (int l = 0; l < 64; ++l)
        block[16 + l] = l % 2 ? 0x1b : 0xe4;
    putHalf(block, 80, 1.0f);
    putHalf(block, 82, 0.5f);
    const auto expected = [](int i) { // value 128h + 32k + l: bits 2k of qs[32h + l]
        const int k = (i % 128) / 32;
        const int q = (i % 32) % 2 ? 3 - k : k;
        const int sub = i / 16;
        return 1.0 * sub * q - 0.5 * (15 - sub);
    };
    expectValues(GgmlType::Q2_K, block, 256, expected);
    QCOMPARE(expected(0), -7.5);   // scale 0, min 15
    QCOMPARE(expected(41), -2.5);  // sub-block 2, k = 1, odd l: q = 2 -> 2 * 2 - 6.5
    QCOMPARE(expected(254), 45.0); // sub-block 15, k = 3, even l: q = 3
}

// hmask at 0, qs at 32, scales at 96 (6-bit, offset 32), d = 0.25 at 108.
void TestQuantBlocks::dequantizeQ3_K() {
    Bytes block(110);
    int stored[16];
    for (int j = 0; j < 16; ++j) {
        stored[j] = (23 * j + 5) % 64; // 5, 28, 51, 10, ...: every top-2-bit pattern
        block[96 + j % 8] |= static_cast<uint8_t>((stored[j] & 0x0f) << (j < 8 ? 0 : 4));
        block[96 + 8 + j % 4] |= static_cast<uint8_t>((stored[j] >> 4) << (2 * (j / 4)));
    }
    for (int l = 0; l < 32; ++l)
        block[l] = static_cast<uint8_t>(0xa5 ^ (l * 9));
    for (int l = 0; l < 64; ++l)
        block[32 + l] = static_cast<uint8_t>(37 * l + 11);
    putHalf(block, 108, 0.25f);
    expectValues(GgmlType::Q3_K, block, 256, [&](int i) {
        const int half = i / 128, k = (i % 128) / 32, l = i % 32;
        const int low = (block[32 + 32 * half + l] >> (2 * k)) & 3;
        const bool high = (block[l] >> (4 * half + k)) & 1; // hmask bit i / 32 of byte i % 32
        return 0.25 * (stored[i / 16] - 32) * (low - (high ? 0 : 4));
    });
}

// d = 0.5, dmin = 2 at 0 and 2, scales at 4, qs at 16: x = d scale q - dmin min per 32 values.
void TestQuantBlocks::dequantizeQ4_K() {
    Bytes block(144);
    putHalf(block, 0, 0.5f);
    putHalf(block, 2, 2.0f);
    packKScales(kKScale, kKMin, block.data() + 4);
    for (int m = 0; m < 128; ++m)
        block[16 + m] = static_cast<uint8_t>(7 * m + 3);
    const auto expected = [&](int i) { // value 64p + l: low nibble of qs[32p + l]; + 32: high
        const uint8_t byte = block[16 + 32 * (i / 64) + i % 32];
        const int q = (i % 64) < 32 ? byte & 0x0f : byte >> 4;
        return 0.5 * kKScale[i / 32] * q - 2.0 * kKMin[i / 32];
    };
    expectValues(GgmlType::Q4_K, block, 256, expected);
    QCOMPARE(expected(0), 0.5 * 40 * 3 - 2.0 * 63);   // byte 16 = 3
    QCOMPARE(expected(255), 0.5 * 61 * 7 - 2.0 * 28); // byte 143 = (7 * 127 + 3) % 256 = 0x7c
}

// As Q4_K with qh[32] at 16 and qs at 48: value i's fifth bit is bit i / 32 of qh[i % 32].
void TestQuantBlocks::dequantizeQ5_K() {
    Bytes block(176);
    putHalf(block, 0, 0.25f);
    putHalf(block, 2, 0.5f);
    packKScales(kKScale, kKMin, block.data() + 4);
    for (int l = 0; l < 32; ++l)
        block[16 + l] = static_cast<uint8_t>(0x5a ^ (l * 13));
    for (int m = 0; m < 128; ++m)
        block[48 + m] = static_cast<uint8_t>(7 * m + 3);
    expectValues(GgmlType::Q5_K, block, 256, [&](int i) {
        const uint8_t byte = block[48 + 32 * (i / 64) + i % 32];
        const int low = (i % 64) < 32 ? byte & 0x0f : byte >> 4;
        const int fifth = (block[16 + i % 32] >> (i / 32)) & 1;
        return 0.25 * kKScale[i / 32] * (low | (fifth << 4)) - 0.5 * kKMin[i / 32];
    });
}

// ql at 0, qh at 128, int8 scales at 192 (-128 and 127 among them), d = 0.125 at 208.
void TestQuantBlocks::dequantizeQ6_K() {
    Bytes block(210);
    for (int m = 0; m < 128; ++m)
        block[m] = static_cast<uint8_t>(11 * m + 5);
    for (int m = 0; m < 64; ++m)
        block[128 + m] = static_cast<uint8_t>(29 * m + 7);
    const int scales[16] = {-128, 127, -1, 5, 64, -77, 0, 33, 1, -2, 100, -100, 17, -17, 90, 8};
    for (int j = 0; j < 16; ++j)
        block[192 + j] = static_cast<uint8_t>(int8_t(scales[j]));
    putHalf(block, 208, 0.125f);
    expectValues(GgmlType::Q6_K, block, 256, [&](int i) {
        // value 128h + 32k + l: low 4 bits from ql[64h + 32 (k & 1) + l] (low nibble for k < 2),
        // top 2 bits from bits 2k of qh[32h + l]
        const int half = i / 128, k = (i % 128) / 32, l = i % 32;
        const uint8_t low = block[64 * half + 32 * (k & 1) + l];
        const int q =
            (k < 2 ? low & 0x0f : low >> 4) | (((block[128 + 32 * half + l] >> (2 * k)) & 3) << 4);
        return 0.125 * scales[i / 16] * (q - 32);
    });
}

// d = 0.5, scales_h at 2, scales_l at 4..7, qs at 8; 6-bit scales offset by 32 per 32 values.
void TestQuantBlocks::dequantizeIQ4_XS() {
    Bytes block(136);
    putHalf(block, 0, 0.5f);
    const int stored[8] = {0, 63, 31, 32, 17, 46, 5, 60};
    uint16_t high = 0;
    for (int j = 0; j < 8; ++j) {
        block[4 + j / 2] |= static_cast<uint8_t>((stored[j] & 0x0f) << (4 * (j % 2)));
        high = static_cast<uint16_t>(high | ((stored[j] >> 4) << (2 * j)));
    }
    block[2] = static_cast<uint8_t>(high & 0xff);
    block[3] = static_cast<uint8_t>(high >> 8);
    for (int m = 0; m < 128; ++m)
        block[8 + m] = static_cast<uint8_t>(13 * m + 1);
    expectValues(GgmlType::IQ4_XS, block, 256, [&](int i) {
        const int q = nibble(block.data() + 8 + 16 * (i / 32), i % 32);
        return 0.5 * (stored[i / 32] - 32) * kIq4Levels[q];
    });
}

// f32 d at 0, qs at 4, bsums at 260 (not read by dequantization).
void TestQuantBlocks::dequantizeQ8_K() {
    Bytes block(292);
    const float d = -0.375f;
    std::memcpy(block.data(), &d, sizeof d);
    for (int i = 0; i < 256; ++i)
        block[4 + i] = static_cast<uint8_t>(int8_t(i - 128));
    expectValues(GgmlType::Q8_K, block, 256, [](int i) { return -0.375 * (i - 128); });
}

void TestQuantBlocks::rowErrors_data() {
    QTest::addColumn<uint32_t>("type");
    QTest::addColumn<int>("n");
    QTest::addColumn<QString>("message");
    QTest::newRow("K-quant row of 192")
        << uint32_t(GgmlType::Q4_K) << 192
        << "row length 192 is not a multiple of the Q4_K block size 256";
    QTest::newRow("Q5_0 row of 48") << uint32_t(GgmlType::Q5_0) << 48
                                    << "row length 48 is not a multiple of the Q5_0 block size 32";
    QTest::newRow("IQ2_XXS") << uint32_t(GgmlType::IQ2_XXS) << 256
                             << "no row conversion for tensor type IQ2_XXS";
    QTest::newRow("unknown id") << 77u << 32 << "no row conversion for tensor type type 77";
}

void TestQuantBlocks::rowErrors() {
    QFETCH(uint32_t, type);
    QFETCH(int, n);
    QFETCH(QString, message);
    std::vector<uint8_t> bytes(1024);
    std::vector<float> values(1024);
    for (int direction = 0; direction < 2; ++direction) {
        try {
            if (direction == 0)
                dequantizeRow(GgmlType(type), bytes.data(), values.data(), n);
            else
                quantizeRow(GgmlType(type), values.data(), bytes.data(), n);
            QFAIL("no exception");
        } catch (const std::invalid_argument& error) {
            QCOMPARE(QString(error.what()), message);
        }
    }
}

QTEST_GUILESS_MAIN(TestQuantBlocks)
#include "test_quant_blocks.moc"
