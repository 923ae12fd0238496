// Attention with streaming positions (model/attention.h; memory-architecture.md, section 5)
// against a scalar reference. Through random sessions (sinks that are the stream's first tokens,
// a BOS sink apart from a tool block placed later, sinks past the sink slots, positions that jump
// ahead; f32, f16 and int8 caches; one and two threads), every head's output of every query
// equals, bit for bit, the portable level's laneDot16 score of each kept slot with the query
// rotated to its own position or, for a sink j whose distance folds, to p_j + W + S - 1 - j; their
// softmax; and the laneDot16 sums of the values. Queries one at a time (decode) and in chunks
// that share one gather (prefill), before, across and past each sink's fold.
#include "memory/kv_cache.h"
#include "model/attention.h"
#include "model/kernels/kernel_table.h"
#include "model/ops.h"
#include "model/transformer.h"
#include "quant_test_support.h"
#include "synthetic_model_support.h"

#include <QtTest>

#include <bit>
#include <cmath>
#include <functional>
#include <random>
#include <vector>

using namespace sinkscope;
using sinkscope::test::randomValues;

namespace {

constexpr int kWindow = 16;

// A session's tokens: the n-th token's position and whether it is placed as a sink.
struct Stream {
    int sinkSlots = 6;
    std::function<int64_t(int)> position;
    std::function<bool(int)> sink;
};

Stream streamNamed(const QString& name) {
    const auto dense = [](int n) { return int64_t{n}; };
    const auto firstSix = [](int n) { return n < 6; };
    const auto bosAndBlock = [](int n) { return n == 0 || (n >= 4 && n < 9); };
    if (name == "first six sinks") return {6, dense, firstSix};
    // every sink folds at once while the ring still fills: chunks share their gather
    if (name == "first six sinks, then a jump")
        return {6, [](int n) { return int64_t{n < 6 ? n : n + 94}; }, firstSix};
    // sink 0 folds to W + S - 1 = 21 from q = 22, the block's sinks to 24 from q = 25
    if (name == "BOS and a later tool block") return {6, dense, bosAndBlock};
    // both rotations at once while the ring still fills
    if (name == "BOS and a later tool block, then a jump")
        return {6, [](int n) { return int64_t{n < 9 ? n : n + 20}; }, bosAndBlock};
    if (name == "more sinks than slots") return {4, dense, firstSix};
    qFatal("no stream %s", qPrintable(name));
}

const float* headOf(const std::vector<float>& row, int head, int headDim) {
    return row.data() + static_cast<size_t>(head) * headDim;
}

// Where `query` scores kept `slot` from: its own position, or p_j + W + S - 1 - j for a sink j
// whose distance folds.
int64_t scoredFrom(const KvCache& cache, const AttentionQuery& query, int slot) {
    if (slot >= query.sinksUsed) return query.where.position;
    const int64_t folded = cache.shape().window + query.sinksUsed - 1 - slot;
    const int64_t sinkPosition = cache.slotInfos()[slot].position;
    return query.where.position - sinkPosition > folded ? sinkPosition + folded
                                                        : query.where.position;
}

bool foldsASink(const KvCache& cache, const AttentionQuery& query) {
    for (const int slot : query.keptSlots)
        if (scoredFrom(cache, query, slot) != query.where.position) return true;
    return false;
}

// The scalar reference of one query: out [n_head][head_dim].
std::vector<float> referenceAttention(const Model& model, const KvCache& cache, int layer,
                                      const AttentionQuery& query) {
    const ModelConfig& c = model.config();
    const KernelTable& portable = kernelsFor(Isa::Portable);
    const size_t width = static_cast<size_t>(c.nHead) * c.headDim;
    const bool half = cache.shape().kvBits == 16;
    const auto rotatedTo = [&](int64_t position) {
        std::vector<float> q(query.qRaw, query.qRaw + width);
        std::vector<float> cosines(c.headDim / 2), sines(c.headDim / 2);
        ropeAngles(c.headDim, position, c.ropeBase, model.weights().ropeFreqs, cosines.data(),
                   sines.data());
        applyRope(q.data(), c.nHead, c.headDim, c.rope, cosines.data(), sines.data());
        if (half) roundToHalf(q.data(), width);
        return q;
    };
    const int kept = static_cast<int>(query.keptSlots.size());
    std::vector<std::vector<float>> queries, keys, values; // [kept] each slot's
    for (const int slot : query.keptSlots) {
        queries.push_back(rotatedTo(scoredFrom(cache, query, slot)));
        keys.emplace_back(c.kvDim());
        values.emplace_back(c.kvDim());
        cache.readK(layer, slot, keys.back().data());
        cache.readV(layer, slot, values.back().data());
    }
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.headDim));
    const int groupSize = c.nHead / c.nHeadKv;
    std::vector<float> out(width), weights(kept), column(kept);
    for (int h = 0; h < c.nHead; ++h) {
        const int kvHead = h / groupSize;
        for (int i = 0; i < kept; ++i)
            weights[i] = portable.laneDot16(headOf(queries[i], h, c.headDim),
                                            headOf(keys[i], kvHead, c.headDim), c.headDim) *
                         scale;
        portable.softmaxRow(weights.data(), kept);
        if (half) roundToHalf(weights.data(), weights.size());
        for (int d = 0; d < c.headDim; ++d) {
            for (int i = 0; i < kept; ++i)
                column[i] = headOf(values[i], kvHead, c.headDim)[d];
            out[static_cast<size_t>(h) * c.headDim + d] =
                portable.laneDot16(weights.data(), column.data(), kept);
        }
    }
    return out;
}

// One token's query: qRaw random, q rotated to its position as the forward pass rotates it.
struct TokenQuery {
    std::vector<float> qRaw, q, out;
};

TokenQuery randomQuery(const Model& model, int64_t position, std::mt19937& rng) {
    const ModelConfig& c = model.config();
    TokenQuery t;
    t.qRaw = randomValues(static_cast<size_t>(c.nHead) * c.headDim, 2.0f, rng);
    t.q = t.qRaw;
    t.out.assign(t.q.size(), 0.0f);
    std::vector<float> cosines(c.headDim / 2), sines(c.headDim / 2);
    ropeAngles(c.headDim, position, c.ropeBase, model.weights().ropeFreqs, cosines.data(),
               sines.data());
    applyRope(t.q.data(), c.nHead, c.headDim, c.rope, cosines.data(), sines.data());
    return t;
}

void writeRandomRows(KvCache& cache, int slot, std::mt19937& rng) {
    for (int layer = 0; layer < cache.shape().layers; ++layer) {
        const auto kvDim = static_cast<size_t>(cache.shape().kvDim);
        cache.writeK(layer, slot, randomValues(kvDim, 2.0f, rng).data());
        cache.writeV(layer, slot, randomValues(kvDim, 2.0f, rng).data());
    }
}

bool sameBits(const std::vector<float>& got, const std::vector<float>& expected, QString& why) {
    for (size_t i = 0; i < expected.size(); ++i)
        if (std::bit_cast<uint32_t>(got[i]) != std::bit_cast<uint32_t>(expected[i])) {
            why = QStringLiteral("value %1: %2, the reference %3")
                      .arg(i)
                      .arg(got[i])
                      .arg(expected[i]);
            return false;
        }
    return true;
}

} // namespace

class TestStreamingAttention : public QObject {
    Q_OBJECT

    std::unique_ptr<Model> m_model;

private slots:
    void initTestCase() {
        SyntheticSpec spec;
        spec.nEmbd = 128; // 4 heads of 32 values, 2 KV heads
        m_model = test::modelFromSpec(spec);
    }

    void everyQueryEqualsTheScalarReference_data() {
        QTest::addColumn<QString>("stream");
        QTest::addColumn<int>("kvBits");
        QTest::addColumn<int>("threads");
        QTest::addColumn<int>("chunk"); // 1: token by token (decode)
        for (const char* stream :
             {"first six sinks", "first six sinks, then a jump", "BOS and a later tool block",
              "BOS and a later tool block, then a jump", "more sinks than slots"})
            for (const int bits : {32, 16, 8})
                for (const int chunk : {1, 5})
                    for (const int threads : {1, 2})
                        QTest::addRow("%s, kv_bits %d, chunks of %d, %d threads", stream, bits,
                                      chunk, threads)
                            << QString(stream) << bits << threads << chunk;
    }
    void everyQueryEqualsTheScalarReference() {
        QFETCH(QString, stream);
        QFETCH(int, kvBits);
        QFETCH(int, threads);
        QFETCH(int, chunk);
        const Stream tokens = streamNamed(stream);
        const ModelConfig& c = m_model->config();
        KvCache cache(KvCacheShape{c.nLayer, c.kvDim(), tokens.sinkSlots, kWindow, kvBits});
        AttentionScratch scratch(c, cache.slotCount());
        ThreadPool pool(threads);
        std::mt19937 rng(static_cast<unsigned>(kvBits * 10 + threads + chunk * 100));
        int compared = 0;
        int foldedChunks = 0; // shared chunks of several tokens, every one folding sinks
        int mixedChunks = 0;  // shared chunks of several tokens, some folding sinks, some not
        PrefillChunk prefill;
        for (int first = 0; first < 40; first += chunk) {
            prefill.clear();
            std::vector<TokenQuery> chunkQueries;
            for (int n = first; n < first + chunk; ++n) {
                const int64_t position = tokens.position(n);
                const int slot = cache.place(n, position, tokens.sink(n));
                writeRandomRows(cache, slot, rng);
                prefill.add(cache, n, QueryPlacement{position, slot, true});
                chunkQueries.push_back(randomQuery(*m_model, position, rng));
            }
            if (!prefill.sharesKeptSlots()) continue; // a later token evicted what one reads
            const std::span<const int> gathered = prefill.keptOf(chunk - 1);
            int folding = 0;
            for (int layer = 0; layer < c.nLayer; ++layer) {
                std::vector<AttentionQuery> queries;
                std::vector<std::vector<float>> expected;
                for (int t = 0; t < chunk; ++t) {
                    TokenQuery& query = chunkQueries[static_cast<size_t>(t)];
                    queries.push_back(prefill.query(t, query.q.data(), query.qRaw.data(),
                                                    query.out.data(), false));
                    expected.push_back(referenceAttention(*m_model, cache, layer, queries.back()));
                    folding += layer == 0 && foldsASink(cache, queries.back());
                }
                gatherSlots(cache, layer, gathered, scratch, &pool);
                attendChunk(*m_model, cache, scratch, &pool, layer, queries, AttentionProbe{},
                            static_cast<int>(gathered.size()));
                for (int t = 0; t < chunk; ++t) {
                    QString why;
                    QVERIFY2(sameBits(chunkQueries[static_cast<size_t>(t)].out,
                                      expected[static_cast<size_t>(t)], why),
                             qPrintable(QStringLiteral("position %1, layer %2: %3")
                                            .arg(prefill.place(t).position)
                                            .arg(layer)
                                            .arg(why)));
                    ++compared;
                }
            }
            foldedChunks += chunk > 1 && folding == chunk;
            mixedChunks += chunk > 1 && folding > 0 && folding < chunk;
        }
        QVERIFY(compared >= 10);
        if (chunk > 1 && stream.endsWith("then a jump")) QVERIFY(foldedChunks >= 1);
        if (chunk > 1 && stream == "first six sinks, then a jump") QVERIFY(mixedChunks >= 1);
    }
};

QTEST_APPLESS_MAIN(TestStreamingAttention)
#include "test_streaming_attention.moc"
