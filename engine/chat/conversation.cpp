#include "chat/conversation.h"

#include <algorithm>

namespace sinkscope {

namespace {

// A tool result turn keeps the result as its dump(); anything else comes back as a string.
nlohmann::ordered_json resultValue(const std::string& text) {
    nlohmann::ordered_json value = nlohmann::ordered_json::parse(text, nullptr, false);
    return value.is_discarded() ? nlohmann::ordered_json(text) : value;
}

} // namespace

const char* turnRoleName(TurnRole role) {
    switch (role) {
    case TurnRole::User:
        return "user";
    case TurnRole::Assistant:
        return "assistant";
    case TurnRole::ToolResult:
        break;
    }
    return "tool";
}

const Turn& Conversation::addUser(std::string_view text) {
    const bool first =
        std::ranges::none_of(m_turns, [](const Turn& turn) { return turn.role == TurnRole::User; });
    Rendered rendered = m_chat->userTurn(text, first);
    return m_turns.emplace_back(
        Turn{TurnRole::User, std::string(text), {}, std::move(rendered.tokens)});
}

const Turn& Conversation::addToolResult(const nlohmann::ordered_json& result) {
    Rendered rendered = m_chat->toolResultTurn(result);
    return m_turns.emplace_back(
        Turn{TurnRole::ToolResult,
             result.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace),
             {},
             std::move(rendered.tokens)});
}

const Turn& Conversation::addAssistant(std::string text, std::vector<FunctionCall> calls,
                                       std::vector<int32_t> tokens) {
    return m_turns.emplace_back(
        Turn{TurnRole::Assistant, std::move(text), std::move(calls), std::move(tokens)});
}

void Conversation::addRetokenized(std::span<const Turn> turns) {
    for (const Turn& turn : turns) {
        switch (turn.role) {
        case TurnRole::User:
            addUser(turn.text);
            break;
        case TurnRole::ToolResult:
            addToolResult(resultValue(turn.text));
            break;
        case TurnRole::Assistant:
            addAssistant(turn.text, turn.calls,
                         m_chat->assistantTurn(turn.text, turn.calls).tokens);
            break;
        }
    }
}

size_t Conversation::tokenCount() const {
    size_t count = 0;
    for (const Turn& turn : m_turns)
        count += turn.tokens.size();
    return count;
}

std::vector<int32_t> Conversation::transcriptTokens() const {
    std::vector<int32_t> tokens;
    tokens.reserve(tokenCount());
    for (const Turn& turn : m_turns)
        tokens.insert(tokens.end(), turn.tokens.begin(), turn.tokens.end());
    return tokens;
}

std::vector<int32_t> Conversation::transcriptTail(size_t count) const {
    std::vector<int32_t> tokens = transcriptTokens();
    if (tokens.size() > count)
        tokens.erase(tokens.begin(), tokens.end() - static_cast<std::ptrdiff_t>(count));
    return tokens;
}

} // namespace sinkscope
