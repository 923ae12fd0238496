// A conversation rendered by the model's own template, fed as render differences. The
// conversation is kept as OpenAI messages; after each new message the whole conversation is
// rendered again. When the render starts with the text already in the cache (the block, the
// earlier renders' text and what the model generated), only the difference is fed, tokenised as
// the whole render would be; the cache is not rebuilt for an ordinary turn. Otherwise (a template
// that moves the tools into the last user message, strips earlier reasoning, or writes a
// generated call its own way) the change says so, with a one-line reason, and the transcript
// becomes the new render's tokens after the block: the session keeps what still agrees and
// prefills the rest. If even the block is no longer a prefix, it is cut to the tokens that agree.
#pragma once

#include "chat/model_template.h"
#include "chat/tool_block.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace sinkscope {

// What a new message (or new tools) did to the transcript (the tokens after the block).
struct TranscriptChange {
    size_t kept = 0;           // transcript tokens as they were: the session still holds them
    std::vector<int32_t> fed;  // the tokens after those, to prefill
    bool rerendered = false;   // the render did not extend the cache: the window is re-prefilled
    bool blockChanged = false; // the block was cut to what the render still starts with
    std::string reason;        // one line, when rerendered
};

class TemplateTranscript {
public:
    // `model` must outlive the transcript.
    explicit TemplateTranscript(const ModelTemplate& model) : m_model(&model) {}

    // New tools, facts and the block made for them: the whole conversation is rendered anew.
    TranscriptChange setContext(const ToolSet& tools, std::string facts, const ToolBlock& block);
    // A user or tool message, rendered with the generation prompt. Throws std::invalid_argument,
    // the transcript unchanged, when the template raises.
    TranscriptChange add(nlohmann::ordered_json message);
    // The assistant's message as generated: `tokens` were fed for it (its closing included).
    void addGenerated(nlohmann::ordered_json message, std::span<const int32_t> tokens);
    // A message of an earlier conversation: rendered at the next setContext().
    void addEarlier(nlohmann::ordered_json message) { m_messages.push_back(std::move(message)); }

    const nlohmann::ordered_json& messages() const { return m_messages; } // without facts
    const std::vector<int32_t>& tokens() const { return m_tokens; }
    const ToolBlock& block() const { return m_block; }
    // The text of the block and the transcript, as the cache holds it.
    const std::string& cachedText() const { return m_cachedText; }
    // The render's messages: the facts as a system message, then messages().
    nlohmann::ordered_json renderedMessages() const;

private:
    // Renders the conversation and makes the change that brings the cache to that render.
    TranscriptChange follow(bool addGenerationPrompt);

    const ModelTemplate* m_model;
    nlohmann::ordered_json m_messages = nlohmann::ordered_json::array();
    nlohmann::ordered_json m_tools = nlohmann::ordered_json::array(); // OpenAI form
    std::string m_facts;
    ToolBlock m_block;
    std::vector<int32_t> m_tokens; // [transcript tokens] after the block
    std::string m_cachedText;
};

} // namespace sinkscope
