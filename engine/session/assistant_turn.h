// One assistant turn with tools, in the model's call format (call_format.h): the model writes
// freely until it opens a call (the format's open marker, <tool_call>, as a token or as text; for
// BareObject, a first reply token that begins with '{'), then the call is decoded under the call
// grammar until it closes (TaggedObjects: until the turn ends after a block, or maxCalls blocks);
// it may also answer in text and never call (or, with CallPolicy::None, may not call). The calls
// are then parsed and validated, and the response carries their confidence, speed and attention
// attribution (tool_calls.h defines them).
//
// Outside a call the chat markers that only the template writes (<|im_start|>, <tools>, the
// format's close marker, <tool_result>, ...) and BOS are masked out, so the transcript stays well
// formed. Where the open marker is text, a token that would write it anywhere but at its own end
// is masked too, so that a call always starts at a token boundary. Unconstrained, a call ends at
// its first close marker (BareObject: at the end of the turn).
#pragma once

#include "chat/chat_template.h"
#include "session/sampler.h"
#include "session/session.h"
#include "tools/call_decoder.h"
#include "tools/call_grammar.h"
#include "tools/token_trie.h"
#include "tools/tool_calls.h"
#include "tools/tool_schema.h"

#include <span>

namespace sinkscope {

enum class CallPolicy {
    Auto,     // the model decides
    Required, // the turn starts with the open marker (forced; BareObject: with the call)
    None,     // the open marker is masked out (BareObject: a first token with '{'): text only
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
    // Constrained calls only: every string argument without a minimum length is a span of the
    // user's latest message (TurnContext::userMessage), as JSON writes it: many arguments are
    // words copied from the request. Off by default.
    bool argumentsFromMessage = false;
};

// What a turn needs besides the session. Everything must outlive the call.
struct TurnContext {
    const ChatTemplate& chat;
    const ToolSet& tools;
    const CallGrammar& grammar; // compiled from `tools` with callGrammarOptions(chat, format)
    const TokenTrie& trie;      // of chat.tokenizer()
    const ToolBlock& block;     // fed at positions [0, block.tokens.size()): for attribution
    const CallFormat& format;   // how the model writes its calls
    std::string_view userMessage = {}; // the latest user turn's text (argumentsFromMessage)
};

// The grammar options for the format with this vocabulary: its markers that are not tokens of
// their own become text of the grammar (e.g. "</tool_call>" as the terminator).
CallGrammarOptions callGrammarOptions(const ChatTemplate& chat, const CallFormat& format);

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
