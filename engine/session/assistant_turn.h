// One assistant turn with tools: the model writes freely until it opens a call (<tool_call>, or
// that text where it is not a token), then the call is decoded under the call grammar until it
// closes; it may also answer in text and never call (or, with CallPolicy::None, may not call).
// The call is then parsed and validated, and the response carries its confidence, speed and
// attention attribution (tool_calls.h defines them).
//
// Outside a call the chat markers that only the template writes (<|im_start|>, <tools>,
// </tool_call>, <tool_result>, ...) and BOS are masked out, so the transcript stays well formed.
// Where <tool_call> is text, a token that would write it anywhere but at its own end is masked
// too, so that a call always starts at a token boundary.
#pragma once

#include "tools/call_decoder.h"
#include "tools/call_grammar.h"
#include "chat/chat_template.h"
#include "session/sampler.h"
#include "session/session.h"
#include "tools/token_trie.h"
#include "tools/tool_calls.h"
#include "tools/tool_schema.h"

#include <span>

namespace sinkscope {

enum class CallPolicy {
    Auto,     // the model decides
    Required, // the turn starts with <tool_call> (forced)
    None,     // <tool_call> is masked out: text only
};
const char* callPolicyName(CallPolicy policy); // "auto", "required", "none"

struct RespondOptions {
    SamplerOptions sampler;
    CallPolicy calls = CallPolicy::Auto;
    bool constrained = true; // decode calls under the grammar; off: parse whatever comes
    int maxTokens = 256;     // the whole turn, call included (closing tokens not counted)
    int maxCallTokens = 192; // a constrained call wraps up, shortest way, to end within this
    // End-of-text and the end-of-turn marker are masked out: the turn runs to maxTokens (or ends
    // with a call), then is closed as usual. For watching the window slide.
    bool ignoreEndOfText = false;
};

// What a turn needs besides the session. Everything must outlive the call.
struct TurnContext {
    const ChatTemplate& chat;
    const ToolSet& tools;
    const CallGrammar& grammar; // compiled from `tools` with callGrammarOptions(chat)
    const TokenTrie& trie;      // of chat.tokenizer()
    const ToolBlock& block;     // fed at positions [0, block.tokens.size()): for attribution
};

// The grammar options a layout needs: "</tool_call>" as the terminator when it is not a token.
CallGrammarOptions callGrammarOptions(const ChatTemplate& chat);

// Generates one assistant turn on `session`, which has just been fed a prompt that ends where
// the assistant writes; `logits` are its next-token logits ([n_vocab]). Every token written is
// fed (the closing ones included) and listed in ToolResponse::tokens. Attribution is measured
// when the session's options enable the attention probe (use {true, -1, -1}: the mean over
// layers and heads). prefillTokensPerSecond is left for the caller, who timed the prompt.
// `onStep` sees the snapshot after each token fed, with `generated` set: the assistant's turn wrote
// it, sampled or forced (the call opening, the closing tokens); returning false stops the turn.
ToolResponse generateAssistantTurn(Session& session, std::span<const float> logits,
                                   const TurnContext& context, const RespondOptions& options,
                                   const StepCallback& onStep = {});

} // namespace sinkscope
