// The numeric kernels against their scalar references and against properties they must have.
#include "model/kernels/ggml_float.h"
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
    // Four-row blocks and the rows left over give each row's lane sum (ggml::laneDot16), within
    // float rounding of the scalar reference.
    void matvecMatchesReference_data() {
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("cols");
        for (auto [rows, cols] : {std::pair{172, 64}, {7, 1001}, {5, 9}, {4, 16}})
            QTest::addRow("%dx%d", rows, cols) << rows << cols;
    }
    void matvecMatchesReference() {
        QFETCH(int, rows);
        QFETCH(int, cols);
        const auto w = randomVector(static_cast<size_t>(rows) * cols, 3);
        const auto x = randomVector(cols, 4);
        std::vector<float> fast(rows), slow(rows);
        const Matrix m{w.data(), rows, cols};
        matvec(m, x.data(), fast.data());
        ref::matvec(m, x.data(), slow.data());
        for (int r = 0; r < rows; ++r) {
            const float* row = w.data() + static_cast<size_t>(r) * cols;
            QCOMPARE(fast[r], ggml::laneDot16(row, x.data(), cols));
            QVERIFY(std::fabs(fast[r] - slow[r]) <= 1e-5f * std::max(1.0f, std::fabs(slow[r])));
        }
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
            return ref::dot(q.data(), k.data(), 16);
        };
        QCOMPARE_LE(std::fabs(score(10, 3) - score(107, 100)), 1e-4f);
        QCOMPARE_LE(std::fabs(score(0, 0) - ref::dot(q0.data(), k0.data(), 16)), 1e-6f);
        auto q = q0;
        rope(q.data(), 1, 16, 1234, 10000.0f, RopeStyle(style));
        QCOMPARE_LE(
            std::fabs(ref::dot(q.data(), q.data(), 16) - ref::dot(q0.data(), q0.data(), 16)),
            1e-4f);
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
};

QTEST_GUILESS_MAIN(TestOps)
#include "test_ops.moc"
