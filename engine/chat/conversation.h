// A conversation's transcript: its turns after the tool block, each with the tokens the model was
// fed for it. The transcript is what survives a change of tools: the session is rebuilt from a
// new tool block and the transcript's last W tokens (tool_chat.h), and no turn is lost here.
#pragma once

#include "chat/chat_template.h"
#include "tools/tool_calls.h"

#include <nlohmann/json.hpp>

#include <cstdint>
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
    explicit Conversation(const ChatTemplate& chat) : m_chat(&chat) {}

    // Rendered by the template, ending where the assistant starts writing.
    const Turn& addUser(std::string_view text);
    const Turn& addToolResult(const nlohmann::ordered_json& result);
    // The assistant's turn as generated: its tokens are the ones fed (closing tokens included).
    const Turn& addAssistant(std::string text, std::vector<FunctionCall> calls,
                             std::vector<int32_t> tokens);
    // Another conversation's turns, rendered and tokenised anew by this one's template (another
    // model's tokens mean nothing here). An assistant turn that was cut short comes back closed.
    void addRetokenized(std::span<const Turn> turns);

    const std::vector<Turn>& turns() const { return m_turns; }
    size_t tokenCount() const;
    std::vector<int32_t> transcriptTokens() const;           // every turn's tokens, in order
    std::vector<int32_t> transcriptTail(size_t count) const; // the last `count` of them

private:
    const ChatTemplate* m_chat;
    std::vector<Turn> m_turns;
};

} // namespace sinkscope
