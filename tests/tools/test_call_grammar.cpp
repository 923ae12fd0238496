// Calls that are always well-formed: the grammar's matcher against hand-written calls, numbers
// and strings at their edges, completions, the allowed-token masks against a brute-force check of
// every token, and constrained decoding with random-weight models over every preset and 500
// seeds, whose calls must all parse and validate and only name declared tools.
#include "call_test_support.h"
#include "session/assistant_turn.h"
#include "session/tool_chat.h"
#include "tools/call_decoder.h"

#include <QtTest>

#include <random>
#include <set>

using namespace sinkscope;
using sinkscope::test::modelFromSpec;
using sinkscope::test::randomSampling;
using sinkscope::test::shippedPresets;
using sinkscope::test::smallSpec;

namespace {

constexpr const char* kTools = R"([
  {"name": "set_light", "parameters": {"type": "object", "properties": {
      "room": {"type": "string", "maxLength": 5},
      "on": {"type": "boolean"},
      "level": {"type": "integer", "minimum": -17, "maximum": 305},
      "ratio": {"type": "number", "exclusiveMinimum": 0.5, "maximum": 2.25},
      "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "ab"]}, "minItems": 2},
      "mode": {"const": "auto"},
      "at": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}},
    "required": ["room", "level"]}},
  {"name": "lock", "description": "no parameters"},
  {"name": "lock_all", "parameters": {"type": "object", "properties": {"code": {"type": "integer", "enum": [1, 10, 100]}}}}
])";

ToolSet parsedTools(const char* json) {
    ToolsParseResult parsed = parseTools(json);
    if (!parsed.tools) qFatal("tools: %s", parsed.errorSummary().c_str());
    return *parsed.tools;
}

// Needle's grammar where </tool_call> is text, with or without the leading space.
CallGrammarOptions closedByText(bool leadingSpace) {
    CallGrammarOptions options;
    options.terminator = "</tool_call>";
    options.leadingSpace = leadingSpace;
    return options;
}

// How many bytes of `text` the matcher takes, and whether it is then complete.
std::pair<int, bool> match(const CallGrammar& grammar, std::string_view text) {
    CallMatcher matcher(grammar);
    int taken = 0;
    for (const char c : text) {
        if (!matcher.accept(static_cast<uint8_t>(c))) break;
        ++taken;
    }
    return {taken, matcher.isComplete()};
}

// Random walk over bytes the matcher accepts: a valid prefix of a call.
std::string randomPrefix(const CallGrammar& grammar, std::mt19937& random, int length) {
    CallMatcher matcher(grammar);
    std::string prefix;
    for (int i = 0; i < length && !matcher.isComplete(); ++i) {
        std::vector<uint8_t> accepted;
        for (int byte = 0; byte < 256; ++byte) {
            CallMatcher trial = matcher;
            if (trial.accept(static_cast<uint8_t>(byte)))
                accepted.push_back(static_cast<uint8_t>(byte));
        }
        if (accepted.empty()) qFatal("dead end after %s", prefix.c_str());
        const uint8_t byte = accepted[random() % accepted.size()];
        matcher.accept(byte);
        prefix += static_cast<char>(byte);
    }
    return prefix;
}

// The masks the decoder computes, checked against trying every token on the matcher.
// From step `wrapUpAt` on, the decoder wraps the call up (its masks then allow only prefixes of
// the completion).
void checkMaskWalk(const ToolSet& tools, const CallGrammar& grammar, const TokenTrie& trie,
                   std::optional<int32_t> terminator, uint32_t seed, int wrapUpAt) {
    CallDecoder decoder(grammar, trie, terminator);
    CallMatcher matcher(grammar);
    std::mt19937 random(seed);
    std::vector<uint8_t> allowed(static_cast<size_t>(trie.vocabularySize()));
    for (int step = 0; !decoder.isComplete(); ++step) {
        QVERIFY2(step < 2000, "the call did not end");
        std::string remainder;
        if (step == wrapUpAt) {
            decoder.wrapUp();
            remainder = matcher.completion();
        }
        const int count = decoder.allowedTokens(allowed);
        std::vector<int32_t> choices;
        for (int32_t id = 0; id < trie.vocabularySize(); ++id) {
            bool expected = false;
            if (terminator && id == *terminator) {
                expected = matcher.isComplete();
            } else if (!trie.bytes(id).empty()) {
                CallMatcher trial = matcher;
                expected = trial.acceptBytes(trie.bytes(id));
                if (decoder.wrappingUp()) {
                    // only the completion's prefixes: recompute it from the matcher
                    const std::string rest = matcher.completion();
                    expected = rest.starts_with(trie.bytes(id));
                }
            }
            if (expected != (allowed[static_cast<size_t>(id)] != 0))
                QFAIL(qPrintable(QString("step %1, token %2 '%3': mask %4, matcher %5 (after '%6')")
                                     .arg(step)
                                     .arg(id)
                                     .arg(QString::fromStdString(trie.bytes(id)))
                                     .arg(allowed[static_cast<size_t>(id)])
                                     .arg(expected)
                                     .arg(QString::fromStdString(decoder.text()))));
            if (expected) choices.push_back(id);
        }
        QCOMPARE(count, int(choices.size()));
        QVERIFY2(!choices.empty(), "dead end");
        const int32_t token = choices[random() % choices.size()];
        QVERIFY(decoder.accept(token));
        if (token != terminator) QVERIFY(matcher.acceptBytes(trie.bytes(token)));
    }
    std::string text = decoder.text();
    if (!terminator) text.resize(text.size() - std::string_view("</tool_call>").size());
    const CallsParseResult parsed = parseCalls(text, tools);
    QVERIFY2(parsed.ok(), text.c_str());
}

} // namespace

class TestCallGrammar : public QObject {
    Q_OBJECT
    std::unique_ptr<Model> m_needle = modelFromSpec(smallSpec(true));
    std::unique_ptr<Model> m_plain = modelFromSpec(smallSpec(false));
    ToolSet m_tools = parsedTools(kTools);
    CallGrammar m_grammar{m_tools, CallGrammarOptions{}};
    const CallFormat m_needleFormat = needleCallFormat();

private slots:
    void matchesCalls_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<int>("taken"); // -1: all of it
        QTest::addColumn<bool>("complete");
        QTest::newRow("no parameters")
            << QByteArray(R"([{"name":"lock","arguments":{}}])") << -1 << true;
        QTest::newRow("leading space")
            << QByteArray(R"( [{"name":"lock","arguments":{}}])") << -1 << true;
        QTest::newRow("two spaces") << QByteArray(R"(  [)") << 1 << false;
        QTest::newRow("required only")
            << QByteArray(R"([{"name":"set_light","arguments":{"room":"hall","level":-17}}])") << -1
            << true;
        QTest::newRow("everything")
            << QByteArray("[{\"name\":\"set_light\",\"arguments\":{\"room\":\"h\\u00e9\\\"\","
                          "\"on\":false,\"level\":305,"
                          "\"ratio\":2.25,\"tags\":[\"ab\",\"a\",\"a\"],\"mode\":\"auto\",\"at\":{"
                          "\"x\":-3}}},"
                          "{\"name\":\"lock\",\"arguments\":{}}]")
            << -1 << true;
        QTest::newRow("empty array") << QByteArray("[]") << 1 << false;
        QTest::newRow("undeclared name") << QByteArray(R"([{"name":"lock_door")") << 15 << false;
        QTest::newRow("name prefix")
            << QByteArray(R"([{"name":"lock_all","arguments":{}}])") << -1 << true;
        QTest::newRow("missing required")
            << QByteArray(R"([{"name":"set_light","arguments":{"room":"h"}}])") << 44 << false;
        QTest::newRow("out of order")
            << QByteArray(R"([{"name":"set_light","arguments":{"level":1,"room":"h"}}])") << 35
            << false;
        QTest::newRow("repeated key")
            << QByteArray(R"([{"name":"set_light","arguments":{"room":"h","room":"i"}}])") << 46
            << false;
        QTest::newRow("undeclared key")
            << QByteArray(R"([{"name":"lock","arguments":{"x":1}}])") << 29 << false;
        QTest::newRow("string too long")
            << QByteArray(R"([{"name":"set_light","arguments":{"room":"abcdef")") << 47 << false;
        QTest::newRow("level above")
            << QByteArray(R"([{"name":"set_light","arguments":{"room":"h","level":306)") << 55
            << false;
        QTest::newRow("level below")
            << QByteArray(R"([{"name":"set_light","arguments":{"room":"h","level":-18)") << 55
            << false;
        QTest::newRow("leading zero")
            << QByteArray(R"([{"name":"set_light","arguments":{"room":"h","level":01)") << 54
            << false;
        QTest::newRow("ratio at exclusive bound")
            << QByteArray(R"([{"name":"set_light","arguments":{"room":"h","level":1,"ratio":0.5})")
            << 66 << false;
        QTest::newRow("ratio exponent")
            << QByteArray(R"([{"name":"set_light","arguments":{"room":"h","level":1,"ratio":1e0)")
            << 64 << false;
        QTest::newRow("too few items")
            << QByteArray(R"([{"name":"set_light","arguments":{"room":"h","level":1,"tags":["a"]})")
            << 66 << false;
        QTest::newRow("not in enum")
            << QByteArray(R"([{"name":"set_light","arguments":{"room":"h","level":1,"tags":["b")")
            << 64 << false;
        QTest::newRow("wrong const")
            << QByteArray(
                   R"([{"name":"set_light","arguments":{"room":"h","level":1,"mode":"manual")")
            << 63 << false;
        QTest::newRow("enum prefix ends at delimiter")
            << QByteArray(R"([{"name":"lock_all","arguments":{"code":10}}])") << -1 << true;
        QTest::newRow("enum prefix not a value")
            << QByteArray(R"([{"name":"lock_all","arguments":{"code":1000)") << 43 << false;
        QTest::newRow("whitespace") << QByteArray(R"([{ "name")") << 2 << false;
        QTest::newRow("after the end")
            << QByteArray(R"([{"name":"lock","arguments":{}}]])") << 32 << true;
    }
    void matchesCalls() {
        QFETCH(QByteArray, text);
        QFETCH(int, taken);
        QFETCH(bool, complete);
        const auto [consumed, isComplete] = match(m_grammar, text.toStdString());
        QCOMPARE(consumed, taken < 0 ? int(text.size()) : taken);
        QCOMPARE(isComplete, complete);
    }

    void terminatorTextEndsTheCall() {
        const CallGrammar grammar(m_tools, closedByText(false));
        QCOMPARE(match(grammar, R"([{"name":"lock","arguments":{}}])"), std::make_pair(32, false));
        QCOMPARE(match(grammar, R"([{"name":"lock","arguments":{}}]</tool_call>)"),
                 std::make_pair(44, true));
        QCOMPARE(match(grammar, R"([{"name":"lock","arguments":{}}]</tool_cal>)").second, false);
        QCOMPARE(match(grammar, R"( [)").first, 0); // no leading space allowed here
    }

    // Every integer the grammar completes lies in [-17, 305], in canonical form, and all of them
    // can be written.
    void integersRespectBounds() {
        const ToolSet tools = parsedTools(
            R"([{"name":"f","parameters":{"type":"object","properties":{"n":{"type":"integer","minimum":-17,"maximum":305}},"required":["n"]}}])");
        const CallGrammar grammar(tools);
        const std::string head = R"([{"name":"f","arguments":{"n":)";
        std::set<int> written;
        std::vector<std::string> texts{""};
        for (int length = 0; length < 4; ++length) {
            std::vector<std::string> longer;
            for (const std::string& text : texts)
                for (const char c : std::string_view("-0123456789"))
                    longer.push_back(text + c);
            for (const std::string& text : longer) {
                CallMatcher matcher(grammar);
                if (!matcher.acceptBytes(head + text)) continue;
                if (matcher.acceptBytes("}}]") && matcher.isComplete()) {
                    const int value = std::stoi(text);
                    QVERIFY2(value >= -17 && value <= 305 && std::to_string(value) == text,
                             text.c_str());
                    written.insert(value);
                }
            }
            texts = longer;
        }
        QCOMPARE(int(written.size()), 305 + 17 + 1);
    }

    void numbersRespectBounds_data() {
        QTest::addColumn<QByteArray>("number");
        QTest::addColumn<bool>("valid");
        for (const char* text : {"0.500001", "0.51", "1", "2", "2.25", "2.250000", "0.6"})
            QTest::newRow(text) << QByteArray(text) << true;
        for (const char* text : {"0.5", "0.50", "0.5000001", "2.250001", "2.3", "3", "-1", "0",
                                 "00.6", ".6", "1.", "1.1234567"})
            QTest::newRow(text) << QByteArray(text) << false;
    }
    void numbersRespectBounds() {
        QFETCH(QByteArray, number);
        QFETCH(bool, valid);
        const std::string text =
            R"([{"name":"set_light","arguments":{"room":"h","level":1,"ratio":)" +
            number.toStdString() + "}}]";
        QCOMPARE(match(m_grammar, text).second, valid);
    }

    void stringsAreValidUtf8_data() {
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<bool>("valid");
        QTest::newRow("two-byte") << QByteArray("h\xC3\xA9") << true;
        QTest::newRow("three-byte") << QByteArray("\xE2\x82\xAC") << true;
        QTest::newRow("four-byte") << QByteArray("\xF0\x9F\x98\x80") << true;
        QTest::newRow("escapes") << QByteArray(R"(\n\t\/\\)") << true;
        QTest::newRow("unicode escape") << QByteArray(R"(\u00e9)") << true;
        QTest::newRow("five characters") << QByteArray("\xE2\x82\xAC"
                                                       "abcd")
                                         << true;
        QTest::newRow("six characters") << QByteArray("\\nabcde") << false;
        QTest::newRow("overlong") << QByteArray("\xC0\x80") << false;
        QTest::newRow("surrogate bytes") << QByteArray("\xED\xA0\x80") << false;
        QTest::newRow("past U+10FFFF") << QByteArray("\xF4\x90\x80\x80") << false;
        QTest::newRow("lone continuation") << QByteArray("\x80") << false;
        QTest::newRow("cut sequence") << QByteArray("\xE2\x82") << false;
        QTest::newRow("control") << QByteArray("a\nb") << false;
        QTest::newRow("surrogate escape") << QByteArray(R"(\ud800)") << false;
        QTest::newRow("bad escape") << QByteArray(R"(\x)") << false;
    }
    void stringsAreValidUtf8() {
        QFETCH(QByteArray, content);
        QFETCH(bool, valid);
        const std::string head = R"([{"name":"set_light","arguments":{"room":)";
        const std::string text = head + '"' + content.toStdString() + '"' + R"(,"level":1}}])";
        QCOMPARE(match(m_grammar, text).second, valid);
    }

    // From any valid prefix the completion finishes a call that parses and validates.
    void completionsFinishValidCalls() {
        std::vector<ToolSet> toolSets{m_tools};
        for (const ToolPreset& preset : shippedPresets())
            toolSets.push_back(preset.tools);
        std::mt19937 random(7);
        for (const ToolSet& tools : toolSets) {
            const CallGrammar grammar(tools, closedByText(true));
            for (int walk = 0; walk < 40; ++walk) {
                const std::string prefix =
                    randomPrefix(grammar, random, static_cast<int>(random() % 120));
                CallMatcher matcher(grammar);
                QVERIFY(matcher.acceptBytes(prefix));
                const std::string completion = matcher.completion();
                QVERIFY2(matcher.acceptBytes(completion), (prefix + completion).c_str());
                QVERIFY(matcher.isComplete());
                QVERIFY(matcher.completion().empty());
                std::string call = prefix + completion;
                call.resize(call.size() - std::string_view("</tool_call>").size());
                const CallsParseResult parsed = parseCalls(call, tools);
                if (!parsed.ok())
                    QFAIL(
                        qPrintable(QString::fromStdString(call + " -> " + parsed.errors.front())));
                QCOMPARE(matcher.callIndex(), int(parsed.calls.size()));
            }
        }
    }

    void masksMatchEveryToken_data() {
        QTest::addColumn<bool>("needle");
        QTest::newRow("needle: </tool_call> is a token") << true;
        QTest::newRow("plain: </tool_call> is text") << false;
    }
    void masksMatchEveryToken() {
        QFETCH(bool, needle);
        const Model& model = needle ? *m_needle : *m_plain;
        const ChatTemplate chat(model);
        const TokenTrie trie(model.tokenizer());
        const std::optional<int32_t> terminator = chat.markerToken(ChatMarker::ToolCallEnd);
        QCOMPARE(terminator.has_value(), needle);
        std::vector<ToolSet> toolSets{m_tools};
        for (const ToolPreset& preset : shippedPresets())
            toolSets.push_back(preset.tools);
        uint32_t seed = 0;
        for (const ToolSet& tools : toolSets) {
            const CallGrammar grammar(tools, callGrammarOptions(chat, m_needleFormat));
            for (int walk = 0; walk < 4; ++walk, ++seed)
                checkMaskWalk(tools, grammar, trie, terminator, seed,
                              10 + 25 * walk); // random tokens rarely end a string
        }
    }

    void masksMatchOnA32kVocabulary() {
        SyntheticSpec spec;
        spec.nVocab = 32000;
        spec.nEmbd = 8;
        spec.nLayer = 1;
        spec.nHead = 2;
        spec.nHeadKv = 1;
        spec.nFf = 8;
        const auto model = modelFromSpec(spec);
        const TokenTrie trie(model->tokenizer());
        QVERIFY(trie.vocabularySize() == 32000);
        const ToolSet tools = shippedPresets().front().tools;
        const CallGrammar grammar(tools, closedByText(true));
        checkMaskWalk(tools, grammar, trie, std::nullopt, 11, 40);
    }

    // The issue's property: with random weights, random sampling and every preset, 500 seeds
    // each, every call parses, validates and names a declared tool.
    void constrainedCallsAlwaysValidate_data() {
        QTest::addColumn<int>("preset");
        QTest::addColumn<bool>("needle");
        QTest::addColumn<int>("seeds");
        const std::vector<ToolPreset> presets = shippedPresets();
        for (size_t i = 0; i < presets.size(); ++i)
            QTest::addRow("needle, %s", presets[i].name.c_str()) << int(i) << true << 500;
        for (size_t i = 0; i < presets.size(); ++i)
            QTest::addRow("plain, %s", presets[i].name.c_str()) << int(i) << false << 40;
    }
    void constrainedCallsAlwaysValidate() {
        QFETCH(int, preset);
        QFETCH(bool, needle);
        QFETCH(int, seeds);
        const ToolPreset tools = shippedPresets()[size_t(preset)];
        const test::ConstrainedRunSummary summary = test::runConstrainedCalls(
            needle ? *m_needle : *m_plain, tools, m_needleFormat, seeds, 100);
        QVERIFY2(summary.failure.isEmpty(), qPrintable(summary.failure));
        // the model chose: over 500 seeds a set of several tools saw more than one called
        if (needle)
            QVERIFY2(int(summary.names.size()) >= std::min<int>(int(tools.tools.tools.size()), 2),
                     qPrintable(QString("%1 tools named").arg(summary.names.size())));
    }

    void budgetOfOneStillClosesTheCall() {
        const ChatTemplate chat(*m_needle);
        const TokenTrie trie(m_needle->tokenizer());
        const ToolBlock block = chat.toolBlock(m_tools);
        const CallGrammar grammar(m_tools, callGrammarOptions(chat, m_needleFormat));
        SessionOptions options;
        options.kvWindow = 32;
        options.sinks = SinkMode::None;
        Session session(*m_needle, options);
        const std::span<const float> logits = session.prefill(chat.userTurn("hi", true).tokens);
        const ToolResponse r = generateAssistantTurn(
            session, logits, {chat, m_tools, grammar, trie, block, m_needleFormat},
            randomSampling(3, 1));
        QVERIFY2(r.error.empty(), r.error.c_str());
        QVERIFY(r.callWrappedUp);
        QVERIFY(parseCalls(r.callText, m_tools).ok());
    }

    // Unconstrained, a random model writes anything; the response says what is wrong with it.
    void unconstrainedCallsAreCheckedAfterwards() {
        SessionOptions options;
        options.kvWindow = 32;
        ToolChat chat(*m_needle, options, m_tools);
        int reported = 0;
        for (int seed = 0; seed < 8; ++seed) {
            RespondOptions respond = randomSampling(uint64_t(seed), 100);
            respond.constrained = false;
            respond.maxTokens = 40;
            const ToolResponse r = chat.ask("Lights on in the hall.", respond);
            QCOMPARE(r.type, ResponseType::Call);
            QVERIFY(!r.constrained);
            QCOMPARE(r.maskMicrosPerToken, 0.0);
            if (!r.error.empty())
                ++reported;
            else
                QVERIFY(parseCalls(r.callText, m_tools).ok());
        }
        QVERIFY(reported > 0);
    }

    void policyNoneNeverCalls_data() {
        QTest::addColumn<bool>("needle");
        QTest::newRow("needle") << true;
        QTest::newRow("plain") << false;
    }
    void policyNoneNeverCalls() {
        QFETCH(bool, needle);
        SessionOptions options;
        options.kvWindow = 32;
        ToolChat chat(needle ? *m_needle : *m_plain, options, m_tools);
        for (int seed = 0; seed < 10; ++seed) {
            RespondOptions respond = randomSampling(uint64_t(seed), 100);
            respond.calls = CallPolicy::None;
            respond.maxTokens = 30;
            const ToolResponse r = chat.ask("What is the time?", respond);
            QCOMPARE(r.type, ResponseType::Text);
            QVERIFY(r.functionCalls.empty());
            QCOMPARE(r.text.find("<tool_call>"), std::string::npos);
            const Tokenizer& tokenizer = chat.model().tokenizer();
            for (const ChatMarker marker : {ChatMarker::ImStart, ChatMarker::Tools,
                                            ChatMarker::ToolCall, ChatMarker::ToolResult})
                if (const auto id = chat.chatTemplate().markerToken(marker))
                    QCOMPARE(std::ranges::count(r.tokens, *id), 0);
            QCOMPARE(std::ranges::count(r.tokens, tokenizer.bos()), 0);
        }
    }

    // Attribution: one entry per call, the tools in declaration order, shares summing to 1.
    void attributionSharesSumToOne() {
        SessionOptions options;
        options.kvWindow = 32;
        options.probe = AttentionProbe{true, -1, -1};
        ToolChat chat(*m_needle, options, m_tools);
        const ToolResponse r = chat.ask("Lights on.", randomSampling(5, 60));
        QVERIFY2(r.error.empty(), r.error.c_str());
        QCOMPARE(r.attribution.size(), r.functionCalls.size());
        for (const CallAttribution& call : r.attribution) {
            QCOMPARE(call.tools.size(), m_tools.tools.size());
            double total = call.other;
            for (size_t i = 0; i < call.tools.size(); ++i) {
                QCOMPARE(call.tools[i].tool, m_tools.tools[i].name);
                QVERIFY(call.tools[i].share > 0 && call.tools[i].share < 1);
                total += call.tools[i].share;
            }
            QVERIFY(std::abs(total - 1.0) < 1e-4);
            QVERIFY(call.steps > 0);
        }
        QVERIFY(r.confidence > 0 && r.confidence <= 1);
        SessionOptions noProbe;
        noProbe.kvWindow = 32;
        ToolChat plain(*m_needle, noProbe, m_tools);
        QVERIFY(plain.ask("Lights on.", randomSampling(5, 60)).attribution.empty());
    }
};

QTEST_GUILESS_MAIN(TestCallGrammar)
#include "test_call_grammar.moc"
