// The decoded copy of the cache that attention keeps between tokens (model/attention.h,
// gatherSlots): after every placement and write of a random session (sinks, a ring that fills and
// evicts, kept lists that grow, shift and shrink, every cache width), each column and value row it
// holds equals a fresh decode of the cache, bit for bit; it decodes again only what changed; two
// caches and a cleared cache through one scratch, and the shared copy of very wide caches, stay
// exact. KvCache::rowVersion is what tells it a row changed.
#include "memory/kv_cache.h"
#include "model/attention.h"
#include "model/thread_pool.h"
#include "quant_test_support.h"

#include <QtTest>

#include <bit>
#include <random>
#include <vector>

using namespace sinkscope;
using sinkscope::test::randomValues;

namespace {

ModelConfig config(int layers, int kvHeads, int headDim) {
    ModelConfig c;
    c.nLayer = layers;
    c.nHead = kvHeads * 2;
    c.nHeadKv = kvHeads;
    c.headDim = headDim;
    c.nEmbd = c.nHead * headDim;
    return c;
}

// Every gathered column and value row of `layer` against a fresh gather of the same slots.
bool matchesFreshDecode(const KvCache& cache, AttentionScratch& s, int layer,
                        const std::vector<int>& gathered, QString& why) {
    const auto kvDim = static_cast<size_t>(cache.shape().kvDim);
    const auto stride = static_cast<size_t>(s.slotCount);
    std::vector<float> columns(kvDim * gathered.size());
    std::vector<float> rows(kvDim * gathered.size());
    cache.gatherK(layer, gathered, columns.data());
    cache.gatherV(layer, gathered, rows.data());
    const DecodedSlots& d = s.decoded(layer);
    for (size_t i = 0; i < gathered.size(); ++i)
        for (size_t v = 0; v < kvDim; ++v) {
            const float key = d.columns[v * stride + i];
            const float value = d.values[i * kvDim + v];
            if (std::bit_cast<uint32_t>(key) !=
                    std::bit_cast<uint32_t>(columns[v * gathered.size() + i]) ||
                std::bit_cast<uint32_t>(value) != std::bit_cast<uint32_t>(rows[i * kvDim + v])) {
                why = QStringLiteral("layer %1, column %2 (slot %3), value %4")
                          .arg(layer)
                          .arg(i)
                          .arg(gathered[i])
                          .arg(v);
                return false;
            }
        }
    return true;
}

void writeRandomRows(KvCache& cache, int slot, std::mt19937& rng) {
    for (int layer = 0; layer < cache.shape().layers; ++layer) {
        const std::vector<float> k =
            randomValues(static_cast<size_t>(cache.shape().kvDim), 2.0f, rng);
        const std::vector<float> v =
            randomValues(static_cast<size_t>(cache.shape().kvDim), 2.0f, rng);
        cache.writeK(layer, slot, k.data());
        cache.writeV(layer, slot, v.data());
    }
}

// The kept slots of `position`, with random ones left out now and then (a kept list that shifts).
std::vector<int> keptSlots(const KvCache& cache, int64_t position, std::mt19937& rng) {
    std::vector<int> kept;
    collectKeptSlots(cache, position, kept);
    if (rng() % 5 == 0 && kept.size() > 2)
        kept.erase(kept.begin() + static_cast<long>(rng() % kept.size()));
    if (rng() % 7 == 0 && kept.size() > 2) kept.resize(kept.size() / 2);
    return kept;
}

} // namespace

class TestDecodedSlots : public QObject {
    Q_OBJECT

private slots:
    void rowVersionsChangeOnEveryWriteAndAreUnique() {
        KvCache a(KvCacheShape{2, 32, 1, 4, 8});
        KvCache b(a.shape());
        QCOMPARE(a.rowVersion(1, 2), uint64_t{0});
        const std::vector<float> row(32, 1.0f);
        a.writeK(1, 2, row.data());
        const uint64_t afterK = a.rowVersion(1, 2);
        QVERIFY(afterK != 0);
        a.writeV(1, 2, row.data());
        QVERIFY(a.rowVersion(1, 2) != afterK);
        QCOMPARE(a.rowVersion(0, 2), uint64_t{0}); // another layer's row is untouched
        b.writeK(1, 2, row.data());
        QVERIFY(b.rowVersion(1, 2) != a.rowVersion(1, 2)); // the same row of another cache
        const KvCache copy = a;
        QCOMPARE(copy.rowVersion(1, 2), a.rowVersion(1, 2)); // same contents, same version
        QVERIFY_THROWS_EXCEPTION(std::out_of_range, (void)a.rowVersion(2, 0));
        QVERIFY_THROWS_EXCEPTION(std::out_of_range, (void)a.rowVersion(0, 5));
    }

    void copyEqualsFreshDecodeThroughASession_data() {
        QTest::addColumn<int>("kvBits");
        QTest::addColumn<int>("kvHeads");
        QTest::addColumn<bool>("threaded");
        for (const int bits : {8, 16, 32})
            for (const bool threaded : {false, true}) {
                // kv_dim 96: three whole int8 groups; 40: a partial last group, no 8 x 8 tiles
                QTest::addRow("kv_bits %d, kv_dim 96%s", bits, threaded ? ", 2 threads" : "")
                    << bits << 2 << threaded;
                QTest::addRow("kv_bits %d, kv_dim 40%s", bits, threaded ? ", 2 threads" : "")
                    << bits << 5 << threaded;
            }
    }
    void copyEqualsFreshDecodeThroughASession() {
        QFETCH(int, kvBits);
        QFETCH(int, kvHeads);
        QFETCH(bool, threaded);
        const int headDim = kvHeads == 2 ? 48 : 8;
        const ModelConfig c = config(3, kvHeads, headDim);
        KvCache cache(KvCacheShape{c.nLayer, c.kvDim(), 6, 24, kvBits});
        AttentionScratch scratch(c, cache.slotCount());
        QCOMPARE(scratch.decodedLayers.size(), size_t{3});
        ThreadPool pool(2);
        std::mt19937 rng(static_cast<unsigned>(kvBits * 100 + kvHeads));
        for (int64_t position = 0; position < 120; ++position) {
            const bool sink = position < 10 && rng() % 2 == 0; // more sinks than slots: some spill
            const int slot = cache.place(static_cast<int32_t>(position), position, sink);
            writeRandomRows(cache, slot, rng);
            for (int layer = 0; layer < c.nLayer; ++layer) {
                const std::vector<int> kept = keptSlots(cache, position, rng);
                gatherSlots(cache, layer, kept, scratch, threaded ? &pool : nullptr);
                QString why;
                QVERIFY2(matchesFreshDecode(cache, scratch, layer, kept, why),
                         qPrintable(QStringLiteral("position %1: %2").arg(position).arg(why)));
            }
        }
    }

    // A rewritten row is decoded again and an unchanged one is not: the copy's columns of slots
    // left alone keep the values they had even when the cache's bytes behind them are the same
    // row's, and a rewrite shows at once.
    void onlyChangedRowsAreDecodedAgain() {
        const ModelConfig c = config(1, 2, 16);
        KvCache cache(KvCacheShape{1, c.kvDim(), 0, 8, 8});
        AttentionScratch scratch(c, cache.slotCount());
        std::mt19937 rng(7);
        for (int64_t p = 0; p < 8; ++p)
            writeRandomRows(cache, cache.place(0, p, false), rng);
        std::vector<int> kept;
        collectKeptSlots(cache, 7, kept);
        gatherSlots(cache, 0, kept, scratch, nullptr);
        const std::vector<uint64_t> before = scratch.decoded(0).versions;
        writeRandomRows(cache, cache.place(0, 8, false), rng); // evicts slot 0, rewrites it
        gatherSlots(cache, 0, kept, scratch, nullptr);
        const std::vector<uint64_t>& after = scratch.decoded(0).versions;
        QVERIFY(after[0] != before[0]);
        for (size_t i = 1; i < kept.size(); ++i)
            QCOMPARE(after[i], before[i]);
        QString why;
        QVERIFY2(matchesFreshDecode(cache, scratch, 0, kept, why), qPrintable(why));
    }

    // One scratch read with two caches in turn (the same slots, other contents), and with a cache
    // cleared and written again: every gather is a fresh decode's.
    void twoCachesAndAClearedCacheThroughOneScratch() {
        const ModelConfig c = config(2, 2, 16);
        KvCache first(KvCacheShape{2, c.kvDim(), 2, 8, 8});
        KvCache second(first.shape());
        AttentionScratch scratch(c, first.slotCount());
        std::mt19937 rng(11);
        for (int64_t p = 0; p < 6; ++p) {
            writeRandomRows(first, first.place(0, p, p < 2), rng);
            writeRandomRows(second, second.place(0, p, p < 2), rng);
        }
        std::vector<int> kept;
        collectKeptSlots(first, 5, kept);
        QString why;
        for (KvCache* cache : {&first, &second, &first}) {
            for (int layer = 0; layer < 2; ++layer) {
                gatherSlots(*cache, layer, kept, scratch, nullptr);
                QVERIFY2(matchesFreshDecode(*cache, scratch, layer, kept, why), qPrintable(why));
            }
        }
        first.clear();
        for (int64_t p = 0; p < 6; ++p)
            writeRandomRows(first, first.place(0, p, p < 2), rng);
        gatherSlots(first, 1, kept, scratch, nullptr);
        QVERIFY2(matchesFreshDecode(first, scratch, 1, kept, why), qPrintable(why));
    }

    // Past the budget every layer shares one copy, decoded afresh for each layer in turn.
    void wideCachesShareOneCopy() {
        const ModelConfig c = config(4, 8, 128); // kv_dim 1024
        const int slotCount = 2300; // 4 layers x 2,300 slots x 1,024 x 8 bytes = 72 MiB
        AttentionScratch scratch(c, slotCount);
        QCOMPARE(scratch.decodedLayers.size(), size_t{1});
        KvCache cache(KvCacheShape{c.nLayer, c.kvDim(), slotCount - 16, 16, 8});
        std::mt19937 rng(3);
        for (int64_t p = 0; p < 24; ++p)
            writeRandomRows(cache, cache.place(0, p, p < 20), rng);
        std::vector<int> kept;
        collectKeptSlots(cache, 23, kept);
        QString why;
        for (int round = 0; round < 2; ++round)
            for (int layer = 0; layer < c.nLayer; ++layer) {
                gatherSlots(cache, layer, kept, scratch, nullptr);
                QVERIFY2(matchesFreshDecode(cache, scratch, layer, kept, why), qPrintable(why));
            }
    }
};

QTEST_APPLESS_MAIN(TestDecodedSlots)
#include "test_decoded_slots.moc"
