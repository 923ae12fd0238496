// What the call tests share: random sampling, and the property (constrained calls always
// parse, validate and name declared tools) run over many seeds on one model, one preset and one
// format.
#pragma once

#include "session/assistant_turn.h"
#include "tool_test_support.h"

#include <QString>

#include <set>
#include <string>

namespace sinkscope::test {

inline RespondOptions randomSampling(uint64_t seed, int maxCallTokens) {
    RespondOptions options;
    options.calls = CallPolicy::Required;
    options.maxCallTokens = maxCallTokens;
    options.sampler.temperature = 1.0f;
    options.sampler.topK = 0; // the whole allowed set
    options.sampler.topP = 1.0f;
    options.sampler.seed = seed;
    return options;
}

struct ConstrainedRunSummary {
    QString failure;             // empty when every seed's calls parsed and validated
    std::set<std::string> names; // the tools called
    int turnsWithSeveralCalls = 0;
    int wrappedUp = 0; // turns whose call hit its budget
};

// Required, constrained calls with random sampling on `model` for seeds [0, seeds): each turn must
// be a call without error whose text parses and validates in `format` and whose calls name
// declared tools, at most maxCalls of them. Seed s has a call budget of maxCallTokens tokens, or
// with a spread, of minCallTokens + s % (maxCallTokens - minCallTokens + 1): calls wrapped up
// at every length.
inline ConstrainedRunSummary runConstrainedCalls(const Model& model, const ToolPreset& preset,
                                                 const CallFormat& format, int seeds,
                                                 int maxCallTokens, int minCallTokens = -1) {
    const ChatTemplate chat(model);
    const TokenTrie trie(model.tokenizer());
    const ToolSet& tools = preset.tools;
    const ToolBlock block = chat.toolBlock(tools);
    const CallGrammar grammar(tools, callGrammarOptions(chat, format));
    const TurnContext context{chat, tools, grammar, trie, block, format};
    // The grammar is under test, not the sinks: a small unpinned window keeps steps cheap.
    SessionOptions options;
    options.kvWindow = 32;
    options.kvBits = 32;
    options.sinks = SinkMode::None;
    Session prompted(model, options);
    prompted.prefill(block.tokens);
    const std::span<const float> last = prompted.prefill(chat.userTurn(preset.query, true).tokens);
    const std::vector<float> logits(last.begin(), last.end());
    ConstrainedRunSummary summary;
    for (int seed = 0; seed < seeds; ++seed) {
        Session session = prompted;
        const int budget = minCallTokens < 0
                               ? maxCallTokens
                               : minCallTokens + seed % (maxCallTokens - minCallTokens + 1);
        const ToolResponse r =
            generateAssistantTurn(session, logits, context, randomSampling(uint64_t(seed), budget));
        const CallsParseResult parsed = parseCalls(r.callText, tools, format);
        const bool declared = std::ranges::all_of(r.functionCalls, [&](const FunctionCall& call) {
            return tools.find(call.name) != nullptr;
        });
        const bool withinMax =
            format.maxCalls == 0 || int(r.functionCalls.size()) <= format.maxCalls;
        if (!r.error.empty() || r.type != ResponseType::Call || r.functionCalls.empty() ||
            !parsed.ok() || !declared || !withinMax) {
            summary.failure = QString("seed %1: %2 (call text %3)")
                                  .arg(seed)
                                  .arg(QString::fromStdString(r.toJson().dump()))
                                  .arg(QString::fromStdString(nlohmann::json(r.callText).dump()));
            return summary;
        }
        for (const FunctionCall& call : r.functionCalls)
            summary.names.insert(call.name);
        if (r.functionCalls.size() > 1) ++summary.turnsWithSeveralCalls;
        if (r.callWrappedUp) ++summary.wrappedUp;
    }
    return summary;
}

} // namespace sinkscope::test
