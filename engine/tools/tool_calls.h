// Tool calls as the model writes them in its format (call_format.h), e.g. Needle's
// `<tool_call>[{"name":"set_light","arguments":{"room":"hall"}}]</tool_call>`, Qwen's
// `<tool_call>\n{"name": "set_light", "arguments": {"room": "hall"}}\n</tool_call>`, Llama-3's
// `{"name": "set_light", "parameters": {"room": "hall"}}`: written, parsed and validated against
// the declared tools; and the response of one assistant turn in Needle's shape:
//   {"type": "call" | "text", "function_calls": [{"name", "arguments"}], "text",
//    "confidence", "prefill_tokens_per_s", "decode_tokens_per_s", "error",
//    "attribution": [{"set_light": 0.46, "lock_door": 0.12, "other": 0.42}, ...]}
//
// confidence: the geometric mean, over the tokens the model chose inside the call (from the
// first token after <tool_call> through </tool_call>), of each token's probability under the
// model's logits at temperature 1 restricted to the tokens the grammar allowed at that step
// (the whole vocabulary when decoding is unconstrained): exp(mean(log p)). Tokens the grammar
// forced count with p = 1, so it measures how sure the model was among the valid choices, and is
// independent of the sampler's temperature. For a text answer, the same over its tokens.
//
// attribution: for each call, how the attention of the steps that produced its tokens spread
// over the pinned tool block: per tool, the mean over those steps of the attention weight (mean
// over layers and heads) that fell on that tool's sink slots; "other" is the rest (BOS, the
// chat markers around the tools, and the window). The shares of one call sum to 1.
#pragma once

#include "tools/call_format.h"
#include "tools/tool_schema.h"

#include <nlohmann/json.hpp>

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sinkscope {

struct FunctionCall {
    std::string name;
    nlohmann::ordered_json arguments = nlohmann::ordered_json::object();
};

// `[{"name":...,"arguments":{...}},...]`, compact, as Needle's template renders a call:
// callsBody(calls, needleCallFormat()).
std::string callsJson(std::span<const FunctionCall> calls);
// The calls as the format's template renders them, markers included: JsonList
// open "[" call (", "|",") ... "]" close; TaggedObjects open "\n" call "\n" close per call,
// "\n" between; BareObject the call's object (the template writes only one: more are written one
// after another, which parseCalls rejects).
std::string callsText(std::span<const FunctionCall> calls, const CallFormat& format);
// The same without the first open marker and the last close marker: what a model writes after
// it opened a call (ToolResponse::callText).
std::string callsBody(std::span<const FunctionCall> calls, const CallFormat& format);

struct CallsParseResult {
    std::vector<FunctionCall> calls; // every well-shaped call, even one whose arguments are wrong
    std::vector<std::string> errors; // "invalid JSON at ...", "/0/name: ...", "/1/arguments/x: ..."
    bool ok() const { return errors.empty(); }
};

// Parses Needle's JSON array of calls and validates each against the tool of its name. Pure.
CallsParseResult parseCalls(std::string_view json, const ToolSet& tools);
// Parses a body (callsBody()'s shape) in the format and validates each call. The JSON may be
// spaced in any way; the framing must be the format's: a JSON array (JsonList), blocks split by
// "\n" close "\n" open, each one JSON object (TaggedObjects), one JSON object (BareObject); a call
// has exactly "name" and the format's argumentsKey; at most maxCalls calls. Errors point into the
// array ("/1/arguments/x"), at the block ("/1/arguments/x": block 1) or into the object
// ("/parameters/x"). Pure.
CallsParseResult parseCalls(std::string_view body, const ToolSet& tools, const CallFormat& format);
// The same for callsText()'s shape: the open and close markers must be there (TaggedObjects:
// around the first and after the last block).
CallsParseResult parseCallsText(std::string_view text, const ToolSet& tools,
                                const CallFormat& format);

struct ToolShare {
    std::string tool;
    double share = 0;
};

// How the attention of one call's tokens spread over the pinned tools.
struct CallAttribution {
    std::vector<ToolShare> tools;          // one per declared tool, in declaration order
    double other = 0;                      // 1 - the tools' sum
    int steps = 0;                         // decoding steps averaged
    nlohmann::ordered_json toJson() const; // {"set_light": 0.46, ..., "other": 0.42}
};

enum class ResponseType { Call, Text };

struct ToolResponse {
    ResponseType type = ResponseType::Text;
    std::vector<FunctionCall> functionCalls;
    std::string text; // what the assistant said outside the call
    double confidence = 0;
    double prefillTokensPerSecond = 0;
    double decodeTokensPerSecond = 0;
    std::string error; // empty when none: a call that failed to parse or validate, a dead end
    std::vector<CallAttribution> attribution; // one per function call; empty when not measured

    // What the GUI and benchmarks may also want.
    std::string callText; // the bytes between the first open and the last close marker (all of
                          // the reply for BareObject): parseCalls(callText, tools, format)
    std::vector<int32_t> tokens; // the assistant turn's tokens as fed (forced ones included)
    int callTokens = 0;          // tokens inside the call, </tool_call> included
    bool constrained = false;
    bool callWrappedUp = false;    // the call hit its token budget and was completed shortest-first
    double maskMicrosPerToken = 0; // mean time to compute one allowed-token mask (0: none)

    // Needle's shape (error null when empty) plus "attribution".
    nlohmann::ordered_json toJson() const;
};

const char* responseTypeName(ResponseType type); // "call", "text"

} // namespace sinkscope
