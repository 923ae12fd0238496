#include "chat/conversation.h"

#include <algorithm>

namespace sinkscope {

namespace {

// A tool result turn keeps the result as its dump(); anything else comes back as a string.
nlohmann::ordered_json resultValue(const std::string& text) {
    nlohmann::ordered_json value = nlohmann::ordered_json::parse(text, nullptr, false);
    return value.is_discarded() ? nlohmann::ordered_json(text) : value;
}

std::string dumped(const nlohmann::ordered_json& value) {
    return value.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
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

Conversation::Conversation(const ChatTemplate& chat) : m_chat(&chat) {
    if (chat.modelTemplate())
        m_template = std::make_unique<TemplateTranscript>(*chat.modelTemplate());
}

const Turn& Conversation::addUser(std::string_view text) {
    if (m_template) {
        m_lastChange = m_template->add(userMessage(text));
        return m_turns.emplace_back(Turn{TurnRole::User, std::string(text), {}, m_lastChange.fed});
    }
    const bool first =
        std::ranges::none_of(m_turns, [](const Turn& turn) { return turn.role == TurnRole::User; });
    Rendered rendered = m_chat->userTurn(text, first);
    return m_turns.emplace_back(
        Turn{TurnRole::User, std::string(text), {}, std::move(rendered.tokens)});
}

const Turn& Conversation::addToolResult(const nlohmann::ordered_json& result) {
    if (m_template) {
        // The result answers the last assistant turn's first call.
        m_lastChange = m_template->add(toolMessage(dumped(result), m_lastFirstCall, m_lastCalled));
        return m_turns.emplace_back(
            Turn{TurnRole::ToolResult, dumped(result), {}, m_lastChange.fed});
    }
    Rendered rendered = m_chat->toolResultTurn(result);
    return m_turns.emplace_back(
        Turn{TurnRole::ToolResult, dumped(result), {}, std::move(rendered.tokens)});
}

const Turn& Conversation::addAssistant(std::string text, std::vector<FunctionCall> calls,
                                       std::vector<int32_t> tokens) {
    if (m_template) {
        m_template->addGenerated(assistantMessage(text, calls, m_callsSoFar), tokens);
        noteCalls(calls);
    }
    return m_turns.emplace_back(
        Turn{TurnRole::Assistant, std::move(text), std::move(calls), std::move(tokens)});
}

void Conversation::addRetokenized(std::span<const Turn> turns) {
    for (const Turn& turn : turns) {
        if (m_template) {
            switch (turn.role) {
            case TurnRole::User:
                m_template->addEarlier(userMessage(turn.text));
                break;
            case TurnRole::ToolResult:
                m_template->addEarlier(toolMessage(turn.text, m_lastFirstCall, m_lastCalled));
                break;
            case TurnRole::Assistant:
                m_template->addEarlier(assistantMessage(turn.text, turn.calls, m_callsSoFar));
                noteCalls(turn.calls);
                break;
            }
            m_turns.push_back(Turn{turn.role, turn.text, turn.calls, {}});
            continue;
        }
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

void Conversation::noteCalls(std::span<const FunctionCall> calls) {
    if (calls.empty()) return;
    m_lastFirstCall = m_callsSoFar;
    m_lastCalled = calls.front().name;
    m_callsSoFar += static_cast<int>(calls.size());
}

void Conversation::setContext(const ToolSet& tools, const std::string& facts,
                              const ToolBlock& block) {
    if (!m_template) return;
    m_lastChange = m_template->setContext(tools, facts, block);
}

size_t Conversation::tokenCount() const {
    if (m_template) return m_template->tokens().size();
    size_t count = 0;
    for (const Turn& turn : m_turns)
        count += turn.tokens.size();
    return count;
}

std::vector<int32_t> Conversation::transcriptTokens() const {
    if (m_template) return m_template->tokens();
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
