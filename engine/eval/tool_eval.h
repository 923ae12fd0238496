// Evaluation of tool calling over whole conversations (issue 6, "Evaluation"): a suite of
// conversations in Needle's JSONL format, each run as one ToolChat session (the tools pinned as
// sinks, or not, as the session options say; the window slides across turns), scored by exact
// match per turn.
//
// Suite format, one conversation per line (blank lines are skipped):
//   {"tools": [...], "system": "optional facts",
//    "turns": [{"query": "...", "answers": [{"name": "...", "arguments": {...}}],
//               "result": {...}}, ...]}
// `answers` [] means the turn must be answered without a call; `result` (default
// {"status":"ok"}) is fed back as the tool result after a turn in which the model called.
//
// A turn is exact when the model made the expected calls, in order, each with the expected name
// and arguments equal under sameJson; for an expected [] when it opened no call.
#pragma once

#include "model/model.h"
#include "session/assistant_turn.h"
#include "session/session.h"
#include "tools/tool_calls.h"
#include "tools/tool_schema.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sinkscope {

// Turns from this one on (1-based) are the "late" turns: the tool block is far behind them.
inline constexpr int kLateTurn = 30;

// JSON equality after type normalisation: numbers by value whatever their JSON type (1 == 1.0;
// compared as doubles when either is a float), objects as unordered sets of keys, arrays element
// by element in order. Otherwise the types must agree: "1" is not 1, true is not 1, null is only
// null.
bool sameJson(const nlohmann::ordered_json& a, const nlohmann::ordered_json& b);
// The same calls in the same order: equal names, sameJson arguments.
bool sameCalls(std::span<const FunctionCall> expected, std::span<const FunctionCall> actual);

struct EvalTurn {
    std::string query;
    std::vector<FunctionCall> answers; // empty: no call is the right answer
    nlohmann::ordered_json result;     // fed back after a call
};

struct EvalConversation {
    ToolSet tools;
    std::string facts; // the optional "system" text, pinned with the tools
    std::vector<EvalTurn> turns;
    int line = 0; // 1-based, in the suite
};

struct EvalSuite {
    std::vector<EvalConversation> conversations;
    // "line 3: /turns/2/query: expected a string", in line order; empty when the suite is valid
    std::vector<std::string> errors;
    bool ok() const { return errors.empty(); }
};

// Parses and validates a suite: every line's JSON, its tools (the tools schema rules), and each
// answer against the tool it names. Pure; never throws.
EvalSuite parseEvalSuite(std::string_view text);

// One turn as the model answered it.
struct TurnOutcome {
    int turn = 0; // 0-based in its conversation
    bool expectsCall = false;
    bool called = false;     // the model opened a call
    bool exact = false;      // right calls in order, or no call when none was expected
    bool namesRight = false; // the calls' names, in order, are the expected ones
    int64_t position = 0;    // stream position of the assistant's first token
    int generatedTokens = 0; // the answer and, after a call, the reply to its result
    double decodeSeconds = 0;
    int prefillTokens = 0; // the user turn and, after a call, the tool result
    double prefillSeconds = 0;
    std::vector<FunctionCall> calls; // what the model called (well-shaped calls only)
    std::string callText;            // the bytes it wrote between the call markers
    std::string error;               // why its call did not parse or validate ("" when it did)
};

// The whole session's side of one conversation.
struct ConversationOutcome {
    std::vector<TurnOutcome> turns;
    int sinkSlots = 0;               // the session's sink slots (0 when nothing is pinned)
    int toolBlockTokens = 0;         // BOS through </tools>
    int toolBlockResidentTokens = 0; // of those, still in the cache after the last turn
    int64_t evictions = 0;
    int64_t effectiveWindow = 0;
};

// Runs `conversation` as one ToolChat session built with `options` (ToolsAndBos pins the tool
// block; None leaves it to slide out of the window like any other token), answering every turn
// with `respond` and feeding back the turn's result after each call. Throws
// std::invalid_argument when the options do not fit the model.
ConversationOutcome runEvalConversation(const Model& model, const SessionOptions& options,
                                        const EvalConversation& conversation,
                                        const RespondOptions& respond);

// Rates over many conversations; nullopt where no turn qualifies.
struct EvalSummary {
    int conversations = 0;
    int turns = 0;
    int callTurns = 0;                     // turns that expect at least one call
    int noCallTurns = 0;                   // turns that expect none
    int lateTurns = 0;                     // turns kLateTurn and later
    std::optional<double> exactMatch;      // all turns
    std::optional<double> exactMatchFirst; // turn 1
    std::optional<double> exactMatchLate;  // turns kLateTurn and later
    std::optional<double> lateMeanPosition;
    std::optional<double> callExactMatch; // turns that expect calls
    std::optional<double> callNamesMatch; // those turns with the right names, arguments aside
    std::optional<double> noCallAccuracy; // turns that expect no call, answered without one
    int64_t generatedTokens = 0;
    double decodeSeconds = 0;
    int64_t prefillTokens = 0;
    double prefillSeconds = 0;
    int maxSinkSlots = 0;
    double toolBlockResident = 0; // mean over conversations of the resident share of the block
    int64_t evictions = 0;
    int64_t effectiveWindow = 0; // the last conversation's (the options and model fix it)
};

class EvalTally {
public:
    void add(const ConversationOutcome& conversation);
    EvalSummary summary() const;

private:
    std::vector<TurnOutcome> m_turns;
    int m_conversations = 0;
    int m_maxSinkSlots = 0;
    double m_residentShares = 0; // summed over conversations
    int64_t m_evictions = 0;
    int64_t m_effectiveWindow = 0;
};

} // namespace sinkscope
