// The call formats of real chat templates: the calls the reference templates render
// (shared/reference/templates/renders.json) are written back byte for byte, parse to the
// conversation's calls, and are exactly what the grammar accepts, with the markers as text or as
// tokens; calls a template would not write are rejected with clear errors; and from any prefix
// the grammar accepts, its completion finishes calls that parse and validate.
#include "call_test_support.h"
#include "test_support.h"
#include "tools/call_matcher.h"

#include <QFile>
#include <QtTest>

#include <random>

using namespace sinkscope;
using Json = nlohmann::ordered_json;

Q_DECLARE_METATYPE(sinkscope::CallFormat)

namespace {

constexpr const char* kTools = R"([
  {"name": "set_light", "parameters": {"type": "object", "properties": {
      "room": {"type": "string"}, "on": {"type": "boolean"},
      "brightness": {"type": "integer", "minimum": 0, "maximum": 100}},
    "required": ["room", "on"]}},
  {"name": "set_thermostat", "parameters": {"type": "object", "properties": {
      "temperature": {"type": "number"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
      "days": {"type": "array", "items": {"type": "integer"}}},
    "required": ["temperature"]}}
])";

ToolSet parsedTools(const Json& value) {
    ToolsParseResult parsed = parseToolsValue(value);
    if (!parsed.tools) qFatal("tools: %s", parsed.errorSummary().c_str());
    return *parsed.tools;
}

const char* firstError(const CallsParseResult& parsed) {
    return parsed.errors.empty() ? "no error" : parsed.errors.front().c_str();
}

std::optional<Json> readShared(const QString& relative) {
    QFile file(test::sharedPath(relative));
    if (!file.open(QIODevice::ReadOnly)) return std::nullopt;
    return Json::parse(file.readAll().toStdString());
}

// The grammar for a format with its markers as text, or as tokens.
CallGrammar grammarFor(const ToolSet& tools, const CallFormat& format, bool markerTokens) {
    const std::optional<int32_t> token =
        markerTokens ? std::optional<int32_t>(0) : std::nullopt; // any id: only its presence counts
    return CallGrammar(tools, callGrammarOptions(format, CallMarkerTokens{token, token}));
}

// Feeds a whole reply (callsText's shape, its first open marker already read by the caller):
// marker texts where the grammar wants a marker token, bytes otherwise. Returns how many bytes
// were taken and whether the reply may stop there.
std::pair<size_t, bool> matchReply(const CallGrammar& grammar, std::string_view body) {
    CallMatcher matcher(grammar);
    const CallFormat& format = grammar.format();
    size_t at = 0;
    while (at < body.size()) {
        if (matcher.awaits(CallMarker::Close) && body.substr(at).starts_with(format.close)) {
            matcher.acceptMarker(CallMarker::Close);
            at += format.close.size();
        } else if (matcher.awaits(CallMarker::Open) && body.substr(at).starts_with(format.open)) {
            matcher.acceptMarker(CallMarker::Open);
            at += format.open.size();
        } else if (matcher.accept(static_cast<uint8_t>(body[at]))) {
            ++at;
        } else {
            break;
        }
    }
    return {at, matcher.mayStop()};
}

// JsonList's close token lies outside its grammar: the decoder takes it after ']'.
std::string grammarText(const std::string& text, const CallFormat& format, bool markerTokens) {
    std::string body = text.substr(format.open.size());
    if (markerTokens && format.syntax == CallSyntax::JsonList)
        body.resize(body.size() - format.close.size());
    return body;
}

void addFormatColumns() {
    QTest::addColumn<CallFormat>("format");
    QTest::addColumn<bool>("markerTokens");
    const std::pair<const char*, CallFormat> formats[] = {{"needle", needleCallFormat()},
                                                          {"smollm", smolLmCallFormat()},
                                                          {"qwen", qwenCallFormat()},
                                                          {"llama-3", llama3CallFormat()}};
    for (const auto& [name, format] : formats)
        for (const bool tokens : {false, true})
            QTest::addRow("%s, markers as %s", name, tokens ? "tokens" : "text")
                << format << tokens;
}

// A random walk through the grammar: bytes it accepts, marker texts where a marker token is due,
// and (where the reply may stop) stopping at random. Returns the text and the matcher after it.
std::pair<std::string, CallMatcher> randomReply(const CallGrammar& grammar, std::mt19937& random,
                                                int length) {
    CallMatcher matcher(grammar);
    std::string text;
    for (int i = 0; i < length && !matcher.isComplete(); ++i) {
        if (matcher.mayStop() && random() % 4 == 0) break;
        bool marker = false;
        for (const CallMarker m : {CallMarker::Open, CallMarker::Close})
            if (matcher.acceptMarker(m)) {
                text += m == CallMarker::Open ? grammar.format().open : grammar.format().close;
                marker = true;
            }
        if (marker) continue;
        std::vector<uint8_t> accepted;
        for (int byte = 0; byte < 256; ++byte) {
            CallMatcher trial = matcher;
            if (trial.accept(static_cast<uint8_t>(byte)))
                accepted.push_back(static_cast<uint8_t>(byte));
        }
        if (accepted.empty()) qFatal("dead end after %s", text.c_str());
        const uint8_t byte = accepted[random() % accepted.size()];
        matcher.accept(byte);
        text += static_cast<char>(byte);
    }
    return {text, matcher};
}

} // namespace

class TestCallFormats : public QObject {
    Q_OBJECT
    ToolSet m_tools = parsedTools(Json::parse(kTools));
    std::vector<FunctionCall> m_twoCalls{
        {"set_light", Json{{"room", "kitchen"}, {"on", true}}},
        {"set_thermostat", Json{{"temperature", 21.5}, {"days", Json::array({1, 2})}}}};

private slots:
    void names() {
        QCOMPARE(callSyntaxName(CallSyntax::JsonList), "json-list");
        QCOMPARE(callSyntaxName(CallSyntax::TaggedObjects), "tagged-objects");
        QCOMPARE(callSyntaxName(CallSyntax::BareObject), "bare-object");
        QVERIFY(needleCallFormat() == CallFormat{});
    }

    // The assistant turn with a call in renders.json, per template.
    void rendersRoundTrip_data() {
        QTest::addColumn<QString>("templateName");
        QTest::addColumn<CallFormat>("format");
        QTest::addColumn<QString>("header"); // what the assistant's turn starts with
        QTest::addColumn<QString>("end");    // what closes it
        QTest::newRow("chatml-tools (SmolLM)")
            << "chatml-tools" << smolLmCallFormat() << "<|im_start|>assistant\n"
            << "<|im_end|>";
        QTest::newRow("qwen2.5") << "qwen2.5" << qwenCallFormat() << "<|im_start|>assistant\n"
                                 << "<|im_end|>";
        QTest::newRow("hermes-2-pro")
            << "hermes-2-pro" << qwenCallFormat() << "<|im_start|>assistant\n"
            << "<|im_end|>";
        QTest::newRow("llama-3.2") << "llama-3.2" << llama3CallFormat()
                                   << "<|start_header_id|>assistant<|end_header_id|>\n\n"
                                   << "<|eot_id|>";
    }
    void rendersRoundTrip() {
        QFETCH(QString, templateName);
        QFETCH(CallFormat, format);
        QFETCH(QString, header);
        QFETCH(QString, end);
        const std::optional<Json> renders = readShared("reference/templates/renders.json");
        const std::optional<Json> conversations =
            readShared("reference/templates/conversations.json");
        if (!renders || !conversations)
            QSKIP(qPrintable("reference templates not found at " +
                             test::sharedPath("reference/templates")));
        const Json* conversation = nullptr;
        for (const Json& c : *conversations)
            if (c["id"] == "tools-multiturn") conversation = &c;
        QVERIFY(conversation);
        const ToolSet tools = parsedTools((*conversation)["tools"]);
        std::vector<FunctionCall> calls;
        for (const Json& message : (*conversation)["messages"])
            if (message.contains("tool_calls"))
                for (const Json& call : message["tool_calls"])
                    calls.push_back({call["function"]["name"], call["function"]["arguments"]});
        QCOMPARE(int(calls.size()), 1);
        std::string rendered;
        for (const Json& c : (*renders)["cases"])
            if (c["template"] == templateName.toStdString() &&
                c["conversation"] == "tools-multiturn")
                rendered = c["rendered"];
        QVERIFY(!rendered.empty());
        // The template's call: after the assistant header that opens the call, up to the end.
        const std::string opening =
            header.toStdString() + (format.open.empty() ? std::string("{") : format.open);
        const size_t start = rendered.find(opening);
        QVERIFY(start != std::string::npos);
        const size_t from = start + header.size();
        const size_t stop = rendered.find(end.toStdString(), from);
        QVERIFY(stop != std::string::npos);
        const std::string callText = rendered.substr(from, stop - from);

        QCOMPARE(callsText(calls, format), callText);
        const CallsParseResult parsed = parseCallsText(callText, tools, format);
        QVERIFY2(parsed.ok(), firstError(parsed));
        QCOMPARE(int(parsed.calls.size()), 1);
        QCOMPARE(parsed.calls[0].name, calls[0].name);
        QCOMPARE(parsed.calls[0].arguments, calls[0].arguments);
        for (const bool markerTokens : {false, true}) {
            const CallGrammar grammar = grammarFor(tools, format, markerTokens);
            const std::string body = grammarText(callText, format, markerTokens);
            QCOMPARE(matchReply(grammar, body), std::make_pair(body.size(), true));
            // compact JSON where the template writes it spaced is not the model's format
            CallFormat compact = format;
            compact.spaced = false;
            const std::string other = grammarText(callsText(calls, compact), format, markerTokens);
            QVERIFY(!matchReply(grammar, other).second);
        }
    }

    // Two calls, as each template writes them (computed by hand from the template sources).
    void writesSeveralCalls_data() {
        QTest::addColumn<CallFormat>("format");
        QTest::addColumn<QByteArray>("expected");
        const char* light = R"("name": "set_light", "arguments": {"room": "kitchen", "on": true})";
        const char* heat =
            R"("name": "set_thermostat", "arguments": {"temperature": 21.5, "days": [1, 2]})";
        QTest::newRow("needle")
            << needleCallFormat()
            << QByteArray(R"(<tool_call>[{"name":"set_light","arguments":{"room":"kitchen","on":)"
                          R"(true}},{"name":"set_thermostat","arguments":{"temperature":21.5,)"
                          R"("days":[1,2]}}]</tool_call>)");
        QTest::newRow("smollm") << smolLmCallFormat()
                                << QByteArray("<tool_call>[{") + light + "}, {" + heat +
                                       "}]</tool_call>";
        QTest::newRow("qwen") << qwenCallFormat()
                              << QByteArray("<tool_call>\n{") + light +
                                     "}\n</tool_call>\n<tool_call>\n{" + heat + "}\n</tool_call>";
    }
    void writesSeveralCalls() {
        QFETCH(CallFormat, format);
        QFETCH(QByteArray, expected);
        const std::string text = callsText(m_twoCalls, format);
        QCOMPARE(QByteArray::fromStdString(text), expected);
        const CallsParseResult parsed = parseCallsText(text, m_tools, format);
        QVERIFY2(parsed.ok(), firstError(parsed));
        QCOMPARE(int(parsed.calls.size()), 2);
        QCOMPARE(parsed.calls[1].arguments, m_twoCalls[1].arguments);
        for (const bool markerTokens : {false, true}) {
            const std::string body = grammarText(text, format, markerTokens);
            const auto [taken, mayStop] =
                matchReply(grammarFor(m_tools, format, markerTokens), body);
            QCOMPARE(taken, body.size());
            QVERIFY(mayStop);
        }
        QCOMPARE(QByteArray::fromStdString(callsBody(m_twoCalls, format)),
                 expected.mid(int(format.open.size()),
                              expected.size() - int(format.open.size() + format.close.size())));
    }

    void rejectsWhatTheTemplateWouldNotWrite_data() {
        QTest::addColumn<CallFormat>("format");
        QTest::addColumn<QByteArray>("text");  // markers included
        QTest::addColumn<QByteArray>("error"); // a part of the first error
        const CallFormat list = smolLmCallFormat();
        const CallFormat tagged = qwenCallFormat();
        const CallFormat bare = llama3CallFormat();
        QTest::newRow("list: an object, not a list")
            << list
            << QByteArray(R"(<tool_call>{"name": "set_light", "arguments": {}}</tool_call>)")
            << QByteArray("expected a JSON array of calls, got object");
        QTest::newRow("list: no markers")
            << list << QByteArray(R"([{"name": "set_light", "arguments": {}}])")
            << QByteArray(R"(expected the calls between "<tool_call>" and "</tool_call>")");
        QTest::newRow("list: undeclared tool")
            << list << QByteArray(R"(<tool_call>[{"name": "fly", "arguments": {}}]</tool_call>)")
            << QByteArray(R"(/0/name: "fly" is not a declared tool)");
        QTest::newRow("tagged: a list in a block")
            << tagged
            << QByteArray("<tool_call>\n[{\"name\": \"set_light\", \"arguments\": {\"room\": "
                          "\"a\", \"on\": true}}]\n</tool_call>")
            << QByteArray("/0: expected a call object, got array");
        QTest::newRow("tagged: broken second block")
            << tagged
            << QByteArray("<tool_call>\n{\"name\": \"set_light\", \"arguments\": {\"room\": \"a\", "
                          "\"on\": true}}\n</tool_call>\n<tool_call>\n{\"name\": \n</tool_call>")
            << QByteArray("block 1: invalid JSON");
        QTest::newRow("tagged: Llama's key")
            << tagged
            << QByteArray(
                   "<tool_call>\n{\"name\": \"set_light\", \"parameters\": {}}\n</tool_call>")
            << QByteArray(R"(/0: missing "arguments")");
        QTest::newRow("tagged: a wrong argument")
            << tagged
            << QByteArray("<tool_call>\n{\"name\": \"set_light\", \"arguments\": {\"room\": 1, "
                          "\"on\": true}}\n</tool_call>")
            << QByteArray("/0/arguments/room");
        QTest::newRow("bare: two calls")
            << bare
            << QByteArray(R"({"name": "set_light", "parameters": {"room": "a", "on": true}})"
                          R"({"name": "set_light", "parameters": {"room": "b", "on": true}})")
            << QByteArray("invalid JSON");
        QTest::newRow("bare: Qwen's key")
            << bare
            << QByteArray(R"({"name": "set_light", "arguments": {"room": "a", "on": true}})")
            << QByteArray(R"(the call: missing "parameters")");
        QTest::newRow("bare: a list")
            << bare << QByteArray(R"([{"name": "set_light", "parameters": {}}])")
            << QByteArray("the call: expected a call object, got array");
        QTest::newRow("bare: missing a required argument")
            << bare << QByteArray(R"({"name": "set_light", "parameters": {"room": "a"}})")
            << QByteArray("/parameters");
        CallFormat single = tagged;
        single.maxCalls = 1;
        QTest::newRow("tagged, one call only: two blocks")
            << single
            << QByteArray("<tool_call>\n{\"name\": \"set_thermostat\", \"arguments\": "
                          "{\"temperature\": 1}}\n</tool_call>\n<tool_call>\n{\"name\": "
                          "\"set_thermostat\", \"arguments\": {\"temperature\": 2}}\n</tool_call>")
            << QByteArray("2 calls where the format takes at most 1");
    }
    void rejectsWhatTheTemplateWouldNotWrite() {
        QFETCH(CallFormat, format);
        QFETCH(QByteArray, text);
        QFETCH(QByteArray, error);
        const CallsParseResult parsed = parseCallsText(text.toStdString(), m_tools, format);
        QVERIFY(!parsed.ok());
        QVERIFY2(parsed.errors.front().find(error.toStdString()) != std::string::npos,
                 firstError(parsed));
        // and the grammar never accepts it whole
        if (text.startsWith(QByteArray::fromStdString(format.open))) {
            const std::string body = text.toStdString().substr(format.open.size());
            const auto [taken, mayStop] = matchReply(grammarFor(m_tools, format, false), body);
            QVERIFY(taken < body.size() || !mayStop);
        }
    }

    // From any prefix the grammar accepts, its completion (and the marker tokens due on the way)
    // finishes calls that parse and validate, over the shipped presets.
    void completionsFinishValidCalls_data() { addFormatColumns(); }
    void completionsFinishValidCalls() {
        QFETCH(CallFormat, format);
        QFETCH(bool, markerTokens);
        std::vector<ToolSet> toolSets{m_tools};
        for (const ToolPreset& preset : test::shippedPresets())
            toolSets.push_back(preset.tools);
        std::mt19937 random(11);
        int severalCalls = 0;
        for (const ToolSet& tools : toolSets) {
            const CallGrammar grammar = grammarFor(tools, format, markerTokens);
            for (int walk = 0; walk < 30; ++walk) {
                auto [text, matcher] = randomReply(grammar, random, int(random() % 400));
                for (int guard = 0; !matcher.mayStop(); ++guard) {
                    QVERIFY(guard < 4);
                    const std::string completion = matcher.completion();
                    QVERIFY2(matcher.acceptBytes(completion), (text + completion).c_str());
                    text += completion;
                    for (const CallMarker m : {CallMarker::Open, CallMarker::Close})
                        if (matcher.acceptMarker(m))
                            text += m == CallMarker::Open ? format.open : format.close;
                }
                QVERIFY(matcher.completion().empty());
                if (format.syntax != CallSyntax::JsonList || !markerTokens)
                    text.resize(text.size() - format.close.size());
                const CallsParseResult parsed = parseCalls(text, tools, format);
                if (!parsed.ok())
                    QFAIL(
                        qPrintable(QString::fromStdString(text + " -> " + parsed.errors.front())));
                QCOMPARE(matcher.callIndex(), int(parsed.calls.size()));
                if (parsed.calls.size() > 1) ++severalCalls;
            }
        }
        if (format.maxCalls != 1) QVERIFY(severalCalls > 0);
    }
};

QTEST_GUILESS_MAIN(TestCallFormats)
#include "test_call_formats.moc"
