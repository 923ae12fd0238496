// The decode loop on synthetic models of several weight types: once warm (the ring wrapped, the
// scratch buffers grown), feeding a token allocates nothing on the heap, and the logits are the
// same bits on one thread and on several.
#include "gguf/gguf.h"
#include "model/synthetic.h"
#include "session/session.h"

#include "synthetic_model_support.h"

#include <QtTest>

#include <atomic>
#include <bit>
#include <cstdlib>
#include <memory>
#include <new>

using namespace sinkscope;

namespace {

// Heap allocations made by any thread while counting is on. Every plain and nothrow form of new
// and delete is replaced (malloc and free), so that each pair matches.
std::atomic<bool> g_counting = false;
std::atomic<int64_t> g_allocations = 0;

void* allocate(std::size_t size) {
    if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1);
    if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
    throw std::bad_alloc();
}

} // namespace

void* operator new(std::size_t size) {
    return allocate(size);
}
void* operator new[](std::size_t size) {
    return allocate(size);
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
    try {
        return allocate(size);
    } catch (const std::bad_alloc&) {
        return nullptr;
    }
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
    try {
        return allocate(size);
    } catch (const std::bad_alloc&) {
        return nullptr;
    }
}
void operator delete(void* p) noexcept {
    std::free(p);
}
void operator delete[](void* p) noexcept {
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
    std::free(p);
}

namespace {

// 256 wide: a K-quant row is whole 256-value super-blocks.
std::unique_ptr<Model> syntheticModel(GgmlType type) {
    SyntheticSpec spec;
    spec.nEmbd = 256;
    spec.nFf = 512;
    spec.nHead = 8;
    spec.nHeadKv = 2;
    spec.weightType = type;
    return test::modelFromSpec(spec);
}

int32_t nextToken(std::span<const float> logits) {
    return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

} // namespace

class TestDecodeLoop : public QObject {
    Q_OBJECT
private slots:
    void noAllocationOnceWarm_data() {
        QTest::addColumn<uint32_t>("type");
        QTest::addColumn<int>("kvBits");
        QTest::addColumn<bool>("streaming");
        QTest::addColumn<int>("threads");
        QTest::newRow("F32, kv 8, 1 thread") << uint32_t(GgmlType::F32) << 8 << false << 1;
        QTest::newRow("Q8_0, kv 16, 2 threads") << uint32_t(GgmlType::Q8_0) << 16 << false << 2;
        QTest::newRow("Q4_K, kv 8, streaming, 2 threads")
            << uint32_t(GgmlType::Q4_K) << 8 << true << 2;
        QTest::newRow("Q6_K, kv 32, streaming, 1 thread")
            << uint32_t(GgmlType::Q6_K) << 32 << true << 1;
    }
    void noAllocationOnceWarm() {
        QFETCH(uint32_t, type);
        QFETCH(int, kvBits);
        QFETCH(bool, streaming);
        QFETCH(int, threads);
        const std::unique_ptr<Model> model = syntheticModel(GgmlType(type));
        SessionOptions options;
        options.kvWindow = 64;
        options.kvBits = kvBits;
        options.sinks = SinkMode::FirstN;
        options.positions = streaming ? PositionMode::Streaming : PositionMode::Absolute;
        options.threads = threads;
        Session session(*model, options);
        int32_t token = model->tokenizer().bos();
        for (int i = 0; i < 150; ++i) // past the window: the ring wraps, evictions happen
            token = nextToken(session.feed(token));
        g_allocations = 0;
        g_counting = true;
        for (int i = 0; i < 100; ++i)
            token = nextToken(session.feed(token));
        g_counting = false;
        QCOMPARE(g_allocations.load(), int64_t(0));
        QVERIFY(session.cache().evictions() > 0);
    }

    // Splitting the products among threads changes no bit of the logits, step after step.
    void threadsGiveTheSameLogits() {
        const std::unique_ptr<Model> model = syntheticModel(GgmlType::Q4_K);
        SessionOptions one;
        one.kvWindow = 32;
        SessionOptions three = one;
        three.threads = 3;
        Session single(*model, one), split(*model, three);
        int32_t token = model->tokenizer().bos();
        for (int step = 0; step < 60; ++step) {
            const std::span<const float> a = single.feed(token);
            const std::span<const float> b = split.feed(token);
            for (size_t i = 0; i < a.size(); ++i)
                if (std::bit_cast<uint32_t>(a[i]) != std::bit_cast<uint32_t>(b[i]))
                    QFAIL(qPrintable(QStringLiteral("step %1, logit %2: %3 vs %4")
                                         .arg(step)
                                         .arg(i)
                                         .arg(a[i])
                                         .arg(b[i])));
            token = nextToken(a);
        }
    }

    void threadCountIsChecked() {
        const std::unique_ptr<Model> model = syntheticModel(GgmlType::F32);
        for (int threads : {0, kMaxThreads + 1}) {
            SessionOptions options;
            options.threads = threads;
            QVERIFY_THROWS_EXCEPTION(std::invalid_argument, Session(*model, options));
        }
    }
};

QTEST_GUILESS_MAIN(TestDecodeLoop)
#include "test_decode_loop.moc"
