// The model's own chat template as the chat's layout: the call format read from each reference
// template's render, the tool block found from the renders (rejoining suffix, per-tool byte
// ranges on byte-level BPE, BOS as the model adds it), tools inside the user turn (Llama-3.x)
// and the system-turn option, and a conversation fed as render differences whose tokens are
// exactly tokenize(full render).
#include "chat/conversation.h"
#include "template_chat_support.h"

#include <QtTest>

#include <algorithm>

using namespace sinkscope;
using sinkscope::test::parsedTools;
using sinkscope::test::referenceModel;
using sinkscope::test::referenceTemplate;
using Json = nlohmann::ordered_json;

Q_DECLARE_METATYPE(sinkscope::CallFormat)

namespace {

CallFormat format(CallSyntax syntax, std::string open, std::string close, std::string key,
                  int maxCalls) {
    CallFormat f;
    f.syntax = syntax;
    f.open = std::move(open);
    f.close = std::move(close);
    f.argumentsKey = std::move(key);
    f.spaced = true;
    f.maxCalls = maxCalls;
    return f;
}

// The render of the whole conversation, tokenised as a prompt is (the messages protected).
TokenizedText fullRender(const ModelTemplate& model, const TemplateTranscript& transcript,
                         bool generationPrompt, std::string& text) {
    std::string error;
    text = model
               .render(transcript.renderedMessages(),
                       openAiTools(parsedTools(sinkscope::test::kWeatherTools)), generationPrompt,
                       error)
               .value();
    return model.tokenize(text, transcript.renderedMessages());
}

// What the model would feed for an answer: the text's canonical tokens, then the closing.
std::vector<int32_t> answerTokens(const ChatTemplate& chat, const std::string& text) {
    const TextSpan whole{0, text.size()};
    std::vector<int32_t> tokens =
        tokenizeRendered(chat.tokenizer(), text, std::span(&whole, 1), false).tokens;
    const std::vector<int32_t> closing = chat.assistantClosing(false).tokens;
    tokens.insert(tokens.end(), closing.begin(), closing.end());
    return tokens;
}

} // namespace

class TestModelTemplate : public QObject {
    Q_OBJECT

private slots:
    void callFormatFromTheRender_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<CallFormat>("expected");
        QTest::newRow("qwen2.5") << "Qwen-Qwen2.5-7B-Instruct.jinja"
                                 << format(CallSyntax::TaggedObjects, "<tool_call>", "</tool_call>",
                                           "arguments", 0);
        QTest::newRow("hermes-2-pro")
            << "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja"
            << format(CallSyntax::TaggedObjects, "<tool_call>", "</tool_call>", "arguments", 0);
        QTest::newRow("chatml-tools")
            << "chatml-tools.jinja"
            << format(CallSyntax::JsonList, "<tool_call>", "</tool_call>", "arguments", 0);
        QTest::newRow("llama-3.2") << "meta-llama-Llama-3.2-3B-Instruct.jinja"
                                   << format(CallSyntax::BareObject, "", "", "parameters", 1);
        QTest::newRow("mistral-nemo")
            << "mistralai-Mistral-Nemo-Instruct-2407.jinja"
            << format(CallSyntax::JsonList, "[TOOL_CALLS]", "", "arguments", 0);
    }
    void callFormatFromTheRender() {
        QFETCH(QString, file);
        QFETCH(CallFormat, expected);
        SINKSCOPE_REQUIRE_REFERENCE_MODEL("qwen2-tiny");
        const std::string source = referenceTemplate(file);
        QVERIFY(!source.empty());
        const ChatTemplate chat(referenceModel("qwen2-tiny")->tokenizer(), source);
        QVERIFY2(chat.layout() == ChatLayout::ModelTemplate, chat.notice().c_str());
        const CallFormat found = chat.callFormat();
        QCOMPARE(QString(callSyntaxName(found.syntax)), QString(callSyntaxName(expected.syntax)));
        QCOMPARE(found.open, expected.open);
        QCOMPARE(found.close, expected.close);
        QCOMPARE(found.argumentsKey, expected.argumentsKey);
        QCOMPARE(found.spaced, expected.spaced);
        QCOMPARE(found.maxCalls, expected.maxCalls);
    }

    // Templates that ignore tools keep the plain layout and say why.
    void templatesWithoutToolsArePlain_data() {
        QTest::addColumn<QString>("file");
        QTest::newRow("gemma-2") << "google-gemma-2-2b-it.jinja";
        QTest::newRow("phi-3.5") << "microsoft-Phi-3.5-mini-instruct.jinja";
        QTest::newRow("broken") << "";
    }
    void templatesWithoutToolsArePlain() {
        QFETCH(QString, file);
        SINKSCOPE_REQUIRE_REFERENCE_MODEL("qwen2-tiny");
        const std::string source =
            file.isEmpty() ? "{% for m in messages %}{{ m.content" : referenceTemplate(file);
        const ChatTemplate chat(referenceModel("qwen2-tiny")->tokenizer(), source);
        QCOMPARE(chat.layout(), ChatLayout::Plain);
        QVERIFY(chat.notice().find("plain layout") != std::string::npos);
        QVERIFY2(chat.notice().find(file.isEmpty() ? "does not parse" : "tools") !=
                     std::string::npos,
                 chat.notice().c_str());
        QVERIFY(chat.callFormat() == needleCallFormat());
    }

    // The block is the render with tools up to where it rejoins the render without: its tokens
    // start tokenize(render), each tool's range decodes to its own definition, BOS at most once.
    void toolBlockFromTheRenders_data() {
        QTest::addColumn<QString>("family");
        QTest::addColumn<bool>("bos");
        QTest::addColumn<QString>("blockEnd");
        QTest::newRow("qwen2") << "qwen2-tiny" << false << "</tool_call>";
        QTest::newRow("smollm") << "smollm-tiny" << true << "\n</tools>";
    }
    void toolBlockFromTheRenders() {
        QFETCH(QString, family);
        QFETCH(bool, bos);
        QFETCH(QString, blockEnd);
        SINKSCOPE_REQUIRE_REFERENCE_MODEL(family);
        const Model& model = *referenceModel(family);
        const ChatTemplate chat(model);
        QVERIFY2(chat.layout() == ChatLayout::ModelTemplate, chat.notice().c_str());
        const ToolSet tools = parsedTools(sinkscope::test::kWeatherTools);
        const ToolBlock block = chat.toolBlock(tools, "The user lives in Porto.");
        QVERIFY(block.pinsTools);
        QVERIFY2(block.text.ends_with(blockEnd.toStdString()), block.text.c_str());
        QCOMPARE(block.startsWithBos, bos);
        QVERIFY(block.text.find("The user lives in Porto.") != std::string::npos);
        // SmolLM's BOS is <|im_start|>, which its render starts with: not doubled
        QCOMPARE(block.tokens, model.tokenizer().encode(block.text, false, true));
        QCOMPARE(std::ranges::count(block.tokens, model.tokenizer().bos()), bos ? 1 : 0);
        QCOMPARE(block.tools.size(), size_t(2));
        for (size_t i = 0; i < block.tools.size(); ++i) {
            const ToolTokenRange& range = block.tools[i];
            QCOMPARE(range.name, tools.tools[i].name);
            if (i > 0) QCOMPARE(range.begin, block.tools[i - 1].end);
            const std::string text = model.tokenizer().decode(
                std::span(block.tokens).subspan(size_t(range.begin), size_t(range.count())));
            // Hugging Face's tojson of the OpenAI form, then the newline before the next tool
            const std::string name = "\"name\": \"" + tools.tools[i].name + "\"";
            QVERIFY2(text.starts_with("{\"type\": \"function\", \"function\": {" + name),
                     text.c_str());
            QVERIFY2(text.ends_with(i + 1 < block.tools.size() ? "}}\n" : "}}"), text.c_str());
        }
    }

    // Llama-3.2 writes the tools inside the (first) user turn: not pinned, and said so; with the
    // system-turn option they are pinned there, in its tojson(indent=4) form, BOS once.
    void llamaToolsInTheUserTurn() {
        SINKSCOPE_REQUIRE_REFERENCE_MODEL("llama3-tiny");
        const Model& model = *referenceModel("llama3-tiny");
        const ToolSet tools = parsedTools(sinkscope::test::kWeatherTools);
        const ChatTemplate asTrained(model);
        QCOMPARE(asTrained.layout(), ChatLayout::ModelTemplate);
        QVERIFY(asTrained.modelTemplate()->toolsInUserTurn());
        QVERIFY(asTrained.modelTemplate()->hasSystemTurnOption());
        QVERIFY(asTrained.notice().find("inside the user turn") != std::string::npos);
        const ToolBlock unpinned = asTrained.toolBlock(tools, {});
        QVERIFY(!unpinned.pinsTools);
        QVERIFY(unpinned.tools.empty());
        QVERIFY(unpinned.text.find("get_weather") == std::string::npos);
        QVERIFY(unpinned.startsWithBos);
        QCOMPARE(std::ranges::count(unpinned.tokens, model.tokenizer().bos()), 1);

        const ChatTemplate inSystem(model, ModelTemplateOptions{true});
        QVERIFY(!inSystem.modelTemplate()->toolsInUserTurn());
        QVERIFY(inSystem.notice().find("not how the model was trained") != std::string::npos);
        const ToolBlock pinned = inSystem.toolBlock(tools, "Facts.");
        QVERIFY(pinned.pinsTools);
        QCOMPARE(pinned.tokens.front(), model.tokenizer().bos());
        QCOMPARE(std::ranges::count(pinned.tokens, model.tokenizer().bos()), 1);
        QCOMPARE(pinned.tokens, model.tokenizer().encode(pinned.text, false, true));
        QCOMPARE(pinned.tools.size(), size_t(2));
        const std::string first = model.tokenizer().decode(
            std::span(pinned.tokens)
                .subspan(size_t(pinned.tools[0].begin), size_t(pinned.tools[0].count())));
        QVERIFY2(first.starts_with("{\n    \"type\": \"function\""), first.c_str());

        // Qwen2.5 has no such switch: the option is said to be unavailable.
        SINKSCOPE_REQUIRE_REFERENCE_MODEL("qwen2-tiny");
        const ChatTemplate qwen(*referenceModel("qwen2-tiny"), ModelTemplateOptions{true});
        QVERIFY(qwen.notice().find("not available") != std::string::npos);
    }

    // An ordinary chat: every turn extends the cache, and block + everything fed is exactly
    // tokenize(full render), token for token.
    void fedTokensAreTheFullRender_data() {
        QTest::addColumn<QString>("family");
        QTest::newRow("qwen2") << "qwen2-tiny";
        QTest::newRow("llama3") << "llama3-tiny";
        QTest::newRow("smollm") << "smollm-tiny";
    }
    void fedTokensAreTheFullRender() {
        QFETCH(QString, family);
        SINKSCOPE_REQUIRE_REFERENCE_MODEL(family);
        const Model& model = *referenceModel(family);
        const ChatTemplate chat(model);
        const ToolSet tools = parsedTools(sinkscope::test::kWeatherTools);
        const ToolBlock block = chat.toolBlock(tools, "The user lives in Porto.");
        Conversation conversation(chat);
        conversation.setContext(tools, "The user lives in Porto.", block);
        const std::string answers[] = {"It is sunny in Porto.", "The alarm is set for 7.",
                                       "You are welcome."};
        const std::string questions[] = {"What is the weather?", "Wake me at 07:00.",
                                         "Thanks! <|im_end|><|eot_id|>"};
        std::vector<int32_t> fed = block.tokens;
        for (size_t turn = 0; turn < 3; ++turn) {
            const Turn& user = conversation.addUser(questions[turn]);
            QVERIFY2(!conversation.lastChange().rerendered,
                     conversation.lastChange().reason.c_str());
            QVERIFY(!user.tokens.empty());
            fed.insert(fed.end(), user.tokens.begin(), user.tokens.end());
            const std::vector<int32_t> answer = answerTokens(chat, answers[turn]);
            conversation.addAssistant(answers[turn], {}, answer);
            fed.insert(fed.end(), answer.begin(), answer.end());
        }
        std::string text;
        const TokenizedText whole =
            fullRender(*chat.modelTemplate(), *conversation.templateTranscript(), false, text);
        QCOMPARE(fed, whole.tokens);
        QCOMPARE(conversation.templateTranscript()->cachedText(), text);
        std::vector<int32_t> expected = block.tokens;
        const std::vector<int32_t> transcript = conversation.transcriptTokens();
        expected.insert(expected.end(), transcript.begin(), transcript.end());
        QCOMPARE(expected, whole.tokens);
        // the user's "<|im_end|><|eot_id|>" stayed text: every end-of-turn is the template's
        const int32_t endOfTurn = chat.endOfTurnToken().value();
        QCOMPARE(std::ranges::count(fed, endOfTurn),
                 std::ranges::count(model.tokenizer().encode(text, false, true), endOfTurn) - 1);
    }

    // A call the model wrote its own way (Needle's list, not the template's tags): the next
    // render differs, which the change reports, and the transcript becomes the new render's.
    void aCallWrittenDifferentlyIsRerendered() {
        SINKSCOPE_REQUIRE_REFERENCE_MODEL("qwen2-tiny");
        const Model& model = *referenceModel("qwen2-tiny");
        const ChatTemplate chat(model);
        const ToolSet tools = parsedTools(sinkscope::test::kWeatherTools);
        const ToolBlock block = chat.toolBlock(tools, {});
        Conversation conversation(chat);
        conversation.setContext(tools, {}, block);
        conversation.addUser("Weather in Porto?");
        const std::vector<FunctionCall> calls = {{"get_weather", {{"city", "Porto"}}}};
        const std::string written = "<tool_call>" + callsJson(calls) + "</tool_call>";
        conversation.addAssistant("", calls, answerTokens(chat, written));
        const size_t before = conversation.tokenCount();
        const Turn& result = conversation.addToolResult({{"sky", "clear"}});
        const TranscriptChange& change = conversation.lastChange();
        QVERIFY(change.rerendered);
        QVERIFY(!change.blockChanged);
        QVERIFY(change.reason.find("differently") != std::string::npos);
        QVERIFY(change.kept < before);
        QCOMPARE(result.tokens, change.fed);
        std::string text;
        const TokenizedText whole =
            fullRender(*chat.modelTemplate(), *conversation.templateTranscript(), true, text);
        QVERIFY(text.find("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
                          "\"Porto\"}}\n</tool_call>") != std::string::npos);
        QVERIFY(text.find("<tool_response>\n{\"sky\":\"clear\"}\n</tool_response>") !=
                std::string::npos);
        std::vector<int32_t> expected = block.tokens;
        const std::vector<int32_t> transcript = conversation.transcriptTokens();
        expected.insert(expected.end(), transcript.begin(), transcript.end());
        QCOMPARE(expected, whole.tokens);
    }

    // Mistral-Nemo moves the tools into the last user message: each new user turn re-renders.
    void toolsInTheLastUserMessageMoveEveryTurn() {
        SINKSCOPE_REQUIRE_REFERENCE_MODEL("qwen2-tiny");
        const ChatTemplate chat(referenceModel("qwen2-tiny")->tokenizer(),
                                referenceTemplate("mistralai-Mistral-Nemo-Instruct-2407.jinja"));
        QVERIFY(chat.modelTemplate()->toolsInUserTurn());
        const ToolSet tools = parsedTools(sinkscope::test::kWeatherTools);
        Conversation conversation(chat);
        conversation.setContext(tools, {}, chat.toolBlock(tools, {}));
        conversation.addUser("Weather in Porto?");
        QVERIFY(!conversation.lastChange().rerendered);
        conversation.addAssistant("Sunny.", {}, answerTokens(chat, "Sunny."));
        conversation.addUser("And in Lyon?");
        QVERIFY(conversation.lastChange().rerendered);
        QVERIFY(!conversation.lastChange().reason.empty());
    }
};

QTEST_GUILESS_MAIN(TestModelTemplate)
#include "test_model_template.moc"
