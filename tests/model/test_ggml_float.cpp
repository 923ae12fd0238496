// The float arithmetic in ggml's order (model/kernels/ggml_float.h): the folds and lane sums give
// what that order gives where a plain left-to-right sum does not, the exp is accurate, the softmax
// and SwiGLU follow their definitions, and padding to the lane width changes nothing.
#include "model/kernels/ggml_float.h"
#include "model/kernels/kernel_table.h"

#include <QtTest>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <vector>

using namespace sinkscope;

namespace {

bool sameBits(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (std::bit_cast<uint32_t>(a[i]) != std::bit_cast<uint32_t>(b[i])) return false;
    return true;
}

constexpr float kTwo24 = 16777216.0f; // 2^24: adding 1 to it is lost in f32

std::vector<float> randomVector(size_t n, uint32_t seed, float scale = 1.0f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-scale, scale);
    std::vector<float> v(n);
    for (float& x : v)
        x = dist(rng);
    return v;
}

} // namespace

class TestGgmlFloat : public QObject {
    Q_OBJECT
private slots:
    // {2^24, 1, 1, 0, -2^24, 0, 0, 0}: halves {0, 1, 1, 0}, then (0 + 1) + (1 + 0) = 2, where a
    // left-to-right sum loses both ones against 2^24 and gives 0.
    void foldsAddHalvesFirst() {
        const float eight[8] = {kTwo24, 1, 1, 0, -kTwo24, 0, 0, 0};
        QCOMPARE(ggml::foldLanes8(eight), 2.0f);
        float sixteen[16] = {};
        sixteen[0] = kTwo24;
        sixteen[3] = 1;
        sixteen[8] = -kTwo24;
        sixteen[9] = 1;
        QCOMPARE(ggml::foldLanes16(sixteen), 2.0f);
    }

    // Lanes 0 and 8 hold 1, lane 4 holds 2^24: lanes 0 and 8 meet first (2), then 2^24 + 2 is
    // exact. Summed in index order the ones are lost: 2^24.
    void laneDotSumsPerLane() {
        std::vector<float> a(16, 0.0f), ones(16, 1.0f);
        a[0] = 1;
        a[4] = kTwo24;
        a[8] = 1;
        QCOMPARE(ggml::laneDot16(a.data(), ones.data(), 16), kTwo24 + 2);
        // lane 0 accumulates a[0] then a[16] with one rounding each: 1 + 2^24 is lost to 2^24
        std::vector<float> b(32, 0.0f), ones32(32, 1.0f);
        b[0] = 1;
        b[16] = kTwo24;
        QCOMPARE(ggml::laneDot16(b.data(), ones32.data(), 32), kTwo24);
    }

    void laneDotIsADotProduct_data() {
        QTest::addColumn<int>("n");
        for (int n : {1, 15, 16, 17, 64, 100, 768})
            QTest::addRow("%d", n) << n;
    }
    void laneDotIsADotProduct() {
        QFETCH(int, n);
        const auto a = randomVector(size_t(n), 1), b = randomVector(size_t(n), 2);
        double exact = 0, magnitude = 0;
        for (int i = 0; i < n; ++i) {
            exact += double(a[i]) * b[i];
            magnitude += std::fabs(double(a[i]) * b[i]);
        }
        QVERIFY(std::fabs(ggml::laneDot16(a.data(), b.data(), n) - exact) <= 1e-6 * magnitude);
        // a short last chunk sums as if padded with zeros
        auto paddedA = a, paddedB = b;
        paddedA.resize((size_t(n) + 15) / 16 * 16, 0.0f);
        paddedB.resize(paddedA.size(), 0.0f);
        QCOMPARE(ggml::laneDot16(a.data(), b.data(), n),
                 ggml::laneDot16(paddedA.data(), paddedB.data(), int(paddedA.size())));
    }

    // ggml documents at most 1.45 ulp plus 0.5 for its rounding; counted in the ulp of the f32
    // nearest the exact value (half that below a power of two), the worst case here is 2.14.
    void vectorExpIsAccurate() {
        for (float x = -87.0f; x <= 88.0f; x += 0.0137f) {
            const double expected = std::exp(double(x));
            const float got = ggml::vectorExp(x);
            const double ulp = std::nextafter(float(expected), INFINITY) - float(expected);
            QVERIFY2(
                std::fabs(got - expected) <= 2.5 * ulp,
                qPrintable(QString("exp(%1) = %2, expected %3").arg(x).arg(got).arg(expected)));
        }
        QCOMPARE(ggml::vectorExp(0.0f), 1.0f);
        QCOMPARE(ggml::vectorExp(-200.0f), 0.0f);
        QCOMPARE(ggml::vectorExp(-INFINITY), 0.0f); // a masked attention score
        QCOMPARE(ggml::vectorExp(200.0f), INFINITY);
        QVERIFY(std::isnan(ggml::vectorExp(std::numeric_limits<float>::quiet_NaN())));
    }

    void softmaxRowIsASoftmax_data() {
        QTest::addColumn<int>("n");
        for (int n : {1, 4, 16, 20, 33})
            QTest::addRow("%d", n) << n;
    }
    void softmaxRowIsASoftmax() {
        QFETCH(int, n);
        auto x = randomVector(size_t(n), 3, 8.0f);
        x[0] += 1000.0f; // large scores must not overflow
        const auto scores = x;
        ggml::softmaxRow(x.data(), n);
        double denominator = 0;
        for (float s : scores)
            denominator += std::exp(double(s) - scores[0]);
        double sum = 0;
        for (int i = 0; i < n; ++i) {
            const double expected = std::exp(double(scores[i]) - scores[0]) / denominator;
            QVERIFY(std::fabs(x[i] - expected) <= 1e-6);
            sum += x[i];
        }
        QVERIFY(std::fabs(sum - 1.0) <= 1e-6);
        // masked cells (-inf) beyond the row change nothing, as in llama.cpp's padded rows
        auto padded = scores;
        padded.resize(48, -INFINITY);
        ggml::softmaxRow(padded.data(), 48);
        for (int i = 0; i < n; ++i)
            QCOMPARE(padded[i], x[i]);
        for (int i = n; i < 48; ++i)
            QCOMPARE(padded[i], 0.0f);
    }

    // Both paths: chunks of 16 (vectorExp) and the C library's expf for the rest.
    void swigluIsSiluTimesUp() {
        const int n = 16 + 3;
        auto gate = randomVector(size_t(n), 4, 6.0f);
        const auto up = randomVector(size_t(n), 5, 2.0f);
        const auto input = gate;
        ggml::swiglu(gate.data(), up.data(), n);
        for (int i = 0; i < n; ++i) {
            const double expected = input[i] / (1 + std::exp(-double(input[i]))) * up[i];
            QVERIFY(std::fabs(gate[i] - expected) <= 1e-6 * (1 + std::fabs(expected)));
        }
        std::vector<float> zero{0.0f}, one{1.0f};
        ggml::swiglu(zero.data(), one.data(), 1);
        QCOMPARE(zero[0], 0.0f);
    }

    // The kernels run at the best level this CPU supports (or the one SINKSCOPE_ISA names).
    void activeLevelIsTheBestSupported() {
        const Isa active = activeIsa();
        QVERIFY(isaSupported(active));
        QCOMPARE(kernels().isa, active);
        qInfo("kernels run at %s", isaName(active));
        if (std::getenv("SINKSCOPE_ISA")) return;
        for (const Isa isa : kAllIsas)
            if (isaSupported(isa)) QVERIFY(static_cast<int>(isa) <= static_cast<int>(active));
    }

    // Each instruction-set level this CPU runs gives the portable build's bits: the same C++ in
    // the same float order, compiled for wider registers (model/kernels/kernel_table.h). Lengths
    // around the 16-lane step, scores with masked cells, and a row range of the f32 product.
    void everyLevelMatchesThePortableKernels() {
        const KernelTable& portable = kernelsFor(Isa::Portable);
        for (const Isa isa : kAllIsas) {
            if (isa == Isa::Portable || !isaSupported(isa)) continue;
            const KernelTable& level = kernelsFor(isa);
            for (int n : {1, 7, 15, 16, 17, 64, 100, 333}) {
                const auto a = randomVector(size_t(n), 10 + n, 4.0f);
                const auto b = randomVector(size_t(n), 20 + n, 4.0f);
                QCOMPARE(std::bit_cast<uint32_t>(level.laneDot16(a.data(), b.data(), n)),
                         std::bit_cast<uint32_t>(portable.laneDot16(a.data(), b.data(), n)));
                auto scoresLevel = randomVector(size_t(n), 30 + n, 30.0f);
                scoresLevel[size_t(n) / 2] = -INFINITY;
                auto scoresPortable = scoresLevel;
                level.softmaxRow(scoresLevel.data(), n);
                portable.softmaxRow(scoresPortable.data(), n);
                QVERIFY(sameBits(scoresLevel, scoresPortable));
                auto gateLevel = randomVector(size_t(n), 40 + n, 12.0f);
                auto gatePortable = gateLevel;
                level.swiglu(gateLevel.data(), b.data(), n);
                portable.swiglu(gatePortable.data(), b.data(), n);
                QVERIFY(sameBits(gateLevel, gatePortable));
            }
            const auto lanes = randomVector(16, 50, 1e6f);
            QCOMPARE(level.foldLanes16(lanes.data()), portable.foldLanes16(lanes.data()));
            QCOMPARE(level.foldLanes8(lanes.data()), portable.foldLanes8(lanes.data()));
            for (float x : randomVector(10000, 60, 120.0f))
                QCOMPARE(std::bit_cast<uint32_t>(level.vectorExp(x)),
                         std::bit_cast<uint32_t>(portable.vectorExp(x)));
            constexpr int rows = 11, cols = 135;
            const auto w = randomVector(size_t(rows) * cols, 70);
            const auto x = randomVector(cols, 71);
            std::vector<float> outLevel(rows, -1.0f), outPortable(rows, -1.0f);
            level.matvecF32(w.data(), cols, x.data(), outLevel.data(), 1, 10);
            portable.matvecF32(w.data(), cols, x.data(), outPortable.data(), 1, 10);
            QVERIFY(sameBits(outLevel, outPortable));
            QCOMPARE(outLevel[0], -1.0f);
            QCOMPARE(outLevel[10], -1.0f);
            qInfo("%s: equals the portable kernels", isaName(isa));
        }
    }
};

QTEST_GUILESS_MAIN(TestGgmlFloat)
#include "test_ggml_float.moc"
