#include "chat/template_transcript.h"

#include <algorithm>
#include <stdexcept>

namespace sinkscope {

namespace {

using Json = nlohmann::ordered_json;

// A short excerpt of `text` at `offset`, control characters escaped, for a one-line reason.
std::string excerpt(std::string_view text, size_t offset) {
    std::string shown;
    for (const char c : text.substr(offset, 24)) {
        if (c == '\n')
            shown += "\\n";
        else
            shown += c;
    }
    return "\"" + shown + (text.size() > offset + 24 ? "...\"" : "\"");
}

size_t commonTokens(std::span<const int32_t> a, std::span<const int32_t> b) {
    const auto [ia, ib] = std::ranges::mismatch(a, b);
    return static_cast<size_t>(ia - a.begin());
}

} // namespace

Json TemplateTranscript::renderedMessages() const {
    Json messages = Json::array();
    if (!m_facts.empty()) messages.push_back(systemMessage(m_facts));
    for (const Json& message : m_messages)
        messages.push_back(message);
    return messages;
}

TranscriptChange TemplateTranscript::setContext(const ToolSet& tools, std::string facts,
                                                const ToolBlock& block) {
    TemplateTranscript before = *this;
    m_tools = openAiTools(tools);
    m_facts = std::move(facts);
    m_block = block;
    m_tokens.clear();
    m_cachedText = block.text;
    if (m_messages.empty()) return {};
    try {
        return follow(m_messages.back().value("role", "") != std::string("assistant"));
    } catch (...) {
        *this = std::move(before);
        throw;
    }
}

TranscriptChange TemplateTranscript::add(Json message) {
    m_messages.push_back(std::move(message));
    try {
        return follow(true);
    } catch (...) {
        m_messages.erase(m_messages.end() - 1);
        throw;
    }
}

void TemplateTranscript::addGenerated(Json message, std::span<const int32_t> tokens) {
    m_messages.push_back(std::move(message));
    m_tokens.insert(m_tokens.end(), tokens.begin(), tokens.end());
    for (const int32_t id : tokens)
        m_cachedText += m_model->tokenizer().piece(id, true);
}

TranscriptChange TemplateTranscript::follow(bool addGenerationPrompt) {
    const Json messages = renderedMessages();
    std::string error;
    const std::optional<std::string> rendered =
        m_model->render(messages, m_tools, addGenerationPrompt, error);
    if (!rendered) throw std::invalid_argument("the model's chat template raised: " + error);
    const TokenizedText tokens = m_model->tokenize(*rendered, messages);
    TranscriptChange change;
    if (rendered->starts_with(m_cachedText)) {
        const size_t offset = m_cachedText.size();
        const size_t first = tokens.tokenAtOrAfter(offset);
        if (first < tokens.tokens.size() && tokens.starts[first] == offset) {
            change.fed.assign(tokens.tokens.begin() + std::ptrdiff_t(first), tokens.tokens.end());
        } else if (offset < rendered->size()) {
            // The whole render has no token boundary here: the difference is tokenised alone.
            change.fed = m_model->tokenize(rendered->substr(offset), messages, false).tokens;
        }
        change.kept = m_tokens.size();
        m_tokens.insert(m_tokens.end(), change.fed.begin(), change.fed.end());
        m_cachedText = *rendered;
        return change;
    }
    change.rerendered = true;
    const auto [cachedAt, renderedAt] = std::ranges::mismatch(m_cachedText, *rendered);
    const size_t differs = static_cast<size_t>(cachedAt - m_cachedText.begin());
    change.reason = "the template renders the conversation differently from the cache at byte " +
                    std::to_string(differs) + ": " + excerpt(*rendered, differs) +
                    " where the cache holds " + excerpt(m_cachedText, differs);
    size_t blockTokens = m_block.tokens.size();
    if (commonTokens(m_block.tokens, tokens.tokens) < blockTokens) {
        blockTokens = commonTokens(m_block.tokens, tokens.tokens);
        change.blockChanged = true;
        m_block.tokens.resize(blockTokens);
        m_block.text = rendered->substr(
            0, blockTokens < tokens.tokens.size() ? tokens.starts[blockTokens] : rendered->size());
        std::erase_if(m_block.tools, [&](const ToolTokenRange& range) {
            return range.end > static_cast<int>(blockTokens);
        });
        m_block.pinsTools = !m_block.tools.empty();
        m_block.notice = "the render no longer starts with the pinned block: " + change.reason;
        m_tokens.clear();
    }
    const std::span<const int32_t> transcript =
        std::span(tokens.tokens).subspan(std::min(blockTokens, tokens.tokens.size()));
    change.kept = commonTokens(m_tokens, transcript);
    change.fed.assign(transcript.begin() + std::ptrdiff_t(change.kept), transcript.end());
    m_tokens.assign(transcript.begin(), transcript.end());
    m_cachedText = *rendered;
    return change;
}

} // namespace sinkscope
