#include "chat_format.h"

namespace sinkscope::ui {

std::vector<int32_t> ChatFormat::beginTokens() const {
    if (!m_tokenizer.addBos()) return {};
    return {m_tokenizer.bos()};
}

std::string ChatFormat::sinkBlockText(const std::string& toolsJson) {
    if (toolsJson.empty()) return {};
    return "Tools: " + toolsJson + "\n";
}

std::vector<int32_t> ChatFormat::sinkBlockTokens(const std::string& toolsJson) const {
    const std::string text = sinkBlockText(toolsJson);
    if (text.empty()) return {};
    return m_tokenizer.encode(text, false);
}

std::string ChatFormat::turnText(const std::string& userText, bool atLineStart) {
    return (atLineStart ? "" : "\n") + std::string("User: ") + userText + "\nAssistant:";
}

std::vector<int32_t> ChatFormat::turnTokens(const std::string& userText, bool atLineStart) const {
    return m_tokenizer.encode(turnText(userText, atLineStart), false);
}

bool ChatFormat::endsAtLineStart(const std::vector<int32_t>& transcript) const {
    if (transcript.empty()) return true;
    const std::string last = m_tokenizer.piece(transcript.back());
    return !last.empty() && last.back() == '\n';
}

bool ChatFormat::endsLine(const std::string& piece) {
    return piece.find('\n') != std::string::npos;
}

} // namespace sinkscope::ui
