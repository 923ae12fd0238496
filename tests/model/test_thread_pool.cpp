// The forward pass's thread team: every part runs once per job on its own thread, ranges cover
// their span exactly once, jobs run back to back without loss, and a matrix product split among
// threads gives the same bits as on one.
#include "gguf/dequantize.h"
#include "model/ops.h"
#include "model/quant_dot.h"
#include "model/thread_pool.h"

#include <QtTest>

#include <atomic>
#include <bit>
#include <random>
#include <set>
#include <thread>
#include <vector>

using namespace sinkscope;

namespace {

std::vector<float> randomValues(size_t n, uint32_t seed) {
    std::mt19937 generator(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> values(n);
    for (float& value : values)
        value = normal(generator);
    return values;
}

} // namespace

class TestThreadPool : public QObject {
    Q_OBJECT
private slots:
    void everyPartRunsOnceOnItsOwnThread_data() {
        QTest::addColumn<int>("threads");
        for (int threads : {1, 2, 3, 5})
            QTest::addRow("%d", threads) << threads;
    }
    void everyPartRunsOnceOnItsOwnThread() {
        QFETCH(int, threads);
        ThreadPool pool(threads);
        QCOMPARE(pool.threads(), threads);
        std::vector<std::atomic<int>> calls(static_cast<size_t>(threads));
        std::vector<std::thread::id> ids(static_cast<size_t>(threads));
        pool.run([&](int part) {
            calls[static_cast<size_t>(part)].fetch_add(1);
            ids[static_cast<size_t>(part)] = std::this_thread::get_id();
        });
        for (auto& count : calls)
            QCOMPARE(count.load(), 1);
        QCOMPARE(ids[0], std::this_thread::get_id()); // part 0 is the caller's
        QCOMPARE(std::set<std::thread::id>(ids.begin(), ids.end()).size(), size_t(threads));
    }

    void atLeastOneThread() {
        ThreadPool pool(0);
        QCOMPARE(pool.threads(), 1);
        int calls = 0;
        pool.run([&](int part) { calls += part + 1; });
        QCOMPARE(calls, 1);
    }

    // Each index of [0, count) is visited once, inner boundaries on multiples of `align`.
    void rangesCoverTheSpanOnce_data() {
        QTest::addColumn<int>("threads");
        QTest::addColumn<qint64>("count");
        QTest::addColumn<qint64>("align");
        QTest::newRow("even") << 2 << qint64(1000) << qint64(1);
        QTest::newRow("fewer items than threads") << 4 << qint64(3) << qint64(1);
        QTest::newRow("four-row groups") << 3 << qint64(151'936) << qint64(4);
        QTest::newRow("groups larger than a share") << 3 << qint64(10) << qint64(8);
        QTest::newRow("empty") << 2 << qint64(0) << qint64(1);
    }
    void rangesCoverTheSpanOnce() {
        QFETCH(int, threads);
        QFETCH(qint64, count);
        QFETCH(qint64, align);
        ThreadPool pool(threads);
        std::vector<std::atomic<int>> visits(static_cast<size_t>(count));
        std::atomic<int> badBoundaries = 0;
        pool.forRanges(
            count, align,
            [&](int64_t begin, int64_t end) {
                if (begin >= end || (begin % align != 0 && begin != count)) ++badBoundaries;
                for (int64_t i = begin; i < end; ++i)
                    visits[static_cast<size_t>(i)].fetch_add(1);
            },
            ThreadPool::kMinParallelWork);
        QCOMPARE(badBoundaries.load(), 0);
        for (auto& visit : visits)
            QCOMPARE(visit.load(), 1);
    }

    // Too little work to be worth waking the team: one range, on the calling thread.
    void smallWorkStaysOnTheCaller() {
        ThreadPool pool(3);
        std::vector<std::pair<int64_t, int64_t>> ranges;
        std::thread::id caller;
        pool.forRanges(
            100, 1,
            [&](int64_t begin, int64_t end) {
                ranges.emplace_back(begin, end);
                caller = std::this_thread::get_id();
            },
            ThreadPool::kMinParallelWork - 1);
        QCOMPARE(ranges.size(), size_t(1));
        QCOMPARE(ranges[0], std::make_pair(int64_t(0), int64_t(100)));
        QCOMPARE(caller, std::this_thread::get_id());
    }

    // Jobs back to back, with pauses long enough for the workers to fall asleep between some.
    void manyJobsInARow() {
        ThreadPool pool(2);
        std::atomic<int64_t> total = 0;
        for (int job = 0; job < 5000; ++job) {
            pool.run([&](int part) { total += part + 1; });
            if (job % 1000 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        QCOMPARE(total.load(), int64_t(5000) * 3);
    }

    // Rows split among threads give each row's own bits: the f32 kernel's four-row groups and the
    // quantized rows alike.
    void splitProductsEqualOneThread_data() {
        QTest::addColumn<uint32_t>("type");
        for (GgmlType type : {GgmlType::F32, GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K})
            QTest::newRow(ggmlTypeName(type)) << uint32_t(type);
    }
    void splitProductsEqualOneThread() {
        QFETCH(uint32_t, type);
        const auto weightType = GgmlType(type);
        constexpr int rows = 203, cols = 512;
        const std::vector<float> values = randomValues(size_t(rows) * cols, 1);
        const auto rowBytes = static_cast<size_t>(*ggmlByteSize(weightType, cols));
        std::vector<uint8_t> packed(rowBytes * rows);
        Matrix w{values.data(), rows, cols};
        if (weightType != GgmlType::F32) {
            for (int r = 0; r < rows; ++r)
                quantizeRow(weightType, values.data() + size_t(r) * cols,
                            packed.data() + r * rowBytes, cols);
            w = Matrix{nullptr, rows, cols, weightType, packed.data(), rowBytes};
        }
        const std::vector<float> x = randomValues(cols, 2);
        std::vector<float> single(rows), split(rows);
        matvec(w, x.data(), single.data());
        for (int threads : {2, 3, 7}) {
            ThreadPool pool(threads);
            std::fill(split.begin(), split.end(), 0.0f);
            matvec(w, x.data(), split.data(), &pool);
            for (int r = 0; r < rows; ++r)
                QCOMPARE(std::bit_cast<uint32_t>(split[r]), std::bit_cast<uint32_t>(single[r]));
        }
    }
};

QTEST_GUILESS_MAIN(TestThreadPool)
#include "test_thread_pool.moc"
