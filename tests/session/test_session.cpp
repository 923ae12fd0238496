// The session over the bounded cache, on synthetic models: at every step of a long generation the
// slots attention reads are exactly {k : keep(q, k)}, and memory never grows.
#include "gguf/gguf.h"
#include "memory/mask.h"
#include "model/synthetic.h"
#include "session/session.h"

#include "synthetic_model_support.h"

#include <QtTest>

#include <cmath>
#include <memory>
#include <set>

using namespace sinkscope;

namespace {

std::vector<int32_t> promptOf(const Model& model, int length) {
    std::vector<int32_t> ids{model.tokenizer().bos()};
    for (int i = 1; i < length; ++i)
        ids.push_back(3 + (i * 37) % (model.config().nVocab - 3));
    return ids;
}

float maxAbsDifference(std::span<const float> a, std::span<const float> b) {
    float worst = 0;
    for (size_t i = 0; i < a.size(); ++i)
        worst = std::max(worst, std::fabs(a[i] - b[i]));
    return worst;
}

} // namespace

class TestSession : public QObject {
    Q_OBJECT
    std::unique_ptr<Model> m_model = test::modelFromSpec();

private slots:
    void invariantsHoldAtEveryStep_data() {
        QTest::addColumn<int>("kvBits");
        QTest::addColumn<int>("positions");
        QTest::addColumn<int>("sinks");
        QTest::addColumn<int>("window");
        for (int bits : {32, 16, 8})
            for (int pos : {int(PositionMode::Absolute), int(PositionMode::Streaming)})
                for (int sinks :
                     {int(SinkMode::ToolsAndBos), int(SinkMode::FirstN), int(SinkMode::None)})
                    QTest::addRow("bits=%d pos=%d sinks=%d", bits, pos, sinks)
                        << bits << pos << sinks << 8;
        QTest::addRow("window 1") << 8 << 0 << int(SinkMode::FirstN) << 1;
    }
    void invariantsHoldAtEveryStep() {
        QFETCH(int, kvBits);
        QFETCH(int, positions);
        QFETCH(int, sinks);
        QFETCH(int, window);
        SessionOptions options;
        options.kvWindow = window;
        options.kvBits = kvBits;
        options.positions = PositionMode(positions);
        options.sinks = SinkMode(sinks);
        options.firstN = 3;
        options.probe = AttentionProbe{true, -1, -1};
        Session session(*m_model, options);
        QCOMPARE(session.effectiveWindow(), window);
        const int64_t bytes = session.cache().bytesAllocated();
        std::set<int64_t> sinkPositions;
        int steps = 0;
        const auto check = [&](const StepSnapshot& s) {
            ++steps;
            const int64_t q = s.queryPosition;
            std::set<int64_t> kept, expected;
            float weightSum = 0;
            for (const SlotView& slot : s.cacheSlots) {
                if (slot.kind == SlotKind::Sink) sinkPositions.insert(slot.position);
                if (slot.kept) kept.insert(slot.position);
                // attention reads exactly the kept slots: no other gets weight, and each kept
                // one does (an f16 weight may underflow to 0, so kv_bits 16 checks only the first)
                if ((!slot.kept && slot.attention != 0) ||
                    (slot.kept && slot.attention <= 0 && kvBits != 16))
                    return false;
                weightSum += slot.attention;
            }
            for (int64_t k = 0; k <= q; ++k)
                if (keep(q, k, window, sinkPositions.count(k) > 0)) expected.insert(k);
            int64_t sinksSeen = static_cast<int64_t>(sinkPositions.size());
            const int64_t ringTokens = q + 1 - sinksSeen;
            return kept == expected &&
                   std::fabs(weightSum - 1.0f) < (kvBits == 16 ? 5e-3f : 1e-4f) &&
                   s.bytesAllocated == bytes && s.tokensSeen == q + 1 &&
                   s.evictions == std::max<int64_t>(0, ringTokens - window);
        };
        const auto prompt = promptOf(*m_model, 5);
        Sampler sampler(SamplerOptions{.greedy = true});
        const StepCallback failFast = [&](const StepSnapshot& s) {
            const bool ok = check(s);
            if (!ok)
                qWarning("invariant broken at position %lld",
                         static_cast<long long>(s.queryPosition));
            return ok;
        };
        const auto result = session.generate(prompt, 120, sampler, failFast, true);
        QVERIFY(!result.stoppedByCallback);
        QCOMPARE(steps, 125);
        QCOMPARE(session.cache().bytesAllocated(), bytes);
        const int expectedSinks = sinks == int(SinkMode::ToolsAndBos) ? 1
                                  : sinks == int(SinkMode::FirstN)    ? 3
                                                                      : 0;
        QCOMPARE(int(sinkPositions.size()), expectedSinks);
    }

    void pinnedBlockStaysWhileTheWindowSlides() {
        SessionOptions options;
        options.kvWindow = 6;
        options.sinkCapacity = 4;
        Session session(*m_model, options);
        const std::vector<int32_t> bos{m_model->tokenizer().bos()};
        const std::vector<int32_t> block{40, 41, 42, 43};
        session.prefill(bos);
        session.prefill(block, {}, true);
        session.prefill(promptOf(*m_model, 50));
        const StepSnapshot s = session.snapshot();
        QCOMPARE(s.sinksUsed, 5);
        for (int i = 0; i < 5; ++i) {
            QCOMPARE(s.cacheSlots[i].kind, SlotKind::Sink);
            QCOMPARE(s.cacheSlots[i].position, int64_t(i));
            QVERIFY(s.cacheSlots[i].kept);
        }
        QCOMPARE(s.cacheSlots[1].token, 40);
        QCOMPARE(int(s.cacheSlots.size()), 5 + 6);
        for (int i = 5; i < 11; ++i)
            QVERIFY(s.cacheSlots[i].kind == SlotKind::Ring && s.cacheSlots[i].kept);
    }

    // With a window as long as the stream nothing is evicted, so every policy computes the same.
    void policiesAgreeWhileNothingIsEvicted() {
        const auto prompt = promptOf(*m_model, 40);
        std::vector<std::vector<float>> logits;
        for (auto [positions, sinks] : {std::pair{PositionMode::Absolute, SinkMode::ToolsAndBos},
                                        std::pair{PositionMode::Streaming, SinkMode::FirstN},
                                        std::pair{PositionMode::Absolute, SinkMode::None}}) {
            SessionOptions options;
            options.kvWindow = 64;
            options.kvBits = 32;
            options.positions = positions;
            options.sinks = sinks;
            Session session(*m_model, options);
            const auto out = session.prefill(prompt);
            logits.emplace_back(out.begin(), out.end());
        }
        QCOMPARE(maxAbsDifference(logits[0], logits[1]), 0.0f);
        QCOMPARE(maxAbsDifference(logits[0], logits[2]), 0.0f);
    }

    // Streaming positions change the result only once a sink's distance is folded.
    void streamingFoldsOnlyDistantSinks() {
        SessionOptions absolute;
        absolute.kvWindow = 8;
        absolute.kvBits = 32;
        absolute.sinks = SinkMode::FirstN;
        absolute.firstN = 2;
        SessionOptions streaming = absolute;
        streaming.positions = PositionMode::Streaming;
        Session a(*m_model, absolute), b(*m_model, streaming);
        const auto prompt = promptOf(*m_model, 30);
        for (int i = 0; i < 30; ++i) {
            const auto la = a.feed(prompt[i], i < 2);
            const auto lb = b.feed(prompt[i], i < 2);
            // sink 0 folds once q - 0 > W + S - 1 = 9, i.e. from q = 10
            if (i < 10)
                QCOMPARE(maxAbsDifference(la, lb), 0.0f);
            else
                QVERIFY2(maxAbsDifference(la, lb) > 0, qPrintable(QString("q=%1").arg(i)));
        }
    }

    void quantizedCacheStaysClose() {
        const auto prompt = promptOf(*m_model, 30);
        std::vector<std::vector<float>> logits;
        for (int bits : {32, 16, 8}) {
            SessionOptions options;
            options.kvBits = bits;
            Session session(*m_model, options);
            const auto out = session.prefill(prompt);
            logits.emplace_back(out.begin(), out.end());
        }
        QVERIFY(maxAbsDifference(logits[0], logits[1]) < 1e-2f);
        QVERIFY(maxAbsDifference(logits[0], logits[2]) < 0.1f);
        QVERIFY(maxAbsDifference(logits[0], logits[2]) > 0.0f);
    }

    void resetReproducesAFreshSession() {
        Session session(*m_model, SessionOptions{});
        const auto prompt = promptOf(*m_model, 20);
        const auto first = session.prefill(prompt);
        const std::vector<float> expected(first.begin(), first.end());
        session.prefill(promptOf(*m_model, 7));
        session.reset();
        QCOMPARE(session.position(), 0);
        const auto again = session.prefill(prompt);
        QCOMPARE(maxAbsDifference(expected, again), 0.0f);
    }

    void callbackStopsGeneration() {
        Session session(*m_model, SessionOptions{});
        Sampler sampler(SamplerOptions{.greedy = true});
        int calls = 0;
        const auto result = session.generate(
            promptOf(*m_model, 3), 50, sampler,
            [&](const StepSnapshot& s) {
                ++calls;
                return !s.generated || calls < 6;
            },
            true);
        QVERIFY(result.stoppedByCallback);
        QCOMPARE(int(result.tokens.size()), 3);
        QCOMPARE(calls, 6);
    }

    void badInputIsRejected() {
        Session session(*m_model, SessionOptions{});
        Sampler sampler(SamplerOptions{.greedy = true});
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, session.generate({}, 5, sampler));
        QVERIFY_THROWS_EXCEPTION(std::out_of_range, session.feed(m_model->config().nVocab));
        QVERIFY_THROWS_EXCEPTION(std::out_of_range, session.feed(-1));
        SessionOptions negative;
        negative.kvWindow = -1;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, Session(*m_model, negative));
        SessionOptions bits;
        bits.kvBits = 4;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, Session(*m_model, bits));
    }

    void windowZeroMeansTheBudget() {
        SessionOptions options;
        options.kvWindow = 0;
        Session session(*m_model, options);
        QCOMPARE(session.effectiveWindow(), session.budgetWindow());
        QCOMPARE(session.budgetWindow(), int64_t(2048)); // tiny model: capped by max_seq
    }
};

QTEST_GUILESS_MAIN(TestSession)
#include "test_session.moc"
