// Constrained calls in every format on a random-weight llama model (format_turns.h), and how a
// Llama-3 reply opens its call: with its first token, when that token begins with '{'.
#include "format_turns.h"

using namespace sinkscope;

class TestFormatTurns : public QObject {
    Q_OBJECT
    std::unique_ptr<Model> m_withMarkers = test::tinyModel("llama", true);
    std::unique_ptr<Model> m_plain = test::tinyModel("llama", false);

private slots:
    void constrainedCallsAlwaysValidate_data() { test::addFormatTurnRows(); }
    void constrainedCallsAlwaysValidate() {
        QFETCH(CallFormat, format);
        QFETCH(bool, markerTokens);
        test::checkFormatTurns(markerTokens ? *m_withMarkers : *m_plain, format, markerTokens);
    }

    // Auto: a reply is a call exactly when its first token begins with '{', and then it is valid;
    // None: no reply begins with '{'.
    void bareCallsOpenWithTheFirstToken_data() {
        QTest::addColumn<int>("policy");
        QTest::newRow("auto") << int(CallPolicy::Auto);
        QTest::newRow("none") << int(CallPolicy::None);
    }
    void bareCallsOpenWithTheFirstToken() {
        QFETCH(int, policy);
        const CallFormat format = llama3CallFormat();
        const Model& model = *m_plain;
        const ToolPreset preset = test::shippedPresets().front();
        const ChatTemplate chat(model);
        const TokenTrie trie(model.tokenizer());
        const ToolBlock block = chat.toolBlock(preset.tools);
        const CallGrammar grammar(preset.tools, callGrammarOptions(chat, format));
        const TurnContext context{chat, preset.tools, grammar, trie, block, format};
        SessionOptions options;
        options.kvWindow = 32;
        options.sinks = SinkMode::None;
        Session prompted(model, options);
        prompted.prefill(block.tokens);
        const std::span<const float> last =
            prompted.prefill(chat.userTurn(preset.query, true).tokens);
        std::vector<float> logits(last.begin(), last.end());
        // the '{' tokens made likely, so that Auto opens calls
        for (int32_t id = 0; id < trie.vocabularySize(); ++id)
            if (trie.bytes(id).starts_with('{')) logits[size_t(id)] += 8;
        int calls = 0;
        for (int seed = 0; seed < 40; ++seed) {
            Session session = prompted;
            RespondOptions respond = test::randomSampling(uint64_t(seed), 60);
            respond.calls = CallPolicy(policy);
            respond.maxTokens = 60;
            const ToolResponse r = generateAssistantTurn(session, logits, context, respond);
            QVERIFY(!r.tokens.empty());
            const bool opened = trie.bytes(r.tokens.front()).starts_with('{');
            QCOMPARE(r.type == ResponseType::Call, opened);
            if (CallPolicy(policy) == CallPolicy::None) QVERIFY(!opened);
            if (!opened) continue;
            ++calls;
            QVERIFY2(r.error.empty(), r.error.c_str());
            QVERIFY(r.text.empty());
            QVERIFY(parseCalls(r.callText, preset.tools, format).ok());
            QCOMPARE(int(r.functionCalls.size()), 1);
        }
        if (CallPolicy(policy) == CallPolicy::Auto) QVERIFY(calls > 0);
    }
};

QTEST_GUILESS_MAIN(TestFormatTurns)
#include "test_format_turns_llama.moc"
