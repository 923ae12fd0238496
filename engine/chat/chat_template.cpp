#include "chat/chat_template.h"

#include "chat/token_text.h"
#include "gguf/gguf.h"

#include <ctime>
#include <stdexcept>

#include <algorithm>

namespace sinkscope {

namespace {

constexpr std::string_view kMarkerTexts[] = {
    "<|im_start|>", "<|im_end|>",   "<tools>",       "</tools>",
    "<tool_call>",  "</tool_call>", "<tool_result>", "</tool_result>",
};
constexpr size_t kMarkerCount = std::size(kMarkerTexts);

std::optional<int32_t> specialTokenId(const Tokenizer& tokenizer, std::string_view text) {
    const std::optional<int32_t> id = tokenizer.findToken(text);
    if (!id) return std::nullopt;
    const TokenType type = tokenizer.type(*id);
    if (type != TokenType::Control && type != TokenType::UserDefined) return std::nullopt;
    return id;
}

// Builds one rendering: text runs are encoded between marker tokens, and every token's first
// byte is located in the rendered text, so that a text offset can be turned into a token index.
class TemplateRenderer {
public:
    explicit TemplateRenderer(const ChatTemplate& chat) : m_chat(chat) {}

    void bos() {
        flushRun();
        m_tokenStarts.push_back(m_text.size());
        m_tokens.push_back(m_chat.tokenizer().bos());
    }
    void text(std::string_view text) {
        m_run += text;
        m_text += text;
    }
    void marker(ChatMarker marker) {
        const std::optional<int32_t> id = m_chat.markerToken(marker);
        if (!id) {
            text(chatMarkerText(marker));
            return;
        }
        flushRun();
        m_tokenStarts.push_back(m_text.size());
        m_tokens.push_back(*id);
        m_text += chatMarkerText(marker);
    }
    size_t offset() const { return m_text.size(); }

    Rendered finish() {
        flushRun();
        return {m_text, m_tokens};
    }
    // The first token whose first byte lies at or after `offset` (call after finish()).
    int tokenAtOrAfter(size_t offset) const {
        const auto found = std::lower_bound(m_tokenStarts.begin(), m_tokenStarts.end(), offset);
        return static_cast<int>(found - m_tokenStarts.begin());
    }

private:
    void flushRun() {
        if (m_run.empty()) return;
        const std::vector<int32_t> ids = m_chat.tokenizer().encode(m_run, false, false);
        const size_t runStart = m_text.size() - m_run.size();
        for (const size_t start : tokenByteStarts(m_chat.tokenizer(), m_run, ids))
            m_tokenStarts.push_back(runStart + start);
        m_tokens.insert(m_tokens.end(), ids.begin(), ids.end());
        m_run.clear();
    }

    const ChatTemplate& m_chat;
    std::string m_text;                // the whole rendering
    std::string m_run;                 // text not yet encoded (the tail of m_text)
    std::vector<int32_t> m_tokens;     // [n_tokens]
    std::vector<size_t> m_tokenStarts; // [n_tokens] text offset of each token's first byte
};

} // namespace

const char* chatLayoutName(ChatLayout layout) {
    switch (layout) {
    case ChatLayout::Needle:
        return "needle";
    case ChatLayout::ModelTemplate:
        return "template";
    case ChatLayout::Plain:
        break;
    }
    return "plain";
}

std::string_view chatMarkerText(ChatMarker marker) {
    return kMarkerTexts[static_cast<size_t>(marker)];
}

int ToolBlock::sinkCapacity() const {
    return static_cast<int>(tokens.size()) - (startsWithBos ? 1 : 0);
}

ChatLayout ChatTemplate::detectLayout(const Tokenizer& tokenizer, std::string_view chatTemplate) {
    return ChatTemplate(tokenizer, chatTemplate).layout();
}

ChatLayout ChatTemplate::detectLayout(const Model& model) {
    return ChatTemplate(model).layout();
}

ChatTemplate::ChatTemplate(const Tokenizer& tokenizer, ChatLayout layout)
    : m_tokenizer(&tokenizer), m_layout(layout),
      m_family(layout == ChatLayout::Needle ? TemplateFamily::Needle : TemplateFamily::None) {
    if (layout == ChatLayout::ModelTemplate)
        throw std::invalid_argument("the template layout needs the model's chat template");
    for (size_t i = 0; i < kMarkerCount; ++i)
        m_markerTokens[i] = specialTokenId(tokenizer, kMarkerTexts[i]);
}

ChatTemplate::ChatTemplate(const Tokenizer& tokenizer, std::string_view chatTemplate,
                           const ModelTemplateOptions& options)
    : ChatTemplate(tokenizer, ChatLayout::Plain) {
    const bool allMarkers = std::ranges::all_of(
        m_markerTokens, [](const std::optional<int32_t>& id) { return id.has_value(); });
    if (allMarkers) {
        m_layout = ChatLayout::Needle;
        m_family = TemplateFamily::Needle;
        return;
    }
    m_family = templateFamily(chatTemplate);
    if (chatTemplate.empty()) return;
    std::optional<ModelTemplate> model =
        ModelTemplate::create(tokenizer, chatTemplate, options, std::time(nullptr), m_notice);
    if (!model) {
        m_notice += ": the chat uses the plain layout";
        return;
    }
    m_layout = ChatLayout::ModelTemplate;
    m_notice = model->notice();
    m_model = std::make_shared<const ModelTemplate>(std::move(*model));
}

ChatTemplate::ChatTemplate(const Model& model, const ModelTemplateOptions& options)
    : ChatTemplate(model.tokenizer(),
                   model.file().getString("tokenizer.chat_template").value_or(""), options) {}

CallFormat ChatTemplate::callFormat() const {
    return m_model ? m_model->callFormat() : needleCallFormat();
}

std::optional<int32_t> ChatTemplate::markerToken(ChatMarker marker) const {
    return m_markerTokens[static_cast<size_t>(marker)];
}

std::optional<int32_t> ChatTemplate::endOfTurnToken() const {
    if (m_model) {
        const std::vector<int32_t> closing = assistantClosing(false).tokens;
        if (closing.empty() || m_tokenizer->type(closing.front()) != TokenType::Control)
            return std::nullopt;
        return closing.front();
    }
    if (m_layout == ChatLayout::Plain) return std::nullopt;
    return markerToken(ChatMarker::ImEnd);
}

ToolBlock ChatTemplate::toolBlock(const ToolSet& tools, std::string_view facts) const {
    if (m_model) return m_model->toolBlock(tools, facts);
    TemplateRenderer r(*this);
    ToolBlock block;
    block.startsWithBos = m_tokenizer->addBos();
    if (block.startsWithBos) r.bos();
    switch (m_layout) {
    case ChatLayout::Needle:
        if (!facts.empty()) {
            r.marker(ChatMarker::ImStart);
            r.text("system\n");
            r.text(facts);
            r.marker(ChatMarker::ImEnd);
            r.text("\n");
        }
        r.marker(ChatMarker::ImStart);
        r.text("user\n");
        break;
    case ChatLayout::ModelTemplate:
    case ChatLayout::Plain:
        if (!facts.empty()) {
            r.text(facts);
            r.text("\n");
        }
        r.text("Tools: ");
        break;
    }
    r.marker(ChatMarker::Tools);
    // The array text is compactJson(): '[' then each definition, ',' between, ']'.
    std::vector<size_t> toolStarts;
    r.text("[");
    for (size_t i = 0; i < tools.tools.size(); ++i) {
        if (i > 0) r.text(",");
        toolStarts.push_back(r.offset());
        r.text(tools.tools[i].definition.dump(-1, ' ', false,
                                              nlohmann::ordered_json::error_handler_t::replace));
    }
    const size_t arrayEnd = r.offset();
    r.text("]");
    r.marker(ChatMarker::ToolsEnd);
    const Rendered rendered = r.finish();
    block.text = rendered.text;
    block.tokens = rendered.tokens;
    toolStarts.push_back(arrayEnd);
    for (size_t i = 0; i < tools.tools.size(); ++i)
        block.tools.push_back({tools.tools[i].name, r.tokenAtOrAfter(toolStarts[i]),
                               r.tokenAtOrAfter(toolStarts[i + 1])});
    return block;
}

void ChatTemplate::requireOwnLayout() const {
    if (m_model)
        throw std::logic_error("the model's template renders whole conversations (conversation.h)");
}

Rendered ChatTemplate::userTurn(std::string_view text, bool firstTurn) const {
    requireOwnLayout();
    TemplateRenderer r(*this);
    if (m_layout == ChatLayout::Plain) {
        r.text("\nUser: ");
        r.text(text);
        r.text("\nAssistant:");
        return r.finish();
    }
    if (firstTurn) {
        r.text("\n");
    } else {
        r.marker(ChatMarker::ImStart);
        r.text("user\n");
    }
    r.text(text);
    r.marker(ChatMarker::ImEnd);
    r.text("\n");
    r.marker(ChatMarker::ImStart);
    r.text("assistant\n");
    return r.finish();
}

Rendered ChatTemplate::toolResultTurn(const nlohmann::ordered_json& result) const {
    requireOwnLayout();
    TemplateRenderer r(*this);
    const std::string json =
        result.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    if (m_layout == ChatLayout::Plain) {
        r.text("\nTool: ");
    } else {
        r.marker(ChatMarker::ImStart);
        r.text("tool\n");
    }
    r.marker(ChatMarker::ToolResult);
    r.text(json);
    r.marker(ChatMarker::ToolResultEnd);
    if (m_layout == ChatLayout::Plain) {
        r.text("\nAssistant:");
    } else {
        r.marker(ChatMarker::ImEnd);
        r.text("\n");
        r.marker(ChatMarker::ImStart);
        r.text("assistant\n");
    }
    return r.finish();
}

Rendered ChatTemplate::assistantTurn(std::string_view text,
                                     std::span<const FunctionCall> calls) const {
    requireOwnLayout();
    TemplateRenderer r(*this);
    r.text(text);
    if (!calls.empty()) {
        r.marker(ChatMarker::ToolCall);
        r.text(callsJson(calls));
        r.marker(ChatMarker::ToolCallEnd);
    }
    if (m_layout != ChatLayout::Plain) {
        r.marker(ChatMarker::ImEnd);
        r.text("\n");
    }
    return r.finish();
}

Rendered ChatTemplate::callOpening() const {
    TemplateRenderer r(*this);
    r.marker(ChatMarker::ToolCall);
    return r.finish();
}

Rendered ChatTemplate::assistantClosing(bool endOfTurnGenerated) const {
    if (m_model) {
        const std::string& closing = m_model->assistantClosing();
        Rendered rendered{closing, tokenizeRendered(*m_tokenizer, closing, {}, false).tokens};
        if (endOfTurnGenerated && !rendered.tokens.empty() &&
            m_tokenizer->type(rendered.tokens.front()) == TokenType::Control) {
            rendered.text.erase(0, m_tokenizer->piece(rendered.tokens.front(), true).size());
            rendered.tokens.erase(rendered.tokens.begin());
        }
        return rendered;
    }
    TemplateRenderer r(*this);
    if (m_layout == ChatLayout::Plain) return r.finish();
    if (!endOfTurnGenerated) r.marker(ChatMarker::ImEnd);
    r.text("\n");
    return r.finish();
}

} // namespace sinkscope
