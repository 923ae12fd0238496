// A conversation's transcript: its turns after the tool block, each with the tokens the model was
// fed for it. The transcript is what survives a change of tools: the session is rebuilt from a
// new tool block and the transcript's last W tokens (tool_chat.h), and no turn is lost here.
//
// In the ModelTemplate layout the conversation is also kept as OpenAI messages and rendered by
// the model's template (template_transcript.h): a turn's tokens are the render difference fed
// for it, and lastChange() tells whether the render still extended the cache. Turns rendered
// anew (new tools, a conversation continued from another model) hold no tokens of their own:
// transcriptTokens() is then the render's.
#pragma once

#include "chat/chat_template.h"
#include "chat/template_transcript.h"
#include "tools/tool_calls.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sinkscope {

enum class TurnRole { User, Assistant, ToolResult };
const char* turnRoleName(TurnRole role); // "user", "assistant", "tool"

struct Turn {
    TurnRole role = TurnRole::User;
    std::string text;                // user text, assistant text outside calls, or result JSON
    std::vector<FunctionCall> calls; // an assistant turn's calls
    std::vector<int32_t> tokens;     // as fed to the model, in order
};

class Conversation {
public:
    // `chat` renders the user and tool-result turns; it must outlive the conversation.
    explicit Conversation(const ChatTemplate& chat);

    // Rendered by the template, ending where the assistant starts writing.
    const Turn& addUser(std::string_view text);
    const Turn& addToolResult(const nlohmann::ordered_json& result);
    // The assistant's turn as generated: its tokens are the ones fed (closing tokens included).
    const Turn& addAssistant(std::string text, std::vector<FunctionCall> calls,
                             std::vector<int32_t> tokens);
    // Another conversation's turns, rendered and tokenised anew by this one's template (another
    // model's tokens mean nothing here). An assistant turn that was cut short comes back closed.
    // In the ModelTemplate layout they are rendered at the next setContext().
    void addRetokenized(std::span<const Turn> turns);
    // The tools, facts and block the chat pins (ModelTemplate: the conversation is rendered anew
    // under them; other layouts render turns on their own and ignore this).
    void setContext(const ToolSet& tools, const std::string& facts, const ToolBlock& block);

    const std::vector<Turn>& turns() const { return m_turns; }
    size_t tokenCount() const;
    std::vector<int32_t> transcriptTokens() const;           // every turn's tokens, in order
    std::vector<int32_t> transcriptTail(size_t count) const; // the last `count` of them
    // ModelTemplate: what the last user or tool turn (or setContext) did to the transcript.
    const TranscriptChange& lastChange() const { return m_lastChange; }
    // ModelTemplate only, else nullptr.
    const TemplateTranscript* templateTranscript() const { return m_template.get(); }

private:
    void noteCalls(std::span<const FunctionCall> calls); // an assistant turn's, for the ids

    const ChatTemplate* m_chat;
    std::unique_ptr<TemplateTranscript> m_template;
    std::vector<Turn> m_turns;
    TranscriptChange m_lastChange;
    int m_callsSoFar = 0;     // the ids the template sees: one per call, in order
    int m_lastFirstCall = 0;  // the id of the last assistant turn's first call
    std::string m_lastCalled; // and its function's name: what a tool result answers
};

} // namespace sinkscope
