// The numeric kernels against their scalar references and against properties they must have.
#include "model/ops.h"

#include <QtTest>

#include <cmath>
#include <random>
#include <vector>

using namespace sinkscope;

namespace {

std::vector<float> randomVector(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (float& x : v)
        x = dist(rng);
    return v;
}

} // namespace

class TestOps : public QObject {
    Q_OBJECT
private slots:
    void dotMatchesReference_data() {
        QTest::addColumn<int>("n");
        for (int n : {1, 7, 8, 9, 31, 32, 64, 172, 768, 1001})
            QTest::addRow("n=%d", n) << n;
    }
    void dotMatchesReference() {
        QFETCH(int, n);
        const auto a = randomVector(n, 1), b = randomVector(n, 2);
        const float fast = dot(a.data(), b.data(), n);
        const float slow = ref::dot(a.data(), b.data(), n);
        QVERIFY2(std::fabs(fast - slow) <= 1e-5f * std::max(1.0f, std::fabs(slow)),
                 qPrintable(QString("%1 vs %2").arg(fast).arg(slow)));
    }

    void matvecMatchesReference() {
        const int rows = 172, cols = 64;
        const auto w = randomVector(static_cast<size_t>(rows) * cols, 3);
        const auto x = randomVector(cols, 4);
        std::vector<float> fast(rows), slow(rows);
        const Matrix m{w.data(), rows, cols};
        matvec(m, x.data(), fast.data());
        ref::matvec(m, x.data(), slow.data());
        for (int r = 0; r < rows; ++r)
            QVERIFY(std::fabs(fast[r] - slow[r]) <= 1e-5f);
    }

    void rmsNormHasUnitRms() {
        const auto x = randomVector(64, 5);
        const std::vector<float> ones(64, 1.0f);
        std::vector<float> out(64);
        rmsNorm(x.data(), ones.data(), 64, 0.0f, out.data());
        double sum = 0;
        for (float v : out)
            sum += v * v;
        QCOMPARE_LE(std::fabs(std::sqrt(sum / 64) - 1.0), 1e-5);
    }

    void softmaxSumsToOne() {
        std::vector<float> x{1000.0f, 999.0f, 990.0f, 995.0f}; // large values must not overflow
        softmax(x.data(), 4);
        QCOMPARE_LE(std::fabs(x[0] + x[1] + x[2] + x[3] - 1.0f), 1e-6f);
        QVERIFY(x[0] > x[1] && x[1] > x[3] && x[3] > x[2]);
    }

    // RoPE scores depend only on the distance between query and key, and rotation keeps norms.
    void ropeDependsOnlyOnDistance_data() {
        QTest::addColumn<int>("style");
        QTest::addRow("adjacent pairs") << int(RopeStyle::AdjacentPairs);
        QTest::addRow("half split") << int(RopeStyle::HalfSplit);
    }
    void ropeDependsOnlyOnDistance() {
        QFETCH(int, style);
        const auto q0 = randomVector(16, 6), k0 = randomVector(16, 7);
        const auto score = [&](int64_t qp, int64_t kp) {
            auto q = q0, k = k0;
            rope(q.data(), 1, 16, qp, 10000.0f, RopeStyle(style));
            rope(k.data(), 1, 16, kp, 10000.0f, RopeStyle(style));
            return dot(q.data(), k.data(), 16);
        };
        QCOMPARE_LE(std::fabs(score(10, 3) - score(107, 100)), 1e-4f);
        QCOMPARE_LE(std::fabs(score(0, 0) - dot(q0.data(), k0.data(), 16)), 1e-6f);
        auto q = q0;
        rope(q.data(), 1, 16, 1234, 10000.0f, RopeStyle(style));
        QCOMPARE_LE(std::fabs(dot(q.data(), q.data(), 16) - dot(q0.data(), q0.data(), 16)), 1e-4f);
    }

    // Which elements pair up: adjacent (0,1) vs half split (0, d/2). At position 1 the first pair
    // turns by exactly 1 radian.
    void ropePairsTheRightElements() {
        std::vector<float> adjacent{1, 0, 0, 0}, half{1, 0, 0, 0};
        rope(adjacent.data(), 1, 4, 1, 10000.0f, RopeStyle::AdjacentPairs);
        rope(half.data(), 1, 4, 1, 10000.0f, RopeStyle::HalfSplit);
        QCOMPARE_LE(std::fabs(adjacent[0] - std::cos(1.0f)), 1e-6f);
        QCOMPARE_LE(std::fabs(adjacent[1] - std::sin(1.0f)), 1e-6f);
        QCOMPARE(adjacent[2], 0.0f);
        QCOMPARE_LE(std::fabs(half[0] - std::cos(1.0f)), 1e-6f);
        QCOMPARE(half[1], 0.0f);
        QCOMPARE_LE(std::fabs(half[2] - std::sin(1.0f)), 1e-6f);
    }

    // The vectorised exp against std::exp, at every tail length of the vector loop.
    void expMatchesStdExp() {
        std::vector<float> inputs;
        for (float x = -87.0f; x <= 88.0f; x += 0.0137f)
            inputs.push_back(x);
        for (float x : {0.0f, -0.0f, 1e-8f, -1e-8f, 0.5f, -0.5f, 88.0f})
            inputs.push_back(x);
        std::vector<float> values = inputs;
        expInPlace(values.data(), int(values.size()));
        for (size_t i = 0; i < inputs.size(); ++i) {
            const double expected = std::exp(double(inputs[i]));
            QVERIFY2(std::fabs(values[i] - expected) <= 2.5e-7 * expected,
                     qPrintable(QString("exp(%1) = %2, expected %3").arg(inputs[i]).arg(values[i]).arg(expected)));
        }
        for (int n = 1; n <= 17; ++n) {
            std::vector<float> tail(n, -1.0f);
            expInPlace(tail.data(), n);
            for (float v : tail)
                QCOMPARE_LE(std::fabs(v - std::exp(-1.0f)), 1e-7f);
        }
        std::vector<float> far{-200.0f, -1000.0f};
        expInPlace(far.data(), 2);
        QVERIFY(far[0] >= 0 && far[0] < 1e-37f && far[1] >= 0 && far[1] < 1e-37f);
    }

    // The F16C fast path rounds exactly as the scalar conversions do.
    void roundToHalfMatchesReference() {
        auto values = randomVector(1003, 9);
        for (float& v : values)
            v *= 300.0f;
        values.push_back(65504.0f);
        values.push_back(1e-7f);
        values.push_back(70000.0f);
        auto expected = values;
        roundToHalf(values.data(), values.size());
        ref::roundToHalf(expected.data(), expected.size());
        for (size_t i = 0; i < values.size(); ++i)
            QCOMPARE(values[i], expected[i]);
        QCOMPARE(values[values.size() - 3], 65504.0f);
    }

    void swigluMatchesDefinition() {
        std::vector<float> gate{-2, 0, 3}, up{1, 5, 2};
        swiglu(gate.data(), up.data(), 3);
        QCOMPARE_LE(std::fabs(gate[0] - (-2 / (1 + std::exp(2.0f)))), 1e-6f);
        QCOMPARE(gate[1], 0.0f);
        QCOMPARE_LE(std::fabs(gate[2] - 3 / (1 + std::exp(-3.0f)) * 2), 1e-5f);
    }
};

QTEST_GUILESS_MAIN(TestOps)
#include "test_ops.moc"
