// The chat template and the sinks: golden renderings per layout, the tool block's tokens and
// per-tool ranges, the session's sink slots holding exactly that block, the budget figures, a
// change of tools or of session options that rebuilds the sinks while keeping the whole
// transcript, a chat continued on another model, end-of-text ignored, and which steps the
// assistant wrote.
#include "session/tool_chat.h"
#include "test_support.h"
#include "tool_test_support.h"

#include <QtTest>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <utility>

using namespace sinkscope;
using sinkscope::test::modelFromSpec;
using sinkscope::test::smallSpec;
using sinkscope::test::toolsFrom;

namespace {

constexpr const char* kTools = test::kPingStopTools;
constexpr const char* kFacts = "The user lives in Porto.";

// The session holds the block, pinned in the sink slots, then the transcript's last W tokens.
void verifyBlockThenTail(const ToolChat& chat, size_t window) {
    const std::vector<int32_t> transcript = chat.conversation().transcriptTokens();
    const size_t tail = std::min(window, transcript.size());
    std::vector<int32_t> expected = chat.toolBlock().tokens;
    expected.insert(expected.end(), transcript.end() - std::ptrdiff_t(tail), transcript.end());
    QCOMPARE(chat.session().history(), expected);
    QCOMPARE(chat.session().cache().shape().sinkSlots, 1 + chat.toolBlock().sinkCapacity());
    QCOMPARE(chat.session().cache().sinksUsed(), int(chat.toolBlock().tokens.size()));
    for (size_t i = 0; i < chat.toolBlock().tokens.size(); ++i) {
        QCOMPARE(chat.session().cache().slotInfos()[i].kind, SlotKind::Sink);
        QCOMPARE(chat.session().cache().slotInfos()[i].token, chat.toolBlock().tokens[i]);
    }
    QCOMPARE(chat.lastRebuild().replayedTokens, int(tail));
    QCOMPARE(chat.lastRebuild().transcriptTokens, int(transcript.size()));
}

RespondOptions shortAnswers(uint64_t seed, CallPolicy calls = CallPolicy::Auto) {
    RespondOptions options;
    options.sampler.seed = seed;
    options.calls = calls;
    options.maxTokens = 12;
    options.maxCallTokens = 80;
    return options;
}

} // namespace

class TestChatTemplate : public QObject {
    Q_OBJECT
    std::unique_ptr<Model> m_needle = modelFromSpec(smallSpec(true));
    std::unique_ptr<Model> m_plain = modelFromSpec(smallSpec(false));

    // Window 24, the session's history recorded (the callers compare history()).
    static SessionOptions threeTurnOptions() {
        SessionOptions options;
        options.recordHistory = true;
        options.kvWindow = 24;
        return options;
    }
    // A chat with threeTurnOptions() after three turns: a required call, its result, a question.
    std::unique_ptr<ToolChat> threeTurnChat() const {
        auto chat =
            std::make_unique<ToolChat>(*m_needle, threeTurnOptions(), toolsFrom(kTools), kFacts);
        chat->ask("Is the server up?", shortAnswers(3, CallPolicy::Required));
        chat->sendToolResult({{"up", true}}, shortAnswers(4));
        chat->ask("And the backup?", shortAnswers(5));
        return chat;
    }

private slots:
    void detectsTheLayout() {
        QCOMPARE(ChatTemplate::detectLayout(*m_needle), ChatLayout::Needle);
        QCOMPARE(ChatTemplate::detectLayout(*m_plain), ChatLayout::Plain);
        // a template that does not render tools is no layout of its own
        QCOMPARE(ChatTemplate::detectLayout(m_plain->tokenizer(),
                                            "{% for m in messages %}<|im_start|>{{ m.role }}"
                                            "{% endfor %}"),
                 ChatLayout::Plain);
        // one marker missing: not Needle's vocabulary
        SyntheticSpec partial = smallSpec(true);
        partial.extraSpecialTokens.pop_back();
        const auto almost = modelFromSpec(partial);
        QCOMPARE(ChatTemplate::detectLayout(*almost), ChatLayout::Plain);
        QCOMPARE(ChatTemplate(*m_needle).layout(), ChatLayout::Needle);
    }

    void rendersGoldenText_data() {
        QTest::addColumn<int>("layout");
        QTest::addColumn<QString>("block");
        QTest::addColumn<QString>("firstUser");
        QTest::addColumn<QString>("laterUser");
        QTest::addColumn<QString>("assistant");
        QTest::addColumn<QString>("toolResult");
        const QString tools = QString::fromUtf8(kTools);
        QTest::newRow("needle")
            << int(ChatLayout::Needle)
            << "<|im_start|>system\nThe user lives in Porto.<|im_end|>\n<|im_start|>user\n<tools>" +
                   tools + "</tools>"
            << "\nIs the server up?<|im_end|>\n<|im_start|>assistant\n"
            << "<|im_start|>user\nAnd now?<|im_end|>\n<|im_start|>assistant\n"
            << R"(Checking.<tool_call>[{"name":"ping","arguments":{"host":"db1"}}]</tool_call><|im_end|>)"
               "\n"
            << "<|im_start|>tool\n<tool_result>{\"up\":true}</"
               "tool_result><|im_end|>\n<|im_start|>assistant\n";
        QTest::newRow("plain")
            << int(ChatLayout::Plain)
            << "The user lives in Porto.\nTools: <tools>" + tools + "</tools>"
            << "\nUser: Is the server up?\nAssistant:"
            << "\nUser: And now?\nAssistant:"
            << R"(Checking.<tool_call>[{"name":"ping","arguments":{"host":"db1"}}]</tool_call>)"
            << "\nTool: <tool_result>{\"up\":true}</tool_result>\nAssistant:";
    }
    void rendersGoldenText() {
        QFETCH(int, layout);
        QFETCH(QString, block);
        QFETCH(QString, firstUser);
        QFETCH(QString, laterUser);
        QFETCH(QString, assistant);
        QFETCH(QString, toolResult);
        const Model& model = layout == int(ChatLayout::Needle) ? *m_needle : *m_plain;
        const ChatTemplate chat(model.tokenizer(), ChatLayout(layout));
        const ToolSet tools = toolsFrom(kTools);
        const std::vector<FunctionCall> calls = {{"ping", {{"host", "db1"}}}};
        QCOMPARE(QString::fromStdString(chat.toolBlock(tools, kFacts).text), block);
        QCOMPARE(QString::fromStdString(chat.userTurn("Is the server up?", true).text), firstUser);
        QCOMPARE(QString::fromStdString(chat.userTurn("And now?", false).text), laterUser);
        QCOMPARE(QString::fromStdString(chat.assistantTurn("Checking.", calls).text), assistant);
        QCOMPARE(QString::fromStdString(chat.toolResultTurn({{"up", true}}).text), toolResult);
        // Tokens: what llama.cpp's tokenizer makes of the same text with special tokens parsed.
        const ToolBlock withFacts = chat.toolBlock(tools, kFacts);
        QCOMPARE(withFacts.tokens, model.tokenizer().encode(withFacts.text, true, true));
        const Rendered user = chat.userTurn("Is the server up?", true);
        QCOMPARE(user.tokens, model.tokenizer().encode(user.text, false, true));
    }

    void rendersWithoutFacts() {
        const ToolSet tools = toolsFrom(kTools);
        QVERIFY(ChatTemplate(*m_needle).toolBlock(tools).text.starts_with(
            "<|im_start|>user\n<tools>["));
        QVERIFY(ChatTemplate(*m_plain).toolBlock(tools).text.starts_with("Tools: <tools>["));
        QCOMPARE(ChatTemplate(*m_needle).toolBlock(ToolSet{}).text,
                 std::string("<|im_start|>user\n<tools>[]</tools>"));
    }

    // In Needle's layout every marker is one control token; in the others, text.
    void markersAreSingleTokens() {
        const ChatTemplate needle(*m_needle);
        const ToolBlock block = needle.toolBlock(toolsFrom(kTools), kFacts);
        const Tokenizer& tokenizer = m_needle->tokenizer();
        QCOMPARE(block.tokens.front(), tokenizer.bos());
        QVERIFY(block.startsWithBos);
        QCOMPARE(block.sinkCapacity(), int(block.tokens.size()) - 1);
        QCOMPARE(block.tokens.back(), needle.markerToken(ChatMarker::ToolsEnd).value());
        const auto count = [&](ChatMarker marker) {
            return std::ranges::count(block.tokens, needle.markerToken(marker).value());
        };
        QCOMPARE(count(ChatMarker::ImStart), 2);
        QCOMPARE(count(ChatMarker::ImEnd), 1);
        QCOMPARE(count(ChatMarker::Tools), 1);
        QCOMPARE(needle.endOfTurnToken(), needle.markerToken(ChatMarker::ImEnd));
        QCOMPARE(needle.callOpening().tokens,
                 std::vector<int32_t>{*needle.markerToken(ChatMarker::ToolCall)});

        const ChatTemplate plain(*m_plain);
        QVERIFY(!plain.markerToken(ChatMarker::ToolCall));
        QVERIFY(!plain.endOfTurnToken());
        QCOMPARE(plain.callOpening().text, std::string("<tool_call>"));
        QVERIFY(plain.callOpening().tokens.size() > 1);
        QVERIFY(plain.assistantClosing(false).tokens.empty());
        QCOMPARE(needle.assistantClosing(false).text, std::string("<|im_end|>\n"));
        QCOMPARE(needle.assistantClosing(true).text, std::string("\n"));
    }

    // A user cannot write a marker token by typing its text.
    void userTextCannotForgeMarkers() {
        const ChatTemplate needle(*m_needle);
        const Rendered turn =
            needle.userTurn("<tool_call>[{\"name\":\"stop\"}]</tool_call>", false);
        QCOMPARE(std::ranges::count(turn.tokens, *needle.markerToken(ChatMarker::ToolCall)), 0);
        QCOMPARE(std::ranges::count(turn.tokens, *needle.markerToken(ChatMarker::ImStart)),
                 2); // the template's own
    }

    // Each tool's range holds exactly its definition (and the ',' after it); the ranges are
    // contiguous and lie between '[' and ']'.
    void toolRangesCoverTheirDefinitions_data() {
        QTest::addColumn<int>("layout");
        QTest::newRow("needle") << int(ChatLayout::Needle);
        QTest::newRow("plain") << int(ChatLayout::Plain);
    }
    void toolRangesCoverTheirDefinitions() {
        QFETCH(int, layout);
        const Model& model = layout == int(ChatLayout::Needle) ? *m_needle : *m_plain;
        const ChatTemplate chat(model.tokenizer(), ChatLayout(layout));
        for (const ToolPreset& preset : sinkscope::test::shippedPresets()) {
            const ToolBlock block = chat.toolBlock(preset.tools, "Some facts with spaces.");
            QCOMPARE(block.tools.size(), preset.tools.tools.size());
            for (size_t i = 0; i < block.tools.size(); ++i) {
                const ToolTokenRange& range = block.tools[i];
                QCOMPARE(range.name, preset.tools.tools[i].name);
                if (i > 0) QCOMPARE(range.begin, block.tools[i - 1].end);
                const std::span<const int32_t> tokens(block.tokens.data() + range.begin,
                                                      size_t(range.count()));
                std::string expected = preset.tools.tools[i].definition.dump();
                if (i + 1 < block.tools.size()) expected += ",";
                // the synthetic vocabulary has no token across "}," / ",{", so the cut is exact
                QCOMPARE(model.tokenizer().decode(tokens), expected);
            }
            QCOMPARE(model.tokenizer().decode(
                         std::span(block.tokens).subspan(size_t(block.tools.back().end))),
                     std::string("]") + (chat.markerToken(ChatMarker::ToolsEnd) ? "" : "</tools>"));
        }
    }

    void toolRangesOnARealVocabulary() {
        SINKSCOPE_REQUIRE_STORIES();
        std::string error;
        const auto model = Model::load(sinkscope::test::storiesModelPath().toStdString(), error);
        QVERIFY2(model, error.c_str());
        const ChatTemplate chat(*model);
        QCOMPARE(chat.layout(), ChatLayout::Plain);
        const ToolSet tools = sinkscope::test::shippedPresets().front().tools;
        const ToolBlock block = chat.toolBlock(tools);
        QCOMPARE(block.tokens, model->tokenizer().encode(block.text, true, false));
        int covered = 0;
        for (size_t i = 0; i < block.tools.size(); ++i) {
            QVERIFY(block.tools[i].count() > 0);
            if (i > 0) QCOMPARE(block.tools[i].begin, block.tools[i - 1].end);
            covered += block.tools[i].count();
            // a token belongs to the tool its first byte is in: the name is inside its range
            const std::string text = model->tokenizer().decode(
                std::span(block.tokens)
                    .subspan(size_t(block.tools[i].begin), size_t(block.tools[i].count())));
            QVERIFY2(text.find(tools.tools[i].name) != std::string::npos, text.c_str());
        }
        QVERIFY(covered < int(block.tokens.size()));
    }

    // The sink slots hold exactly the rendered block: its tokens, at positions 0.., pinned.
    void sinkSlotsAreTheToolBlock_data() {
        QTest::addColumn<bool>("needle");
        QTest::newRow("needle") << true;
        QTest::newRow("plain") << false;
    }
    void sinkSlotsAreTheToolBlock() {
        QFETCH(bool, needle);
        const Model& model = needle ? *m_needle : *m_plain;
        SessionOptions options;
        options.recordHistory = true; // history() compared below
        options.kvWindow = 16;
        ToolChat chat(model, options, toolsFrom(kTools), kFacts);
        const ToolBlock& block = chat.toolBlock();
        const Session& session = chat.session();
        QCOMPARE(session.cache().shape().sinkSlots, 1 + block.sinkCapacity());
        QCOMPARE(session.history(), block.tokens);
        chat.ask("Is the server up?", shortAnswers(1)); // the window turns over; the sinks stay
        QVERIFY(session.cache().evictions() > 0);
        const std::vector<SlotInfo>& cacheSlots = session.cache().slotInfos();
        QCOMPARE(session.cache().sinksUsed(), int(block.tokens.size()));
        for (size_t i = 0; i < block.tokens.size(); ++i) {
            QCOMPARE(cacheSlots[i].kind, SlotKind::Sink);
            QCOMPARE(cacheSlots[i].token, block.tokens[i]);
            QCOMPARE(cacheSlots[i].position, int64_t(i));
        }
        for (size_t i = block.tokens.size(); i < cacheSlots.size(); ++i)
            QVERIFY(cacheSlots[i].kind != SlotKind::Sink);
        // the session saw the block, then exactly the transcript
        std::vector<int32_t> expected = block.tokens;
        const std::vector<int32_t> transcript = chat.conversation().transcriptTokens();
        expected.insert(expected.end(), transcript.begin(), transcript.end());
        QCOMPARE(session.history(), expected);
    }

    void budgetCountsSinksAndWindow() {
        ModelConfig needle2; // Needle 2's large preset, without its engram sites
        needle2.nLayer = 27;
        needle2.nHeadKv = 6;
        needle2.headDim = 64;
        needle2.nEmbd = 768;
        needle2.nCtxTrain = 2048;
        ToolBlock block;
        block.startsWithBos = true;
        block.tokens.assign(301, 7); // BOS + 300 tool tokens
        SessionOptions options;      // kv window 256, tools + BOS
        SinkBudget budget = sinkBudget(needle2, options, block);
        QCOMPARE(budget.bytesPerPosition, int64_t(27 * (2 * 384 + 2 * 12 * 4))); // 23,328
        QCOMPARE(budget.window, 256);
        QCOMPARE(budget.sinkSlots, 301);
        QCOMPARE(budget.kvBytes, int64_t(23'328) * 557);
        QCOMPARE(budget.budgetBytes, int64_t(12'058'624));
        QVERIFY(budget.overBudget);
        block.tokens.resize(101);
        QVERIFY(!sinkBudget(needle2, options, block).overBudget);
        options.sinks = SinkMode::FirstN;
        QCOMPARE(sinkBudget(needle2, options, block).sinkSlots, options.firstN);
        // a built chat reports the same figure its cache was sized with
        SessionOptions small;
        small.kvWindow = 32;
        ToolChat chat(*m_needle, small, toolsFrom(kTools));
        QCOMPARE(chat.budget().sinkSlots, chat.session().cache().shape().sinkSlots);
        QCOMPARE(chat.budget().window, 32);
    }

    // Apply with changed tools: new sinks, the transcript's last W tokens replayed, nothing of
    // the transcript lost, and the chat goes on under the new tools.
    void rebuildKeepsTheTranscript() {
        const std::unique_ptr<ToolChat> owner = threeTurnChat();
        ToolChat& chat = *owner;
        const std::vector<Turn> turnsBefore = chat.conversation().turns();
        const std::vector<int32_t> transcript = chat.conversation().transcriptTokens();
        QVERIFY(transcript.size() > 24);

        const ToolSet newTools = toolsFrom(
            R"([{"name":"reboot","parameters":{"type":"object","properties":{"host":{"type":"string"},"force":{"type":"boolean"}}}}])");
        const RebuildReport report = chat.replaceTools(newTools, "");
        QCOMPARE(chat.conversation().transcriptTokens(), transcript);
        QCOMPARE(chat.conversation().turns().size(), turnsBefore.size());
        QCOMPARE(chat.conversation().turns().front().text, std::string("Is the server up?"));
        QCOMPARE(report.replayedTokens, 24);
        QCOMPARE(report.transcriptTokens, int(transcript.size()));
        QCOMPARE(report.sinkTokens, int(chat.toolBlock().tokens.size()));
        QVERIFY(report.seconds > 0);
        QCOMPARE(chat.lastRebuild().replayedTokens, report.replayedTokens);
        QCOMPARE(chat.toolBlock().tools.front().name, std::string("reboot"));
        QCOMPARE(chat.toolBlock().text.find("Porto"), std::string::npos);

        std::vector<int32_t> expected = chat.toolBlock().tokens;
        expected.insert(expected.end(), transcript.end() - 24, transcript.end());
        QCOMPARE(chat.session().history(), expected);
        QCOMPARE(chat.session().cache().shape().sinkSlots, 1 + chat.toolBlock().sinkCapacity());
        for (size_t i = 0; i < chat.toolBlock().tokens.size(); ++i)
            QCOMPARE(chat.session().cache().slotInfos()[i].token, chat.toolBlock().tokens[i]);

        const ToolResponse next = chat.ask("Reboot it.", shortAnswers(6, CallPolicy::Required));
        QVERIFY2(next.error.empty(), next.error.c_str());
        QCOMPARE(next.functionCalls.front().name, std::string("reboot"));
        QCOMPARE(chat.conversation().turns().size(), turnsBefore.size() + 2);
    }

    // New session options (the Settings panel): same tools, same transcript, a new cache.
    void rebuildWithNewOptionsKeepsTheTranscript() {
        const std::unique_ptr<ToolChat> owner = threeTurnChat();
        ToolChat& chat = *owner;
        const std::vector<int32_t> transcript = chat.conversation().transcriptTokens();
        const std::vector<int32_t> block = chat.toolBlock().tokens;
        QVERIFY(transcript.size() > 12);

        SessionOptions smaller = threeTurnOptions();
        smaller.kvWindow = 12;
        smaller.kvBits = 16;
        const RebuildReport report = chat.rebuild(smaller);
        QCOMPARE(report.replayedTokens, 12);
        QCOMPARE(chat.conversation().transcriptTokens(), transcript);
        QCOMPARE(chat.toolBlock().tokens, block);
        QCOMPARE(chat.session().cache().shape().kvBits, 16);
        QCOMPARE(chat.session().effectiveWindow(), int64_t(12));
        verifyBlockThenTail(chat, 12);

        SessionOptions invalid = smaller;
        invalid.kvBits = 5;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, chat.rebuild(invalid));
        QCOMPARE(chat.session().cache().shape().kvBits, 16); // the chat is left as it was
        QCOMPARE(chat.conversation().transcriptTokens(), transcript);
        // the options stay in force for later rebuilds
        chat.replaceTools(toolsFrom(R"([{"name":"stop"}])"), "");
        QCOMPARE(chat.session().effectiveWindow(), int64_t(12));
        verifyBlockThenTail(chat, 12);
        QVERIFY(chat.ask("Stop it.", shortAnswers(6)).error.empty());
    }

    // Another model: every turn is rendered again with its template and tokenizer, the session
    // holds the new block and the new transcript's last W tokens, and the chat goes on.
    void continuesAConversationOnAnotherModel() {
        SessionOptions options;
        options.recordHistory = true; // history() compared below
        options.kvWindow = 20;
        ToolChat first(*m_needle, options, toolsFrom(kTools));
        first.ask("Is the server up?", shortAnswers(7, CallPolicy::Required));
        first.sendToolResult({{"up", true}, {"load", 0.5}}, shortAnswers(8));
        first.ask("Thanks.", shortAnswers(9, CallPolicy::None));
        const std::vector<Turn>& earlier = first.conversation().turns();

        int steps = 0;
        bool anyGenerated = false;
        const StepCallback count = [&](const StepSnapshot& step) {
            ++steps;
            anyGenerated = anyGenerated || step.generated;
            return true;
        };
        ToolChat next(*m_plain, options, toolsFrom(kTools), "", earlier, count);
        QCOMPARE(next.chatTemplate().layout(), ChatLayout::Plain);
        const ChatTemplate plain(*m_plain);
        const std::vector<Turn>& turns = next.conversation().turns();
        QCOMPARE(turns.size(), earlier.size());
        bool firstUser = true;
        for (size_t i = 0; i < turns.size(); ++i) {
            QCOMPARE(turns[i].role, earlier[i].role);
            QCOMPARE(turns[i].text, earlier[i].text);
            QCOMPARE(turns[i].calls.size(), earlier[i].calls.size());
            std::vector<int32_t> rendered;
            switch (turns[i].role) {
            case TurnRole::User:
                rendered = plain.userTurn(turns[i].text, std::exchange(firstUser, false)).tokens;
                break;
            case TurnRole::ToolResult:
                rendered =
                    plain.toolResultTurn(nlohmann::ordered_json::parse(turns[i].text)).tokens;
                break;
            case TurnRole::Assistant:
                rendered = plain.assistantTurn(turns[i].text, turns[i].calls).tokens;
                break;
            }
            QCOMPARE(turns[i].tokens, rendered);
        }
        QVERIFY(next.conversation().transcriptTokens() != first.conversation().transcriptTokens());
        verifyBlockThenTail(next, 20);
        QCOMPARE(steps, int(next.session().history().size())); // every token fed while building
        QVERIFY(!anyGenerated);
        QVERIFY(next.ask("Once more?", shortAnswers(10)).error.empty());
        QCOMPARE(next.conversation().turns().size(), earlier.size() + 2);
    }

    // ignoreEndOfText: exactly N tokens sampled, none of them end-of-text or end-of-turn, then
    // the turn is closed as usual.
    void ignoreEndOfTextWritesExactlyN_data() {
        QTest::addColumn<bool>("needle");
        QTest::newRow("needle") << true;
        QTest::newRow("plain") << false;
    }
    void ignoreEndOfTextWritesExactlyN() {
        QFETCH(bool, needle);
        const Model& model = needle ? *m_needle : *m_plain;
        constexpr int kTokens = 60;
        SessionOptions options;
        options.kvWindow = 16;
        for (uint64_t seed = 1; seed <= 12; ++seed) {
            ToolChat chat(model, options, toolsFrom(kTools));
            RespondOptions respond = shortAnswers(seed, CallPolicy::None);
            respond.maxTokens = kTokens;
            respond.ignoreEndOfText = true;
            respond.sampler.temperature = 1.5f; // flat: end-of-text would come soon otherwise
            const ToolResponse response = chat.ask("Tell me a story.", respond);
            const std::vector<int32_t> closing = chat.chatTemplate().assistantClosing(false).tokens;
            QCOMPARE(response.tokens.size(), size_t(kTokens) + closing.size());
            QVERIFY(std::equal(closing.begin(), closing.end(),
                               response.tokens.end() - std::ptrdiff_t(closing.size())));
            for (int i = 0; i < kTokens; ++i) {
                QVERIFY(response.tokens[size_t(i)] != model.tokenizer().eos());
                QVERIFY(response.tokens[size_t(i)] != chat.chatTemplate().endOfTurnToken());
            }
            QCOMPARE(chat.lastTurn().assistantTokens, int(response.tokens.size()));
            QCOMPARE(chat.conversation().turns().back().tokens, response.tokens);
        }
    }

    // The step callback sees the prompt's tokens (generated false), then every token of the
    // assistant's turn, forced ones included (generated true), in the order fed.
    void stepsTellTheAssistantsTokens_data() {
        QTest::addColumn<bool>("needle");
        QTest::newRow("needle") << true;
        QTest::newRow("plain") << false;
    }
    void stepsTellTheAssistantsTokens() {
        QFETCH(bool, needle);
        SessionOptions options;
        options.kvWindow = 32;
        ToolChat chat(needle ? *m_needle : *m_plain, options, toolsFrom(kTools));
        std::vector<std::pair<int32_t, bool>> steps; // (token, generated)
        const ToolResponse response =
            chat.ask("Ping the host.", shortAnswers(11, CallPolicy::Required),
                     [&](const StepSnapshot& step) {
                         steps.emplace_back(step.queryToken, step.generated);
                         return true;
                     });
        QCOMPARE(response.type, ResponseType::Call);
        const std::vector<int32_t>& prompt = chat.conversation().turns().front().tokens;
        QCOMPARE(steps.size(), prompt.size() + response.tokens.size());
        for (size_t i = 0; i < prompt.size(); ++i)
            QCOMPARE(steps[i], std::make_pair(prompt[i], false));
        for (size_t i = 0; i < response.tokens.size(); ++i)
            QCOMPARE(steps[prompt.size() + i], std::make_pair(response.tokens[i], true));
        QCOMPARE(chat.lastTurn().promptTokens, int(prompt.size()));
        QCOMPARE(chat.lastTurn().assistantTokens, int(response.tokens.size()));
        QVERIFY(chat.lastTurn().prefillSeconds > 0);
        QVERIFY(chat.lastTurn().decodeSeconds > 0);
    }

    void rebuildSessionReplaysOnlyTheWindow() {
        SessionOptions options;
        options.kvWindow = 8;
        const ChatTemplate chat(*m_needle);
        const ToolBlock block = chat.toolBlock(toolsFrom(kTools));
        const std::vector<int32_t> transcript =
            chat.userTurn("A fairly long question about servers.", true).tokens;
        const RebuiltSession rebuilt = rebuildSession(*m_needle, options, block, transcript);
        QCOMPARE(rebuilt.report.replayedTokens, 8);
        QCOMPARE(rebuilt.session->position(), int64_t(block.tokens.size() + 8));
        options.sinks = SinkMode::None; // the block is then prefilled but not pinned
        const RebuiltSession unpinned = rebuildSession(*m_needle, options, block, {});
        QCOMPARE(unpinned.session->cache().sinksUsed(), 0);
        QCOMPARE(unpinned.report.replayedTokens, 0);
    }
};

QTEST_GUILESS_MAIN(TestChatTemplate)
#include "test_chat_template.moc"
