// A chat with tools pinned as sinks: one session whose sink slots hold the rendered tool block
// (BOS through </tools>), the conversation's transcript, and the turn loop. This is the engine
// object the playground's worker owns (on its thread; not thread-safe).
//
//   ToolChat chat(model, options, *parseTools(json).tools, facts);
//   ToolResponse r = chat.ask("Dim the hall lights");          // r.toJson(): Needle's shape
//   chat.sendToolResult({{"ok", true}});                         // the model continues
//   RebuildReport b = chat.replaceTools(newTools, facts);        // sinks rebuilt, chat goes on
//   chat.rebuild(otherOptions);                                  // new cache, same chat
//   ToolChat next(otherModel, options, tools, facts, chat.conversation().turns(), {});
//
// Changing the tools rebuilds the session: a new cache sized to the new block, the block
// prefilled and pinned, then the transcript's last W tokens re-prefilled (W = the effective
// window), so the conversation continues under the new tools. The transcript itself is kept
// whole in conversation().
#pragma once

#include "chat/chat_template.h"
#include "chat/conversation.h"
#include "session/assistant_turn.h"
#include "session/session.h"
#include "tools/call_grammar.h"
#include "tools/token_trie.h"
#include "tools/tool_calls.h"
#include "tools/tool_schema.h"

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace sinkscope {

// The KV memory of a session built for a tool block, against the budget
// (memory-architecture.md, section 1: the budget counts int8 K and V with f32 group scales).
struct SinkBudget {
    int sinkSlots = 0;            // BOS + the block's tokens (ToolsAndBos), or the mode's
    int window = 0;               // the effective window W
    int64_t bytesPerPosition = 0; // per_pos of the budget formula
    int64_t kvBytes = 0;          // bytesPerPosition * (sinkSlots + window)
    int64_t budgetBytes = 0;      // 12,058,624
    bool overBudget = false;
};

// What the tools panel shows before Apply: the block's sinks and window in budget bytes.
SinkBudget sinkBudget(const ModelConfig& config, const SessionOptions& options,
                      const ToolBlock& block);

struct RebuildReport {
    double seconds = 0;       // building the cache and prefilling block and transcript tail
    int sinkTokens = 0;       // the tool block's tokens
    int reusedSinkTokens = 0; // of them, taken over from the session the build replaced
    int replayedTokens = 0;   // transcript tokens re-prefilled: its last W
    int transcriptTokens = 0; // the whole transcript, kept in the conversation
};

// How the last turn's time split: its prompt (the user's or the tool's turn) and the reply, and
// (model's template) whether its render still extended the cache.
struct TurnTiming {
    int promptTokens = 0;
    int assistantTokens = 0; // fed, forced ones included
    double prefillSeconds = 0;
    double decodeSeconds = 0;
    // The template rendered the conversation differently from the cache: the session was rebuilt
    // from the block and the new render's tokens before the prompt (template_transcript.h).
    bool rerendered = false;
    std::string rerenderReason; // one line for the playground
    int replayedTokens = 0;     // re-prefilled for it, before the prompt
};

// How far a session build has got: the tool block's tokens prefilled and pinned (Sinks), then
// the transcript's tail re-prefilled (Transcript). Reported when a stage starts (done 0) and
// after each of its prefill chunks; a stage without tokens (no transcript yet) is not reported.
enum class BuildStage { Sinks, Transcript };
struct BuildProgress {
    BuildStage stage = BuildStage::Sinks;
    int done = 0;  // tokens of this stage prefilled
    int total = 0; // tokens of this stage
};
// Returns false to cancel the build: it then throws BuildCancelled, and whatever the build was to
// replace (a chat's session and tools) stays as it was.
using BuildProgressCallback = std::function<bool(const BuildProgress&)>;

class BuildCancelled : public std::runtime_error {
public:
    BuildCancelled() : std::runtime_error("the session build was cancelled") {}
};

struct RebuiltSession {
    std::unique_ptr<Session> session;
    RebuildReport report;
};

// A new session for `block`: with ToolsAndBos sinks its sink capacity is the block's and the
// block is pinned; then the last W tokens of `transcript` are prefilled after it. Throws
// std::invalid_argument when the options do not fit the model.
// `onProgress` sees the stages (BuildProgress) and may cancel between chunks.
// `previous`, the session the build replaces, may lend its pinned sinks: the block's longest
// prefix that it holds pinned is taken over (Session::adoptSinks) rather than computed, up to
// the block's last token, which is always fed so that onStep sees the pinned block's last step.
// The session is the same, bit for bit, as one built from nothing.
RebuiltSession rebuildSession(const Model& model, SessionOptions options, const ToolBlock& block,
                              std::span<const int32_t> transcript, const StepCallback& onStep = {},
                              const BuildProgressCallback& onProgress = {},
                              const Session* previous = nullptr);

class ToolChat {
public:
    // Builds the session for `tools` (and `facts`, the optional system text) in the model's
    // detected layout (its own template where it has one that renders tools, under
    // `templateOptions`), or `layout` (Needle or Plain). Attribution needs options.probe enabled
    // ({true, -1, -1}).
    ToolChat(const Model& model, const SessionOptions& options, ToolSet tools,
             std::string facts = {}, std::optional<ChatLayout> layout = {},
             const ModelTemplateOptions& templateOptions = {});
    // Continues `earlier` (another chat's turns, perhaps on another model; none for a fresh
    // chat): its turns are rendered and tokenised anew with this model's template, and the session
    // holds the block and their last W tokens. `onStep` sees every token fed while building,
    // `onProgress` the build's stages (a cancel throws BuildCancelled).
    ToolChat(const Model& model, const SessionOptions& options, ToolSet tools, std::string facts,
             std::span<const Turn> earlier, const StepCallback& onStep,
             std::optional<ChatLayout> layout = {},
             const ModelTemplateOptions& templateOptions = {},
             const BuildProgressCallback& onProgress = {});
    ToolChat(const ToolChat&) = delete;
    ToolChat& operator=(const ToolChat&) = delete;

    // Adds a user turn, prefills it, and generates the assistant's answer.
    ToolResponse ask(std::string_view userText, const RespondOptions& options = {},
                     const StepCallback& onStep = {});
    // Adds a tool's result (after a call) and lets the assistant continue.
    ToolResponse sendToolResult(const nlohmann::ordered_json& result,
                                const RespondOptions& options = {},
                                const StepCallback& onStep = {});
    // Pins new tools (and facts): rebuilds the session and replays the transcript's tail. A
    // cancel from `onProgress` throws BuildCancelled with the old tools and session in force.
    RebuildReport replaceTools(ToolSet tools, std::string facts, const StepCallback& onStep = {},
                               const BuildProgressCallback& onProgress = {});
    // New session options (window, KV bits, sinks, ...): the session is rebuilt for the same
    // tools and the transcript's tail replayed. Throws std::invalid_argument, the chat unchanged,
    // when the options do not fit the model.
    RebuildReport rebuild(const SessionOptions& options, const StepCallback& onStep = {});

    const Model& model() const { return m_model; }
    const Session& session() const { return *m_session; }
    // The session's thread team (Session::setThreads); nothing else changes.
    void setThreads(int threads) { m_session->setThreads(threads); }
    const ChatTemplate& chatTemplate() const { return m_template; }
    // How the model writes calls (chatTemplate().callFormat()): the grammar is compiled for it and
    // the turn generator decodes in it (TurnContext::format).
    CallFormat callFormat() const { return m_template.callFormat(); }
    const ToolSet& tools() const { return m_tools; }
    const std::string& facts() const { return m_facts; }
    const ToolBlock& toolBlock() const { return m_block; }
    const Conversation& conversation() const { return m_conversation; }
    const RebuildReport& lastRebuild() const {
        return m_lastRebuild;
    } // the constructor's build too
    const TurnTiming& lastTurn() const { return m_lastTurn; }
    SinkBudget budget() const {
        return sinkBudget(m_model.config(), m_session->options(), m_block);
    }

private:
    // The text of the conversation's latest user turn (empty before the first).
    std::string_view latestUserText() const;
    // Prefills `prompt` (a turn already added to the conversation) and generates the answer.
    ToolResponse respond(std::span<const int32_t> prompt, const RespondOptions& options,
                         const StepCallback& onStep);
    // Where the template rendered the conversation differently from the cache: the session
    // becomes the block and the transcript's unchanged tokens, before the turn's prompt.
    void followRender(const StepCallback& onStep);
    // Builds the session for `tools` under `options`; the chat switches only once all is built.
    void pin(const SessionOptions& options, ToolSet tools, std::string facts,
             const StepCallback& onStep, const BuildProgressCallback& onProgress = {});

    const Model& m_model;
    SessionOptions m_options;
    ChatTemplate m_template;
    TokenTrie m_trie;
    ToolSet m_tools;
    std::string m_facts;
    ToolBlock m_block;
    std::unique_ptr<CallGrammar> m_grammar;
    Conversation m_conversation;
    std::unique_ptr<Session> m_session;
    RebuildReport m_lastRebuild;
    TurnTiming m_lastTurn;
};

} // namespace sinkscope
