// eval-tools: exact match of a model's tool calls over a suite of long conversations (issue 6,
// "Evaluation"), each conversation one ToolChat session whose window slides across its turns.
//
// --sinks on pins the tool block (BOS through </tools>) as sinks: it stays in the cache however
// long the conversation grows. --sinks off is the control: the same conversation, window W and
// position mode, but nothing is pinned (SinkMode::None): BOS and the tool block are prefilled as
// ordinary tokens and leave the cache like any other token once W newer ones have come, so a late
// turn can see the tools only while they are still in the window. sink_slots is 0 then, and
// tool_block_resident says how much of the block was still there at the end.
#include "cli_common.h"
#include "commands.h"
#include "eval/tool_eval.h"
#include "run_tools.h"
#include "session/session_defaults.h"

#include <chrono>
#include <cstdio>
#include <iostream>

namespace sinkscope::cli {

namespace {

constexpr int64_t kMaxConversations = 1 << 24;

constexpr OptionSpec kOptions[] = {
    {"--model"},           {"--suite"},          {"--sinks"},
    {"--constrained"},     {"--call"},           {"--n-predict"},
    {"--max-call-tokens"}, {"--limit"},          {"--kv-window"},
    {"--kv-bits"},         {"--positions"},      {"--threads"},
    {"--json", false},     {"--verbose", false}, {"--arguments-from-message"}};

constexpr Choice<bool> kSinksChoices[] = {{"on", true}, {"off", false}};

EvalSuite readSuite(const std::string& path, int64_t limit) {
    EvalSuite suite = parseEvalSuite(readWholeFile(path, "suite"));
    if (!suite.ok()) {
        std::string message = "suite '" + path + "': " + suite.errors.front();
        if (suite.errors.size() > 1)
            message += " (and " + std::to_string(suite.errors.size() - 1) + " more)";
        throw InputError(message);
    }
    if (limit > 0 && static_cast<size_t>(limit) < suite.conversations.size())
        suite.conversations.resize(static_cast<size_t>(limit));
    return suite;
}

SessionOptions evalSessionOptions(const Model& model, const ParsedArgs& args, bool pinTools) {
    SessionOptions options = cacheOptionsFromArgs(args, defaultSessionOptions(model.config()));
    options.sinks = pinTools ? SinkMode::ToolsAndBos : SinkMode::None;
    return options;
}

// One line per turn on stderr: what was expected and what the model did.
void printTurns(const EvalConversation& conversation, const ConversationOutcome& outcome) {
    for (const TurnOutcome& turn : outcome.turns) {
        const EvalTurn& expected = conversation.turns[static_cast<size_t>(turn.turn)];
        std::cerr << "line " << conversation.line << " turn " << turn.turn + 1 << " @"
                  << turn.position << (turn.exact ? " exact" : " wrong") << ": expected "
                  << callsJson(expected.answers) << ", got "
                  << (turn.called ? "<tool_call>" + turn.callText : std::string("no call"));
        if (!turn.error.empty()) std::cerr << " (" << turn.error << ')';
        std::cerr << '\n';
    }
}

// null where no turn qualifies
nlohmann::ordered_json optionalJson(const std::optional<double>& value) {
    return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json();
}

nlohmann::ordered_json reportJson(const EvalSummary& s, const SessionOptions& options,
                                  const RespondOptions& respond, double seconds) {
    return {
        {"conversations", s.conversations},
        {"turns", s.turns},
        {"exact_match", optionalJson(s.exactMatch)},
        {"exact_match_first", optionalJson(s.exactMatchFirst)},
        {"exact_match_late", optionalJson(s.exactMatchLate)},
        {"late_turns", s.lateTurns},
        {"late_mean_position", optionalJson(s.lateMeanPosition)},
        {"call_turns", s.callTurns},
        {"call_exact_match", optionalJson(s.callExactMatch)},
        {"call_names_match", optionalJson(s.callNamesMatch)},
        {"no_call_turns", s.noCallTurns},
        {"no_call_accuracy", optionalJson(s.noCallAccuracy)},
        {"sinks", options.sinks == SinkMode::ToolsAndBos ? "on" : "off"},
        {"sink_slots", s.maxSinkSlots},
        {"tool_block_resident", s.toolBlockResident},
        {"evictions", s.evictions},
        {"effective_window", s.effectiveWindow},
        {"positions", positionsText(options.positions)},
        {"kv_bits", options.kvBits},
        {"constrained", respond.constrained},
        {"arguments_from_message", respond.argumentsFromMessage},
        {"call_policy", callPolicyName(respond.calls)},
        {"generated_tokens", s.generatedTokens},
        {"decode_tokens_per_s", tokensPerSecond(s.generatedTokens, s.decodeSeconds)},
        {"prefill_tokens_per_s", tokensPerSecond(s.prefillTokens, s.prefillSeconds)},
        {"seconds", seconds},
        {"peak_rss_bytes", peakRssBytes()},
    };
}

std::string percent(const std::optional<double>& rate) {
    if (!rate) return "-";
    char text[16];
    std::snprintf(text, sizeof text, "%5.1f%%", *rate * 100);
    return text;
}

void printTable(const EvalSummary& s, const SessionOptions& options, double seconds) {
    std::cout << s.conversations << " conversations, " << s.turns << " turns, sinks "
              << (options.sinks == SinkMode::ToolsAndBos ? "on" : "off") << ", window "
              << s.effectiveWindow << ", " << positionsText(options.positions) << " positions\n"
              << "exact match        " << percent(s.exactMatch) << '\n'
              << "  turn 1           " << percent(s.exactMatchFirst) << '\n'
              << "  turns " << kLateTurn << "+        " << percent(s.exactMatchLate) << "  ("
              << s.lateTurns << " turns, mean position "
              << static_cast<int64_t>(s.lateMeanPosition.value_or(0)) << ")\n"
              << "calls exact        " << percent(s.callExactMatch) << "  (" << s.callTurns
              << " turns; names right " << percent(s.callNamesMatch) << ")\n"
              << "no call right      " << percent(s.noCallAccuracy) << "  (" << s.noCallTurns
              << " turns)\n"
              << "decode             "
              << static_cast<int64_t>(tokensPerSecond(s.generatedTokens, s.decodeSeconds))
              << " tokens/s, " << static_cast<int64_t>(seconds) << " s in all\n";
}

} // namespace

int evalToolsCommand(CommandArgs args) {
    const ParsedArgs parsed = ParsedArgs::parse("eval-tools", kOptions, args);
    const std::string modelPath = parsed.required("--model");
    const std::string suitePath = parsed.required("--suite");
    const bool pinTools =
        parseChoice("--sinks", parsed.value("--sinks").value_or("on"), kSinksChoices);
    SamplerOptions greedy;
    greedy.greedy = true;
    const RespondOptions respond = respondOptionsFromArgs(parsed, greedy);
    const int64_t limit = parsed.integer("--limit", 0, 0, kMaxConversations);
    cacheOptionsFromArgs(parsed, SessionOptions{}); // usage errors before any file is read
    const bool verbose = parsed.has("--verbose");

    const EvalSuite suite = readSuite(suitePath, limit);
    const std::unique_ptr<Model> model = loadModel(modelPath);
    const SessionOptions options = evalSessionOptions(*model, parsed, pinTools);
    const auto start = std::chrono::steady_clock::now();
    EvalTally tally;
    for (const EvalConversation& conversation : suite.conversations) {
        ConversationOutcome outcome;
        try {
            outcome = runEvalConversation(*model, options, conversation, respond);
        } catch (const std::invalid_argument& rejected) {
            throw UsageError(std::string("session options rejected: ") + rejected.what());
        }
        if (verbose) printTurns(conversation, outcome);
        tally.add(outcome);
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const EvalSummary summary = tally.summary();
    if (parsed.has("--json"))
        printJson(reportJson(summary, options, respond, seconds));
    else
        printTable(summary, options, seconds);
    return 0;
}

} // namespace sinkscope::cli
