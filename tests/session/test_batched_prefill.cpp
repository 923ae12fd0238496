// Batched prefill (model/transformer.h forwardChunk) against token-by-token feeding: the same
// logits at every chunk boundary, bit for bit (each product's results are the row kernels' own and
// each token's attention runs as the cache stood when it was placed), with evictions inside a
// chunk, pinned sinks, first-N sinks, streaming positions, every cache width, two threads, and the
// per-token snapshots onStep sees; Session::score hands every token feed()'s logits.
#include "session/session.h"
#include "synthetic_model_support.h"

#include <QtTest>

#include <bit>
#include <random>
#include <vector>

using namespace sinkscope;

namespace {

struct Case {
    const char* name;
    SyntheticSpec spec;
};

std::vector<Case> modelCases() {
    SyntheticSpec llama;
    SyntheticSpec qwen2;
    qwen2.architecture = "qwen2";
    qwen2.tiedOutput = true;
    SyntheticSpec llama3;
    llama3.ropeFreqs = true;
    llama3.weightType = GgmlType::Q8_0;
    SyntheticSpec qwen3;
    qwen3.architecture = "qwen3";
    qwen3.headDim = 32;
    qwen3.weightType = GgmlType::Q4_0;
    SyntheticSpec mixed;
    mixed.nEmbd = 256;
    mixed.nFf = 512;
    mixed.q4KMediumMix = true;
    return {{"llama F32", llama},
            {"qwen2 F32 tied, biases", qwen2},
            {"llama3 Q8_0 rope_freqs", llama3},
            {"qwen3 Q4_0", qwen3},
            {"Q4_K_M mix", mixed}};
}

std::vector<int32_t> randomTokens(int count, int vocab, uint32_t seed) {
    std::mt19937 generator(seed);
    std::uniform_int_distribution<int32_t> id(3, vocab - 1);
    std::vector<int32_t> tokens(count);
    for (int32_t& token : tokens)
        token = id(generator);
    return tokens;
}

bool sameBits(std::span<const float> a, std::span<const float> b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (std::bit_cast<uint32_t>(a[i]) != std::bit_cast<uint32_t>(b[i])) return false;
    return true;
}

void compareSnapshots(const StepSnapshot& got, const StepSnapshot& expected) {
    QCOMPARE(got.queryPosition, expected.queryPosition);
    QCOMPARE(got.queryToken, expected.queryToken);
    QCOMPARE(got.querySlot, expected.querySlot);
    QCOMPARE(got.evictions, expected.evictions);
    QCOMPARE(got.sinksUsed, expected.sinksUsed);
    QCOMPARE(got.ringHead, expected.ringHead);
    QCOMPARE(got.cacheSlots.size(), expected.cacheSlots.size());
    for (size_t i = 0; i < got.cacheSlots.size(); ++i) {
        const SlotView& a = got.cacheSlots[i];
        const SlotView& b = expected.cacheSlots[i];
        QCOMPARE(a.token, b.token);
        QCOMPARE(a.position, b.position);
        QCOMPARE(a.kind, b.kind);
        QCOMPARE(a.kept, b.kept);
        QCOMPARE(std::bit_cast<uint32_t>(a.attention), std::bit_cast<uint32_t>(b.attention));
    }
}

// The stream: a pinned block (when the sink mode pins one), then the prompt in pieces of random
// length, so that chunk boundaries fall everywhere. Sequential feeds every token alone; batched
// prefills each piece in chunks of `chunk`. Logits are compared after every piece, the snapshots
// of every token.
void runStream(const Model& model, SessionOptions options, int chunk, int pinned, int prompt,
               uint32_t seed) {
    const int vocab = model.config().nVocab;
    const std::vector<int32_t> block = randomTokens(pinned, vocab, seed);
    std::vector<int32_t> tokens = randomTokens(prompt, vocab, seed + 1);
    tokens.front() = model.tokenizer().bos();
    options.sinkCapacity = pinned;
    options.prefillChunk = 1;
    Session sequential(model, options);
    options.prefillChunk = chunk;
    Session batched(model, options);

    std::vector<StepSnapshot> expected;
    std::vector<StepSnapshot> got;
    const StepCallback recordExpected = [&](const StepSnapshot& s) {
        expected.push_back(s);
        return true;
    };
    const StepCallback recordGot = [&](const StepSnapshot& s) {
        got.push_back(s);
        return true;
    };
    if (pinned > 0) {
        sequential.prefill(block, recordExpected, true);
        const std::span<const float> logits = batched.prefill(block, recordGot, true);
        QVERIFY(sameBits(logits, sequential.prefill({}, {})));
    }
    std::mt19937 generator(seed + 2);
    std::uniform_int_distribution<int> pieceLength(1, 3 * chunk);
    for (size_t done = 0; done < tokens.size();) {
        const size_t length = std::min<size_t>(pieceLength(generator), tokens.size() - done);
        const auto piece = std::span(tokens).subspan(done, length);
        done += length;
        std::span<const float> want;
        for (const int32_t token : piece)
            want = sequential.prefill(std::span(&token, 1), recordExpected);
        const std::span<const float> have = batched.prefill(piece, recordGot);
        QVERIFY2(sameBits(have, want),
                 qPrintable(QStringLiteral("logits differ after position %1 (chunk %2)")
                                .arg(batched.position() - 1)
                                .arg(chunk)));
    }
    QCOMPARE(batched.position(), sequential.position());
    QCOMPARE(batched.cache().evictions(), sequential.cache().evictions());
    QCOMPARE(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i)
        compareSnapshots(got[i], expected[i]);
}

} // namespace

class TestBatchedPrefill : public QObject {
    Q_OBJECT
private slots:
    void batchedEqualsSequentialForEveryArchitecture();
    void evictionsSinksAndStreamingInsideChunks();
    void everyCacheWidthAndTwoThreads();
    void stoppingEndsAtTheChunkBoundary();
    void rejectsBadChunkSizesAndTokens();
    void scoreGivesEveryTokenItsFedLogits();
    void scoreStopsAtTheChunkBoundary();
};

// Window 16, chunks of 7 and 64: chunks smaller and larger than the window, evicting inside.
void TestBatchedPrefill::batchedEqualsSequentialForEveryArchitecture() {
    for (const Case& c : modelCases()) {
        const auto model = test::modelFromSpec(c.spec);
        for (const int chunk : {7, 64}) {
            SessionOptions options;
            options.kvWindow = 16;
            runStream(*model, options, chunk, 5, 90, 11);
            if (QTest::currentTestFailed())
                QFAIL(qPrintable(QStringLiteral("%1, chunk %2").arg(c.name).arg(chunk)));
        }
    }
}

// Pinned tools + BOS, first-N sinks and no sinks, with absolute and streaming positions and the
// attention probe on: the snapshots' kept flags and attention weights match token for token.
void TestBatchedPrefill::evictionsSinksAndStreamingInsideChunks() {
    const auto model = test::modelFromSpec();
    for (const SinkMode sinks : {SinkMode::ToolsAndBos, SinkMode::FirstN, SinkMode::None}) {
        for (const PositionMode positions : {PositionMode::Absolute, PositionMode::Streaming}) {
            SessionOptions options;
            options.kvWindow = 8;
            options.sinks = sinks;
            options.positions = positions;
            options.firstN = 3;
            options.probe = AttentionProbe{true, -1, -1};
            const int pinned = sinks == SinkMode::ToolsAndBos ? 11 : 0;
            for (const int chunk : {2, 5, 8, 20}) {
                runStream(*model, options, chunk, pinned, 70, 23 + chunk);
                if (QTest::currentTestFailed())
                    QFAIL(qPrintable(QStringLiteral("sinks %1, positions %2, chunk %3")
                                         .arg(sinkModeName(sinks), positionModeName(positions))
                                         .arg(chunk)));
            }
        }
    }
}

void TestBatchedPrefill::everyCacheWidthAndTwoThreads() {
    SyntheticSpec spec;
    spec.nEmbd = 256;
    spec.nFf = 768;
    spec.weightType = GgmlType::Q4_K;
    const auto model = test::modelFromSpec(spec);
    for (const int bits : {32, 16, 8}) {
        for (const int threads : {1, 2}) {
            SessionOptions options;
            options.kvWindow = 12;
            options.kvBits = bits;
            options.threads = threads;
            options.probe = AttentionProbe{true, 1, 2};
            runStream(*model, options, 9, 4, 60, 31);
            if (QTest::currentTestFailed())
                QFAIL(qPrintable(QStringLiteral("kv bits %1, threads %2").arg(bits).arg(threads)));
        }
    }
}

// onStep returning false mid-chunk: no later call, and the session holds the whole chunk.
void TestBatchedPrefill::stoppingEndsAtTheChunkBoundary() {
    const auto model = test::modelFromSpec();
    SessionOptions options;
    options.prefillChunk = 10;
    Session session(*model, options);
    const std::vector<int32_t> tokens = randomTokens(35, model->config().nVocab, 5);
    int calls = 0;
    const std::span<const float> logits = session.prefill(tokens, [&](const StepSnapshot& step) {
        ++calls;
        return step.queryPosition < 13;
    });
    QCOMPARE(calls, 14); // positions 0..13: the one at 13 said stop
    QCOMPARE(session.position(), 20);
    QCOMPARE(session.snapshot().queryPosition, 19);
    // The logits are the last fed token's (position 19), as token by token.
    options.prefillChunk = 1;
    Session sequential(*model, options);
    const std::span<const float> want = sequential.prefill(std::span(tokens).first(20));
    QVERIFY(sameBits(logits, want));
}

void TestBatchedPrefill::rejectsBadChunkSizesAndTokens() {
    const auto model = test::modelFromSpec();
    for (const int chunk : {0, -1, kMaxPrefillChunk + 1}) {
        SessionOptions options;
        options.prefillChunk = chunk;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, Session(*model, options));
    }
    SessionOptions options;
    options.prefillChunk = 8;
    Session session(*model, options);
    std::vector<int32_t> tokens = randomTokens(6, model->config().nVocab, 9);
    tokens[4] = model->config().nVocab; // out of range: nothing of the chunk is fed
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, session.prefill(tokens));
    QCOMPARE(session.position(), 0);
    QCOMPARE(session.cache().slotInfos()[0].kind, SlotKind::Empty);
}

// Every token's logits from score() against prefill() one token at a time, which places sinks by
// the same SinkMode: first-N sinks and none, absolute and streaming positions, chunks smaller and
// larger than the window (evicting inside), a last chunk of one token, every cache width.
void TestBatchedPrefill::scoreGivesEveryTokenItsFedLogits() {
    const auto model = test::modelFromSpec();
    std::vector<int32_t> tokens = randomTokens(80, model->config().nVocab, 41);
    tokens.front() = model->tokenizer().bos();
    for (const SinkMode sinks : {SinkMode::FirstN, SinkMode::None}) {
        for (const PositionMode positions : {PositionMode::Absolute, PositionMode::Streaming}) {
            for (const int bits : {32, 16, 8}) {
                for (const int chunk : {1, 6, 79}) {
                    SessionOptions options;
                    options.kvWindow = 9;
                    options.kvBits = bits;
                    options.sinks = sinks;
                    options.firstN = 4;
                    options.positions = positions;
                    options.prefillChunk = chunk;
                    Session batched(*model, options);
                    options.prefillChunk = 1;
                    Session sequential(*model, options);
                    const QString where =
                        QStringLiteral("sinks %1, positions %2, bits %3, chunk %4")
                            .arg(sinkModeName(sinks), positionModeName(positions))
                            .arg(bits)
                            .arg(chunk);
                    size_t expectedIndex = 0;
                    bool same = true;
                    batched.score(tokens, [&](size_t index, std::span<const float> logits) {
                        const std::span<const float> want =
                            sequential.prefill(std::span(tokens).subspan(index, 1));
                        same = index == expectedIndex++ && sameBits(logits, want);
                        return same;
                    });
                    QVERIFY2(same,
                             qPrintable(
                                 QStringLiteral("%1: token %2").arg(where).arg(expectedIndex - 1)));
                    QCOMPARE(expectedIndex, tokens.size());
                    QCOMPARE(batched.position(), sequential.position());
                    QCOMPARE(batched.cache().sinksUsed(), sequential.cache().sinksUsed());
                    QCOMPARE(batched.cache().evictions(), sequential.cache().evictions());
                }
            }
        }
    }
}

// onLogits returning false: no later call, and the session holds the whole chunk of that token.
void TestBatchedPrefill::scoreStopsAtTheChunkBoundary() {
    const auto model = test::modelFromSpec();
    SessionOptions options;
    options.prefillChunk = 10;
    Session session(*model, options);
    const std::vector<int32_t> tokens = randomTokens(35, model->config().nVocab, 6);
    std::vector<size_t> seen;
    session.score(tokens, [&](size_t index, std::span<const float>) {
        seen.push_back(index);
        return index < 13;
    });
    QCOMPARE(seen.size(), size_t(14)); // tokens 0..13: the one at 13 said stop
    QCOMPARE(seen.back(), size_t(13));
    QCOMPARE(session.position(), 20);
}

QTEST_GUILESS_MAIN(TestBatchedPrefill)
#include "test_batched_prefill.moc"
