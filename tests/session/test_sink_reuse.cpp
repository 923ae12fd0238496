// A rebuild takes over the pinned sinks the new tool block shares with the session it replaces
// (rebuildSession's `previous`, Session::adoptSinks): Apply after editing the last tool computes
// only the block from the first changed token on, and new settings that store the same rows
// (window, positions) none of it. The session is the one a build from nothing
// gives, bit for bit: every K and V row, every slot, the history, and the logits of the next
// token; nothing is reused across another cache encoding, and a session that cannot adopt says
// why and stays empty.
#include "session/tool_chat.h"
#include "tool_test_support.h"

#include <QtTest>

#include <algorithm>
#include <bit>
#include <memory>
#include <vector>

using namespace sinkscope;
using sinkscope::test::modelFromSpec;
using sinkscope::test::smallSpec;
using sinkscope::test::textAnswer;
using sinkscope::test::toolsFrom;

namespace {

constexpr const char* kTools =
    R"([{"name":"ping","description":"Checks that a host answers","parameters":{"type":"object","properties":{"host":{"type":"string"}},"required":["host"]}},{"name":"stop","description":"Stops the service"}])";
// The same tools with the last one's description edited.
constexpr const char* kEditedTools =
    R"([{"name":"ping","description":"Checks that a host answers","parameters":{"type":"object","properties":{"host":{"type":"string"}},"required":["host"]}},{"name":"stop","description":"Stops the whole service at once"}])";
constexpr const char* kOtherTools =
    R"([{"name":"reboot","parameters":{"type":"object","properties":{"force":{"type":"boolean"}}}}])";

SessionOptions options(int kvBits = 8) {
    SessionOptions o;
    o.recordHistory = true;
    o.kvWindow = 24;
    o.kvBits = kvBits;
    o.prefillChunk = 8;
    return o;
}

size_t commonPrefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
    return static_cast<size_t>(std::mismatch(a.begin(), a.end(), b.begin(), b.end()).first -
                               a.begin());
}

// Every row and slot of two sessions' caches, and their history, compared.
void compareSessions(const Session& a, const Session& b) {
    QCOMPARE(a.history(), b.history());
    QCOMPARE(a.position(), b.position());
    const KvCache& x = a.cache();
    const KvCache& y = b.cache();
    QCOMPARE(x.slotCount(), y.slotCount());
    QCOMPARE(x.sinksUsed(), y.sinksUsed());
    const auto width = static_cast<size_t>(x.shape().kvDim);
    std::vector<float> rowX(width), rowY(width);
    for (int slot = 0; slot < x.slotCount(); ++slot) {
        const SlotInfo& sx = x.slotInfos()[static_cast<size_t>(slot)];
        const SlotInfo& sy = y.slotInfos()[static_cast<size_t>(slot)];
        QCOMPARE(sx.token, sy.token);
        QCOMPARE(sx.position, sy.position);
        QCOMPARE(sx.kind, sy.kind);
        if (sx.kind == SlotKind::Empty) continue;
        for (int layer = 0; layer < x.shape().layers; ++layer) {
            for (const bool keys : {true, false}) {
                keys ? x.readK(layer, slot, rowX.data()) : x.readV(layer, slot, rowX.data());
                keys ? y.readK(layer, slot, rowY.data()) : y.readV(layer, slot, rowY.data());
                for (size_t d = 0; d < width; ++d)
                    QVERIFY2(std::bit_cast<uint32_t>(rowX[d]) == std::bit_cast<uint32_t>(rowY[d]),
                             qPrintable(QStringLiteral("%1 of slot %2, layer %3, value %4")
                                            .arg(keys ? "K" : "V")
                                            .arg(slot)
                                            .arg(layer)
                                            .arg(d)));
            }
        }
    }
}

// The logits of `token` fed next into both sessions, bit for bit.
void compareNextLogits(Session& a, Session& b, int32_t token) {
    const std::span<const float> first = a.feed(token);
    const std::vector<float> x(first.begin(), first.end());
    const std::span<const float> y = b.feed(token);
    QCOMPARE(x.size(), y.size());
    for (size_t i = 0; i < x.size(); ++i)
        QVERIFY2(std::bit_cast<uint32_t>(x[i]) == std::bit_cast<uint32_t>(y[i]),
                 qPrintable(QStringLiteral("logit %1").arg(i)));
}

} // namespace

class TestSinkReuse : public QObject {
    Q_OBJECT
    std::unique_ptr<Model> m_model = modelFromSpec(smallSpec(true));

    std::unique_ptr<ToolChat> chatWithTurns(const SessionOptions& o) const {
        auto chat = std::make_unique<ToolChat>(*m_model, o, toolsFrom(kTools));
        chat->ask("Is the server up?", textAnswer(10));
        chat->ask("And the backup?", textAnswer(10));
        return chat;
    }

private slots:
    // Apply after editing the last tool: the shared prefix is taken over, the rest computed, and
    // the session is a build from nothing's.
    void anEditedToolBlockReusesItsSharedPrefix() {
        const std::unique_ptr<ToolChat> chat = chatWithTurns(options());
        const std::vector<int32_t> before = chat->toolBlock().tokens;
        const ToolBlock edited = chat->chatTemplate().toolBlock(toolsFrom(kEditedTools));
        const size_t shared = commonPrefix(before, edited.tokens);
        QVERIFY2(shared > 20 && shared + 3 < edited.tokens.size(),
                 "the edit sits near the block's end");

        const std::vector<int32_t> transcript = chat->conversation().transcriptTokens();
        const RebuiltSession reused =
            rebuildSession(*m_model, options(), edited, transcript, {}, {}, &chat->session());
        const RebuiltSession fresh = rebuildSession(*m_model, options(), edited, transcript);
        QCOMPARE(reused.report.reusedSinkTokens, int(shared));
        QCOMPARE(fresh.report.reusedSinkTokens, 0);
        compareSessions(*reused.session, *fresh.session);
        compareNextLogits(*fresh.session, *reused.session, edited.tokens.back());

        const RebuildReport report = chat->replaceTools(toolsFrom(kEditedTools), "");
        QCOMPARE(report.reusedSinkTokens, int(shared));
        QCOMPARE(chat->toolBlock().tokens, edited.tokens);
    }

    // The same block again (a re-render, an Apply without edits): all but its last token reused,
    // which is fed so that the build still reports the block's last step.
    void theSameBlockReusesAllButItsLastToken() {
        const std::unique_ptr<ToolChat> chat = chatWithTurns(options());
        const ToolBlock& block = chat->toolBlock();
        int steps = 0;
        const RebuiltSession rebuilt = rebuildSession(
            *m_model, options(), block, {},
            [&](const StepSnapshot& step) {
                ++steps;
                return step.sinksUsed == int(block.tokens.size());
            },
            {}, &chat->session());
        QCOMPARE(rebuilt.report.reusedSinkTokens, int(block.tokens.size()) - 1);
        QCOMPARE(steps, 1);
        const RebuiltSession fresh = rebuildSession(*m_model, options(), block, {});
        compareSessions(*rebuilt.session, *fresh.session);
    }

    // New settings that store the same rows (another window, streaming positions: a sink's K and
    // V do not depend on them) rebuild around the whole block taken over.
    void settingsThatKeepTheRowsReuseTheBlock() {
        const std::unique_ptr<ToolChat> chat = chatWithTurns(options());
        SessionOptions changed = options();
        changed.kvWindow = 40;
        changed.positions = PositionMode::Streaming;
        const std::vector<int32_t> transcript = chat->conversation().transcriptTokens();
        const RebuildReport report = chat->rebuild(changed);
        QCOMPARE(report.reusedSinkTokens, int(chat->toolBlock().tokens.size()) - 1);
        const RebuiltSession fresh =
            rebuildSession(*m_model, changed, chat->toolBlock(), transcript);
        compareSessions(chat->session(), *fresh.session);
    }

    // Another block, another cache encoding, or another model: nothing to take over.
    void nothingIsReusedAcrossOtherRows() {
        const std::unique_ptr<ToolChat> chat = chatWithTurns(options());
        const ToolBlock other = chat->chatTemplate().toolBlock(toolsFrom(kOtherTools));
        const size_t shared = commonPrefix(chat->toolBlock().tokens, other.tokens);
        const RebuiltSession otherTools =
            rebuildSession(*m_model, options(), other, {}, {}, {}, &chat->session());
        QCOMPARE(otherTools.report.reusedSinkTokens, int(shared)); // the template's opening only
        QVERIFY(shared + 1 < other.tokens.size()); // the tools themselves are computed

        const RebuiltSession wider =
            rebuildSession(*m_model, options(16), chat->toolBlock(), {}, {}, {}, &chat->session());
        QCOMPARE(wider.report.reusedSinkTokens, 0);
        const RebuiltSession freshWider =
            rebuildSession(*m_model, options(16), chat->toolBlock(), {});
        compareSessions(*wider.session, *freshWider.session);

        const std::unique_ptr<Model> twin = modelFromSpec(smallSpec(true));
        const RebuiltSession onTwin =
            rebuildSession(*twin, options(), chat->toolBlock(), {}, {}, {}, &chat->session());
        QCOMPARE(onTwin.report.reusedSinkTokens, 0);
    }

    void adoptionRefusesWhatItCannotTakeOver() {
        const std::unique_ptr<ToolChat> chat = chatWithTurns(options());
        const Session& from = chat->session();
        const int sinks = from.cache().sinksUsed();
        SessionOptions o = options();
        o.sinkCapacity = sinks;

        Session fewerSlots(*m_model, options()); // BOS's one sink slot
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, fewerSlots.adoptSinks(from, 2));
        QCOMPARE(fewerSlots.position(), int64_t{0});

        Session tooMany(*m_model, o);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, tooMany.adoptSinks(from, sinks + 1));
        QCOMPARE(tooMany.position(), int64_t{0});
        QCOMPARE(tooMany.cache().sinksUsed(), 0);

        o.kvBits = 32;
        Session otherRows(*m_model, o);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, otherRows.adoptSinks(from, 3));
        QCOMPARE(otherRows.position(), int64_t{0});

        o.kvBits = 8;
        Session started(*m_model, o);
        started.feed(m_model->tokenizer().bos(), true);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, started.adoptSinks(from, 3));
        QCOMPARE(started.position(), int64_t{1});

        // A ring slot is not a sink: a session without pinned tools has none past BOS.
        Session plain(*m_model, options());
        plain.feed(m_model->tokenizer().bos());
        plain.feed(5);
        Session adopter(*m_model, o);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, adopter.adoptSinks(plain, 2));
        QCOMPARE(adopter.position(), int64_t{0});
    }
};

QTEST_APPLESS_MAIN(TestSinkReuse)
#include "test_sink_reuse.moc"
