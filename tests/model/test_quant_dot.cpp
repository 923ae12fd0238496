// quantDot / quantMatvec: the activation type per weight type, hand-computed dots, every type's
// dot against a double-precision sum over the dequantized rows, the default kernels against
// their references, and the matrix-vector product against row-by-row dots.
#include "gguf/dequantize.h"
#include "gguf/quant_blocks.h"
#include "model/kernels/cpu_isa.h"
#include "model/kernels/kernel_table.h"
#include "model/quant_dot.h"
#include "quant_test_support.h"

#include <QtTest>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

using namespace sinkscope;
using namespace sinkscope::test;

namespace {

std::vector<float> dequantized(GgmlType type, const void* row, int64_t n) {
    std::vector<float> values(n);
    dequantizeRow(type, row, values.data(), n);
    return values;
}

struct Reference {
    double dot = 0.0;       // over the dequantized rows, plus ggml's Q8_1 sum correction
    double magnitude = 0.0; // sum of |w a|: the scale of the rounding errors
};

// The dot as exact arithmetic on the dequantized weights and activations. With Q8_1 activations
// ggml takes the weights' mins times the block's stored f16 s = f16(d * sum q) instead of
// d * sum q, so the reference adds m (s - d sum q) per block.
Reference referenceDot(GgmlType type, const Bytes& weights, const Bytes& activations, int64_t n) {
    const GgmlType activation = activationType(type);
    const std::vector<float> w = dequantized(type, weights.data(), n);
    const std::vector<float> a = dequantized(activation, activations.data(), n);
    Reference reference;
    for (int64_t i = 0; i < n; ++i) {
        reference.dot += double(w[i]) * double(a[i]);
        reference.magnitude += std::fabs(double(w[i]) * double(a[i]));
    }
    if (activation == GgmlType::Q8_1) {
        const size_t weightBytes = ggmlBlockBytes(type);
        for (int64_t block = 0; block < n / 32; ++block) {
            const uint8_t* x = weights.data() + block * weightBytes;
            const uint8_t* y = activations.data() + block * 36;
            const double m = fp16ToFp32(static_cast<uint16_t>(x[2] | (x[3] << 8)));
            const double d = fp16ToFp32(static_cast<uint16_t>(y[0] | (y[1] << 8)));
            const double s = fp16ToFp32(static_cast<uint16_t>(y[2] | (y[3] << 8)));
            int sum = 0;
            for (int j = 0; j < 32; ++j)
                sum += static_cast<int8_t>(y[4 + j]);
            reference.dot += m * (s - d * sum);
            reference.magnitude += std::fabs(m * s);
        }
    }
    return reference;
}

QString describe(GgmlType type, float got, double expected) {
    return QStringLiteral("%1: %2, expected %3")
        .arg(ggmlTypeName(type))
        .arg(got, 0, 'g', 9)
        .arg(expected, 0, 'g', 9);
}

} // namespace

class TestQuantDot : public QObject {
    Q_OBJECT

private slots:
    void activationTypes_data();
    void activationTypes();
    void nonFiniteActivations();
    void typesWithoutADot();
    void handComputedDots();
    void dotsMatchTheDequantizedRows_data();
    void dotsMatchTheDequantizedRows();
    void defaultKernelsMatchTheReferences();
    void matvecMatchesRowDots();
    void everyLevelMatchesThePortableKernels();
};

void TestQuantDot::activationTypes_data() {
    QTest::addColumn<uint32_t>("weight");
    QTest::addColumn<uint32_t>("activation");
    const auto row = [](GgmlType weight, GgmlType activation) {
        QTest::newRow(ggmlTypeName(weight)) << uint32_t(weight) << uint32_t(activation);
    };
    // ggml-cpu.c's type_traits_cpu[].vec_dot_type.
    row(GgmlType::F32, GgmlType::F32);
    row(GgmlType::F16, GgmlType::F16);
    row(GgmlType::BF16, GgmlType::BF16);
    for (GgmlType type : {GgmlType::Q4_0, GgmlType::Q5_0, GgmlType::Q8_0, GgmlType::IQ4_NL})
        row(type, GgmlType::Q8_0);
    for (GgmlType type : {GgmlType::Q4_1, GgmlType::Q5_1})
        row(type, GgmlType::Q8_1);
    for (GgmlType type : {GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K,
                          GgmlType::Q6_K, GgmlType::IQ4_XS})
        row(type, GgmlType::Q8_K);
}

void TestQuantDot::activationTypes() {
    QFETCH(uint32_t, weight);
    QFETCH(uint32_t, activation);
    QVERIFY(quantDotSupported(GgmlType(weight)));
    QCOMPARE(uint32_t(activationType(GgmlType(weight))), activation);
}

// A corrupt model can make NaN or infinite activations: they quantize to -128 (as ggml's AVX2
// quantizer turns them), never an undefined conversion, and the block's scale ignores the NaN.
void TestQuantDot::nonFiniteActivations() {
    std::vector<float> x(32, 0.0f);
    x[0] = 1.0f;
    x[1] = std::numeric_limits<float>::quiet_NaN();
    x[2] = 2.0f;
    x[3] = -0.5f;
    std::vector<uint8_t> block(34);
    quantizeActivations(GgmlType::Q8_0, x.data(), block.data(), 32);
    const auto quant = [&](int i) { return static_cast<int8_t>(block[2 + i]); };
    QCOMPARE(fp16ToFp32(static_cast<uint16_t>(block[0] | (block[1] << 8))),
             fp16ToFp32(fp32ToFp16(2.0f / 127.0f)));
    QCOMPARE(quant(0), int8_t{64}); // 63.5, rounded half to even
    QCOMPARE(quant(1), int8_t{-128});
    QCOMPARE(quant(2), int8_t{127});
    QCOMPARE(quant(3), int8_t{-32}); // -31.75
    // amax infinite: 127 / amax = 0, finite values quantize to 0, the infinite one (inf * 0 is
    // NaN) to -128
    x[2] = std::numeric_limits<float>::infinity();
    quantizeActivations(GgmlType::Q8_0, x.data(), block.data(), 32);
    QCOMPARE(quant(0), int8_t{0});
    QCOMPARE(quant(2), int8_t{-128});
    // a subnormal amax: 127 / amax overflows to infinity, every nonzero value to -128
    std::fill(x.begin(), x.end(), 0.0f);
    x[5] = 1e-40f;
    x[6] = -1e-40f;
    quantizeActivations(GgmlType::Q8_0, x.data(), block.data(), 32);
    QCOMPARE(quant(5), int8_t{-128});
    QCOMPARE(quant(6), int8_t{-128});
    QCOMPARE(quant(0), int8_t{-128}); // 0 * infinity is NaN
}

void TestQuantDot::typesWithoutADot() {
    for (GgmlType type : {GgmlType::Q8_1, GgmlType::Q8_K, GgmlType::IQ2_XXS, GgmlType(77)}) {
        QVERIFY(!quantDotSupported(type));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, activationType(type));
    }
    Bytes bytes(4096);
    std::vector<float> x(512), out(4);
    std::vector<std::byte> scratch;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             quantDot(GgmlType::Q8_K, bytes.data(), bytes.data(), 256));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             quantDot(GgmlType::Q4_K, bytes.data(), bytes.data(), 192));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             quantizeActivations(GgmlType::Q6_K, x.data(), bytes.data(), 320));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, quantMatvec(GgmlType::Q4_0, bytes.data(), 4, 48,
                                                                x.data(), out.data(), scratch));
    try {
        ref::quantDot(GgmlType::Q5_K, bytes.data(), bytes.data(), 200);
        QFAIL("no exception");
    } catch (const std::invalid_argument& error) {
        QCOMPARE(QString(error.what()),
                 "row length 200 is not a multiple of the Q5_K block size 256");
    }
}

void TestQuantDot::handComputedDots() {
    // Q4_0: d = 2, every nibble 9 (weights 2); activations x_j = j quantize to Q8_0 with
    // d = 31 / 127: the dot is d_w d_a sum(q) exactly as ggml forms it.
    Bytes q4(18, 0x99);
    q4[0] = 0x00;
    q4[1] = 0x40;
    std::vector<float> ramp(32);
    for (int j = 0; j < 32; ++j)
        ramp[j] = float(j);
    const Bytes q8 = activationsFor(GgmlType::Q4_0, ramp);
    int quantSum = 0;
    for (int j = 0; j < 32; ++j)
        quantSum += static_cast<int8_t>(q8[2 + j]);
    const float d8 = fp16ToFp32(static_cast<uint16_t>(q8[0] | (q8[1] << 8)));
    QCOMPARE(quantDot(GgmlType::Q4_0, q4.data(), q8.data(), 32),
             float(quantSum) * 1.0f * 2.0f * d8);
    QVERIFY(std::fabs(quantDot(GgmlType::Q4_0, q4.data(), q8.data(), 32) - 2.0f * 496.0f) < 2.0f);

    // Q4_1 with d = 1, m = 0.5 and every nibble 0: each weight is 0.5. Activations 127 then
    // 127 x 15 more and 17: d = 1, sum q = 2049, whose f16 s is 2048 (a tie, to even). ggml
    // takes m * s: 1024, where the exact dot is 1024.5.
    Bytes q41(20, 0x00);
    q41[1] = 0x3c; // d = 1
    q41[3] = 0x38; // m = 0.5
    std::vector<float> x(32, 0.0f);
    for (int j = 0; j < 16; ++j)
        x[j] = 127.0f;
    x[16] = 17.0f;
    const Bytes q81 = activationsFor(GgmlType::Q4_1, x);
    QCOMPARE(fp16ToFp32(static_cast<uint16_t>(q81[2] | (q81[3] << 8))), 2048.0f);
    QCOMPARE(quantDot(GgmlType::Q4_1, q41.data(), q81.data(), 32), 1024.0f);

    // Q4_K with d = dmin = 1, every scale and min 1, every nibble 3: each weight is 3 - 1 = 2.
    // Activations -127 then 255 ones: Q8_K with d = 1, so the dot is
    // 1 * 3 * (255 - 127) - 1 * 1 * 128 (from the block sums) = 256.
    Bytes q4k(144, 0x33);
    q4k[0] = q4k[2] = 0x00; // d = dmin = 1
    q4k[1] = q4k[3] = 0x3c;
    for (int j = 0; j < 12; ++j)
        q4k[4 + j] = j < 8 ? 0x01 : 0x11; // scale, min 1 for sub-blocks 0..3 and 4..7
    std::vector<float> ones(256, 1.0f);
    ones[0] = -127.0f;
    QCOMPARE(quantDot(GgmlType::Q4_K, q4k.data(), activationsFor(GgmlType::Q4_K, ones).data(), 256),
             256.0f);

    // F16 weights dot f16 activations: 1 + 2^-12 is not an f16 and rounds to 1 first.
    const Bytes f16{0x00, 0x3c, 0x00, 0x40}; // 1, 2
    const std::vector<float> near{1.0f + std::ldexp(1.0f, -12), 0.5f};
    QCOMPARE(quantDot(GgmlType::F16, f16.data(), activationsFor(GgmlType::F16, near).data(), 2),
             2.0f);
}

void TestQuantDot::dotsMatchTheDequantizedRows_data() {
    QTest::addColumn<uint32_t>("type");
    QTest::addColumn<bool>("randomBytes");
    for (GgmlType type : kWeightTypes) {
        QTest::addRow("%s quantized", ggmlTypeName(type)) << uint32_t(type) << false;
        QTest::addRow("%s random bytes", ggmlTypeName(type)) << uint32_t(type) << true;
    }
}

// ggml's dots are exact integer sums per block, scaled in f32: against the double sum over the
// dequantized rows they differ only by f32 rounding, ~1e-7 of the sum of |w a| per block scale.
void TestQuantDot::dotsMatchTheDequantizedRows() {
    QFETCH(uint32_t, type);
    QFETCH(bool, randomBytes);
    const auto weightType = GgmlType(type);
    constexpr int64_t n = 2048;
    std::mt19937 generator(type * 2 + randomBytes);
    for (int trial = 0; trial < 20; ++trial) {
        const float spread = trial % 3 == 0 ? 1e-3f : trial % 3 == 1 ? 1.0f : 40.0f;
        Bytes weights;
        if (randomBytes) {
            weights = randomRow(weightType, n, spread, generator);
        } else {
            const std::vector<float> values = randomValues(n, spread, generator);
            weights.resize(*ggmlByteSize(weightType, n));
            quantizeRow(weightType, values.data(), weights.data(), n);
        }
        const Bytes activations = activationsFor(weightType, randomValues(n, 3.0f, generator));
        const Reference reference = referenceDot(weightType, weights, activations, n);
        const float dot = quantDot(weightType, weights.data(), activations.data(), n);
        const double tolerance = 1e-5 * reference.magnitude + 1e-30;
        QVERIFY2(std::fabs(double(dot) - reference.dot) <= tolerance,
                 qPrintable(describe(weightType, dot, reference.dot)));
        QVERIFY(reference.magnitude > 0.0);
    }
}

// The default kernels sum the reference's exact block integers in ggml's x86-64 float order (fused
// multiply-adds into lanes, model/kernels/ggml_float.h), the references in ggml's portable C order:
// they agree to float rounding of the sum of |w a|. (That the default kernels give llama.cpp's bits
// is shown end to end, tests/model/test_reference_models.cpp.)
void TestQuantDot::defaultKernelsMatchTheReferences() {
    double worst = 0;
    for (GgmlType type : kWeightTypes) {
        std::mt19937 generator(uint32_t(type) + 100);
        for (int trial = 0; trial < 200; ++trial) {
            const int64_t n = 256 * (1 + trial % 9); // up to 2304 values
            const Bytes weights = randomRow(type, n, trial % 2 ? 1.0f : 0.01f, generator);
            const Bytes activations = activationsFor(type, randomValues(n, 2.0f, generator));
            const float fast = quantDot(type, weights.data(), activations.data(), n);
            const float reference = ref::quantDot(type, weights.data(), activations.data(), n);
            const double magnitude = referenceDot(type, weights, activations, n).magnitude;
            const double relative = std::fabs(double(fast) - reference) / magnitude;
            worst = std::max(worst, relative);
            QVERIFY2(relative <= 1e-6, qPrintable(describe(type, fast, reference)));
        }
    }
    qInfo("largest difference: %.2e of the sum of |w a|", worst);
    // Rows of a few values, and shorter than the float kernels' 32-value step.
    const Bytes f16{0x00, 0x3c, 0x00, 0xc0, 0x00, 0x38}; // 1, -2, 0.5
    const std::vector<float> x{3.0f, 0.25f, -4.0f};
    QCOMPARE(quantDot(GgmlType::F16, f16.data(), activationsFor(GgmlType::F16, x).data(), 3), 0.5f);
    QCOMPARE(ref::quantDot(GgmlType::F16, f16.data(), activationsFor(GgmlType::F16, x).data(), 3),
             0.5f);
}

// Each output is the dot of its row with x quantized once; the scratch buffer is reused across
// calls of any type and grows as needed.
void TestQuantDot::matvecMatchesRowDots() {
    std::vector<std::byte> scratch;
    std::mt19937 generator(5);
    for (GgmlType type : kWeightTypes) {
        for (int64_t cols : {256, 1024}) {
            constexpr int64_t rows = 13;
            const auto rowBytes = static_cast<size_t>(*ggmlByteSize(type, cols));
            Bytes matrix(rows * rowBytes + 1); // row-major, from an odd address: no alignment
            const Bytes packed = randomRow(type, rows * cols, 0.1f, generator);
            std::memcpy(matrix.data() + 1, packed.data(), packed.size());
            const std::vector<float> x = randomValues(cols, 1.5f, generator);
            std::vector<float> out(rows, -1.0f);
            quantMatvec(type, matrix.data() + 1, rows, cols, x.data(), out.data(), scratch);
            const Bytes activations = activationsFor(type, x);
            for (int64_t r = 0; r < rows; ++r) {
                const float dot =
                    quantDot(type, matrix.data() + 1 + r * rowBytes, activations.data(), cols);
                QCOMPARE(std::bit_cast<uint32_t>(out[r]), std::bit_cast<uint32_t>(dot));
            }
        }
    }
    std::vector<float> none;
    quantMatvec(GgmlType::Q4_K, nullptr, 0, 256, std::vector<float>(256).data(), none.data(),
                scratch);
}

// Each instruction-set level this CPU runs computes the portable build's bits for every type
// (model/kernels/kernel_table.h): the same C++, compiled for wider registers, in the same float
// order. Row ranges write exactly their rows.
// The level's Q8_0 / Q8_1 activation blocks equal the portable level's byte for byte: random
// rows at several scales, exact halves (rounded to even), and blocks with NaN, infinities, a
// subnormal amax and all zeros.
void compareActivationQuantizers(const KernelTable& portable, const KernelTable& level) {
    constexpr int64_t blocks = 24;
    std::mt19937 generator(77);
    std::vector<float> x = randomValues(32 * blocks, 3.0f, generator);
    for (int i = 0; i < 32; ++i) {
        x[32 + i] = i == 0 ? 127.0f : static_cast<float>(i) - 15.5f; // 127 / amax = 1: halves
        x[64 + i] =
            i == 3 ? std::numeric_limits<float>::quiet_NaN() : 0.25f * static_cast<float>(i);
        x[96 + i] = i == 7 ? -std::numeric_limits<float>::infinity() : 1.0f;
        x[128 + i] = i % 2 ? 1e-40f : -1e-40f;
        x[160 + i] = 0.0f;
        x[192 + i] *= 1e-3f;
        x[224 + i] *= 1e4f;
    }
    for (const bool q8_1 : {false, true}) {
        const size_t blockBytes = q8_1 ? sizeof(quant::BlockQ8_1) : sizeof(quant::BlockQ8_0);
        Bytes expected(blockBytes * blocks, 0xAA), got(blockBytes * blocks, 0x55);
        (q8_1 ? portable.quantizeQ8_1 : portable.quantizeQ8_0)(x.data(), expected.data(), blocks);
        (q8_1 ? level.quantizeQ8_1 : level.quantizeQ8_0)(x.data(), got.data(), blocks);
        QVERIFY2(expected == got, q8_1 ? "Q8_1 activations differ" : "Q8_0 activations differ");
    }
}

void TestQuantDot::everyLevelMatchesThePortableKernels() {
    const KernelTable& portable = kernelsFor(Isa::Portable);
    for (const Isa isa : kAllIsas) {
        if (isa == Isa::Portable) continue;
        if (!isaSupported(isa)) {
            qInfo("%s: not supported by this CPU, not compared", isaName(isa));
            continue;
        }
        const KernelTable& level = kernelsFor(isa);
        for (GgmlType type : kWeightTypes) {
            std::mt19937 generator(uint32_t(type) + 200);
            for (int trial = 0; trial < 40; ++trial) {
                const int64_t n = 256 * (1 + trial % 9);
                const int64_t blocks = n / ggmlBlockValues(type);
                const Bytes weights = randomRow(type, n, trial % 2 ? 1.0f : 0.01f, generator);
                const Bytes activations = activationsFor(type, randomValues(n, 2.0f, generator));
                const float expected =
                    portable.dot(type)(weights.data(), activations.data(), blocks);
                const float got = level.dot(type)(weights.data(), activations.data(), blocks);
                QVERIFY2(std::bit_cast<uint32_t>(got) == std::bit_cast<uint32_t>(expected),
                         qPrintable(QStringLiteral("%1 ").arg(isaName(isa)) +
                                    describe(type, got, expected)));
            }
            // 17 blocks of the 32-value types: kernels that take blocks four at a time end
            // with one alone
            constexpr int64_t rows = 9;
            const int64_t cols = ggmlBlockValues(type) == 32 ? 544 : 512;
            const auto rowBytes = static_cast<size_t>(*ggmlByteSize(type, cols));
            const Bytes matrix = randomRow(type, rows * cols, 0.1f, generator);
            const Bytes activations = activationsFor(type, randomValues(cols, 1.0f, generator));
            const int64_t blocks = cols / ggmlBlockValues(type);
            // Rows 2..6: a group of four and one more where rows are grouped (cpu_isa.h)
            const RowStreams active = activeRowStreams();
            for (const RowStreams streams : {RowStreams::Grouped, RowStreams::Single}) {
                setRowStreams(streams);
                std::vector<float> expected(rows, -1.0f), got(rows, -1.0f);
                portable.quantRows(type, matrix.data(), rowBytes, blocks, activations.data(),
                                   expected.data(), 2, 7);
                level.quantRows(type, matrix.data(), rowBytes, blocks, activations.data(),
                                got.data(), 2, 7);
                for (int64_t r = 0; r < rows; ++r) {
                    QVERIFY2(std::bit_cast<uint32_t>(got[r]) ==
                                 std::bit_cast<uint32_t>(expected[r]),
                             qPrintable(QStringLiteral("%1 rows, %2 ")
                                            .arg(rowStreamsName(streams))
                                            .arg(isaName(isa)) +
                                        describe(type, got[r], expected[r])));
                    if (r < 2 || r >= 7) QCOMPARE(got[r], -1.0f);
                }
            }
            setRowStreams(active);
        }
        compareActivationQuantizers(portable, level);
        qInfo("%s: every type's dot (rows grouped and single) and the activation quantizers equal "
              "the portable kernels'",
              isaName(isa));
    }
}

QTEST_GUILESS_MAIN(TestQuantDot)
#include "test_quant_dot.moc"
