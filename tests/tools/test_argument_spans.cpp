// String arguments restricted to spans of the user's message (RespondOptions::argumentsFromMessage,
// CallMatcher::restrictStringsToSpans): the matcher takes exactly the spans, escapes and UTF-8
// included, and leaves strings with a minimum length free; the masks equal the matcher's verdict
// on every token, wrap-ups included; and sampled turns on a random model only ever copy spans.
#include "call_test_support.h"
#include "session/assistant_turn.h"
#include "tools/call_decoder.h"

#include <QtTest>

#include <random>

using namespace sinkscope;
using sinkscope::test::modelFromSpec;
using sinkscope::test::randomSampling;
using sinkscope::test::smallSpec;

namespace {

constexpr const char* kTools = R"([
  {"name": "note", "parameters": {"type": "object", "properties": {
      "text": {"type": "string"},
      "code": {"type": "string", "minLength": 2},
      "kind": {"type": "string", "enum": ["todo", "idea"]}},
    "required": ["text"]}}
])";

// The message as the span source holds it, a quote, a line break and a two-byte letter included.
constexpr std::string_view kMessage = "Email Bob the \"plan\" today, ñ\nthanks";

ToolSet parsedTools() {
    ToolsParseResult parsed = parseTools(kTools);
    if (!parsed.tools) qFatal("tools: %s", parsed.errorSummary().c_str());
    return *parsed.tools;
}

// Whether the matcher, restricted to the source's spans, takes `call` whole and complete.
bool takes(const CallGrammar& grammar, const SpanSource& source, std::string_view call) {
    CallMatcher matcher(grammar);
    matcher.restrictStringsToSpans(source.view());
    return matcher.acceptBytes(call) && matcher.isComplete();
}

CallGrammarOptions closedByText() {
    CallGrammarOptions options;
    options.terminator = "</tool_call>";
    return options;
}

std::string noteCall(std::string_view arguments) {
    return "[{\"name\":\"note\",\"arguments\":{" + std::string(arguments) + "}}]";
}

} // namespace

class TestArgumentSpans : public QObject {
    Q_OBJECT
    ToolSet m_tools = parsedTools();
    CallGrammar m_grammar{m_tools, CallGrammarOptions{}};
    SpanSource m_source{kMessage};

private slots:
    void matcherTakesOnlySpans() {
        for (const char* text : {"\"Bob\"", "\"\"", "\"Email Bob the \\\"plan\\\" today\"",
                                 "\"\\\"plan\\\"\"", "\"\xC3\xB1\"", "\"ñ\\nthanks\"", "\"s\""})
            QVERIFY2(takes(m_grammar, m_source, noteCall(std::string("\"text\":") + text)), text);
        // Not in the message, or starting inside an escape ("n" of "\n" then "thanks").
        for (const char* text : {"\"Bobby\"", "\"bob\"", "\"plan\\\"x\"", "\"Bob  the\"",
                                 "\"thanks!\"", "\"\\u0042ob\"", "\"nthanks\""})
            QVERIFY2(!takes(m_grammar, m_source, noteCall(std::string("\"text\":") + text)), text);
        // A string with a minimum length stays free; enums are literals, not spans.
        QVERIFY(takes(m_grammar, m_source, noteCall("\"text\":\"Bob\",\"code\":\"zz9\"")));
        QVERIFY(takes(m_grammar, m_source, noteCall("\"text\":\"Bob\",\"kind\":\"idea\"")));
        // Without a source nothing is restricted.
        QVERIFY(takes(m_grammar, SpanSource(""), noteCall("\"text\":\"Bobby\"")));
        CallMatcher matcher(m_grammar);
        matcher.restrictStringsToSpans(m_source.view());
        QVERIFY(matcher.acceptBytes("[{\"name\":\"note\",\"arguments\":{\"text\":\"Bo"));
        QCOMPARE(matcher.plainStringRoom(), int64_t{-1});
    }

    // Completions from inside a span: the closing quote, after the source's own next bytes
    // where an escape or a UTF-8 letter is open.
    void completionsFinishInsideTheSpan() {
        for (const char* prefix : {"[{\"name\":\"note\",\"arguments\":{\"text\":\"the \\",
                                   "[{\"name\":\"note\",\"arguments\":{\"text\":\"\xC3",
                                   "[{\"name\":\"note\",\"arguments\":{\"text\":\"Bob"}) {
            CallMatcher matcher(m_grammar);
            matcher.restrictStringsToSpans(m_source.view());
            QVERIFY2(matcher.acceptBytes(prefix), prefix);
            const std::string rest = matcher.completion();
            QVERIFY2(matcher.acceptBytes(rest) && matcher.isComplete(), rest.c_str());
            const CallsParseResult parsed = parseCalls(prefix + rest, m_tools);
            QVERIFY2(parsed.ok(), (prefix + rest).c_str());
            const std::string text = parsed.calls.front().arguments["text"];
            QVERIFY2(kMessage.find(text) != std::string_view::npos, text.c_str());
        }
    }

    // The decoder's mask against the matcher on every token of a real vocabulary, along random
    // walks that wrap up at different steps.
    void masksEqualTheMatcherOnEveryToken() {
        const auto model = modelFromSpec(smallSpec(true));
        const TokenTrie trie(model->tokenizer());
        const CallGrammar grammar(m_tools, closedByText());
        for (const uint32_t seed : {1u, 2u, 3u, 4u, 5u, 6u}) {
            CallDecoder decoder(grammar, trie, std::nullopt);
            decoder.restrictStringsToSpansOf(kMessage);
            CallMatcher matcher(grammar);
            matcher.restrictStringsToSpans(m_source.view());
            std::mt19937 random(seed);
            std::vector<uint8_t> allowed(static_cast<size_t>(trie.vocabularySize()));
            for (int step = 0; !decoder.isComplete(); ++step) {
                QVERIFY2(step < 400, "the call did not end");
                if (step == int(seed) * 6) decoder.wrapUp();
                const std::string rest = decoder.wrappingUp() ? matcher.completion() : "";
                decoder.allowedTokens(allowed);
                std::vector<int32_t> choices;
                for (int32_t id = 0; id < trie.vocabularySize(); ++id) {
                    const std::string& bytes = trie.bytes(id);
                    CallMatcher trial = matcher;
                    const bool expected = !bytes.empty() && trial.acceptBytes(bytes) &&
                                          (!decoder.wrappingUp() || rest.starts_with(bytes));
                    QVERIFY2(expected == (allowed[size_t(id)] != 0),
                             qPrintable(QString("seed %1 step %2 token '%3' after '%4'")
                                            .arg(seed)
                                            .arg(step)
                                            .arg(QString::fromStdString(bytes))
                                            .arg(QString::fromStdString(decoder.text()))));
                    if (expected) choices.push_back(id);
                }
                QVERIFY2(!choices.empty(), "dead end");
                const int32_t token = choices[random() % choices.size()];
                QVERIFY(decoder.accept(token));
                QVERIFY(matcher.acceptBytes(trie.bytes(token)));
            }
            std::string text = decoder.text();
            text.resize(text.size() - std::string_view("</tool_call>").size());
            QVERIFY2(parseCalls(text, m_tools).ok(), text.c_str());
        }
    }

    // Sampled turns on a random model: every call's text argument is a span of the message.
    void turnsCopyTheirArguments() {
        const auto model = modelFromSpec(smallSpec(true));
        const ChatTemplate chat(*model);
        const TokenTrie trie(model->tokenizer());
        const CallFormat format = needleCallFormat();
        const ToolBlock block = chat.toolBlock(m_tools);
        const CallGrammar grammar(m_tools, callGrammarOptions(chat, format));
        const TurnContext context{chat, m_tools, grammar, trie, block, format, kMessage};
        SessionOptions options;
        options.kvWindow = 32;
        options.sinks = SinkMode::None;
        Session prompted(*model, options);
        const std::span<const float> last =
            prompted.prefill(chat.userTurn(std::string(kMessage), true).tokens);
        const std::vector<float> logits(last.begin(), last.end());
        for (int seed = 0; seed < 60; ++seed) {
            Session session = prompted;
            RespondOptions respond = randomSampling(uint64_t(seed), 40 + seed % 30);
            respond.argumentsFromMessage = true;
            const ToolResponse r = generateAssistantTurn(session, logits, context, respond);
            QVERIFY2(r.error.empty() && !r.functionCalls.empty(), r.toJson().dump().c_str());
            for (const FunctionCall& call : r.functionCalls) {
                const std::string text = call.arguments["text"];
                QVERIFY2(kMessage.find(text) != std::string_view::npos, text.c_str());
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestArgumentSpans)
#include "test_argument_spans.moc"
