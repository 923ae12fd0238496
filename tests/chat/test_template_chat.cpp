// A ToolChat in the model's own template, on the reference models: the session holds exactly the
// block and the transcript the renders made, ordinary turns extend the cache, a call written
// otherwise than the template writes it is re-rendered and reported, Llama-3's tools travel with
// the conversation unless pinned in the system turn, and new tools re-render the conversation.
#include "session/tool_chat.h"
#include "template_chat_support.h"

#include <QtTest>

#include <algorithm>

using namespace sinkscope;
using sinkscope::test::parsedTools;
using sinkscope::test::referenceModel;

namespace {

constexpr const char* kFacts = "The user lives in Porto.";

// A window wider than any chat here: the session's history is then the whole block + transcript.
SessionOptions wideOptions() {
    SessionOptions options;
    options.recordHistory = true;
    options.kvWindow = 1024;
    return options;
}

RespondOptions shortAnswers(uint64_t seed, CallPolicy calls) {
    RespondOptions options;
    options.sampler.seed = seed;
    options.calls = calls;
    options.maxTokens = 8;
    options.maxCallTokens = 80;
    return options;
}

void verifyBlockThenTranscript(const ToolChat& chat) {
    std::vector<int32_t> expected = chat.toolBlock().tokens;
    const std::vector<int32_t> transcript = chat.conversation().transcriptTokens();
    expected.insert(expected.end(), transcript.begin(), transcript.end());
    QCOMPARE(chat.session().history(), expected);
    QCOMPARE(chat.session().cache().sinksUsed(), int(chat.toolBlock().tokens.size()));
}

// The text the cache holds is the conversation's render followed by what the model wrote.
void verifyCachedText(const ToolChat& chat) {
    std::string text;
    for (const int32_t id : chat.session().history())
        text += chat.model().tokenizer().piece(id, true);
    QCOMPARE(text, chat.conversation().templateTranscript()->cachedText());
}

} // namespace

class TestTemplateChat : public QObject {
    Q_OBJECT

private slots:
    void ordinaryTurnsExtendTheCache_data() {
        QTest::addColumn<QString>("family");
        QTest::newRow("qwen2") << "qwen2-tiny";
        QTest::newRow("llama3") << "llama3-tiny";
        QTest::newRow("smollm") << "smollm-tiny";
    }
    void ordinaryTurnsExtendTheCache() {
        QFETCH(QString, family);
        SINKSCOPE_REQUIRE_REFERENCE_MODEL(family);
        ToolChat chat(*referenceModel(family), wideOptions(),
                      parsedTools(sinkscope::test::kWeatherTools), kFacts);
        QCOMPARE(chat.chatTemplate().layout(), ChatLayout::ModelTemplate);
        QCOMPARE(chat.session().history(), chat.toolBlock().tokens);
        for (uint64_t seed = 1; seed <= 3; ++seed) {
            const ToolResponse response = chat.ask("Question " + std::to_string(seed) + "?",
                                                   shortAnswers(seed, CallPolicy::None));
            QVERIFY2(response.error.empty(), response.error.c_str());
            QVERIFY(!chat.lastTurn().rerendered || !chat.lastTurn().rerenderReason.empty());
            verifyBlockThenTranscript(chat);
            verifyCachedText(chat);
        }
        QCOMPARE(chat.conversation().templateTranscript()->messages().size(), size_t(6));
    }

    // Calls are decoded in the template's own form (Qwen2.5: tagged objects), so the template's
    // render of the call extends what the model wrote: the turn after it is fed as a difference,
    // not re-rendered.
    void aCallInTheTemplatesFormExtendsTheCache() {
        SINKSCOPE_REQUIRE_REFERENCE_MODEL("qwen2-tiny");
        ToolChat chat(*referenceModel("qwen2-tiny"), wideOptions(),
                      parsedTools(sinkscope::test::kWeatherTools), kFacts);
        QCOMPARE(chat.callFormat().syntax, CallSyntax::TaggedObjects);
        const ToolResponse call =
            chat.ask("Weather in Porto?", shortAnswers(2, CallPolicy::Required));
        QCOMPARE(call.type, ResponseType::Call);
        QVERIFY2(call.error.empty(), call.error.c_str());
        const ToolResponse after =
            chat.sendToolResult({{"sky", "clear"}}, shortAnswers(3, CallPolicy::None));
        QVERIFY(after.error.empty());
        QVERIFY2(!chat.lastTurn().rerendered, chat.lastTurn().rerenderReason.c_str());
        QCOMPARE(chat.lastTurn().replayedTokens, 0);
        verifyBlockThenTranscript(chat);
        verifyCachedText(chat);
        std::string transcript;
        for (const int32_t id : chat.conversation().transcriptTokens())
            transcript += chat.model().tokenizer().piece(id, true);
        const std::string opening =
            "<tool_call>\n{\"name\": \"" + call.functionCalls[0].name + "\", \"arguments\": {";
        QVERIFY2(transcript.find(opening) != std::string::npos, transcript.c_str());
        QVERIFY(transcript.find("<tool_response>\n{\"sky\":\"clear\"}\n</tool_response>") !=
                std::string::npos);
    }

    // Llama-3.2 writes the tools in the user turn: they travel in the transcript, not the sinks;
    // with the system-turn option they are pinned.
    void llamaToolsPinnedOnlyOnRequest() {
        SINKSCOPE_REQUIRE_REFERENCE_MODEL("llama3-tiny");
        const Model& model = *referenceModel("llama3-tiny");
        const ToolSet tools = parsedTools(sinkscope::test::kWeatherTools);
        ToolChat unpinned(model, wideOptions(), tools, kFacts);
        QVERIFY(!unpinned.toolBlock().pinsTools);
        QVERIFY(!unpinned.toolBlock().notice.empty());
        unpinned.ask("Weather?", shortAnswers(4, CallPolicy::None));
        QVERIFY(model.tokenizer()
                    .decode(unpinned.conversation().transcriptTokens())
                    .find("\"get_weather\"") != std::string::npos);
        verifyBlockThenTranscript(unpinned);

        ToolChat pinned(model, wideOptions(), tools, kFacts, {}, ModelTemplateOptions{true});
        QVERIFY(pinned.toolBlock().pinsTools);
        QCOMPARE(pinned.toolBlock().tools.size(), size_t(2));
        QVERIFY(pinned.toolBlock().text.find("\"get_weather\"") != std::string::npos);
        pinned.ask("Weather?", shortAnswers(4, CallPolicy::None));
        verifyBlockThenTranscript(pinned);
        verifyCachedText(pinned);
    }

    // New tools: a new block, the conversation rendered anew under them, the session rebuilt.
    void newToolsRenderTheConversationAnew() {
        SINKSCOPE_REQUIRE_REFERENCE_MODEL("smollm-tiny");
        ToolChat chat(*referenceModel("smollm-tiny"), wideOptions(),
                      parsedTools(sinkscope::test::kWeatherTools), kFacts);
        chat.ask("Hello?", shortAnswers(5, CallPolicy::None));
        chat.replaceTools(
            parsedTools(
                R"([{"name":"reboot","description":"Reboots.","parameters":{"type":"object","properties":{}}}])"),
            "");
        QVERIFY(chat.toolBlock().text.find("reboot") != std::string::npos);
        QVERIFY(chat.toolBlock().text.find("Porto") == std::string::npos);
        QCOMPARE(chat.toolBlock().tools.size(), size_t(1));
        verifyBlockThenTranscript(chat);
        verifyCachedText(chat);
        QVERIFY(chat.ask("Again?", shortAnswers(6, CallPolicy::None)).error.empty());
        verifyBlockThenTranscript(chat);
    }
};

QTEST_GUILESS_MAIN(TestTemplateChat)
#include "test_template_chat.moc"
