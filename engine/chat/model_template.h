// The model's own chat template (GGUF tokenizer.chat_template) as a chat's layout. Nothing about
// a model family is written here: everything is read from the template's renders.
//
//   the tool block   render([system facts]?, user probe) with the tools and without them
//                    (add_generation_prompt true); the block is the render with tools up to where
//                    it rejoins the one without (their longest common suffix, holding the probe)
//   tools in the     when, over two user turns, the renders with and without tools do not
//   user turn        rejoin before the first user turn's header, the tools are inside it
//                    (Llama-3.x) or move with the last user turn (Mistral): the block is then only
//                    the common prefix of both renders and the tools are not pinned
//   the closing      what render(..., assistant "answer") adds after the answer ("<|im_end|>\n")
//   the call format  what an assistant message with one (two) probe call(s) adds after the
//                    generation prompt (call_format_probe.h)
//
// Messages are OpenAI's: {"role": "system"|"user"|"assistant"|"tool", "content": ...}, an
// assistant's calls as "tool_calls" [{"id", "type": "function", "function": {"name",
// "arguments": {...}}}], a tool's result with "tool_call_id" and "name". Contents that are not
// valid UTF-8 (a reply cut inside a character) go in with U+FFFD for the malformed bytes.
#pragma once

#include "chat/token_text.h"
#include "chat/tool_block.h"
#include "jinja/jinja_template.h"
#include "tools/call_format.h"
#include "tools/tool_calls.h"
#include "tools/tool_schema.h"

#include <nlohmann/json.hpp>

#include <ctime>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace sinkscope {

struct ModelTemplateOptions {
    // Renders with tools_in_user_message false where the template has that switch (Llama-3.1 and
    // 3.2): the tools then go in the system turn and can be pinned. This is NOT how the model
    // was trained to see them.
    bool toolsInSystemTurn = false;
};

// [{"type": "function", "function": {...}}]: each definition as written (key order kept), with
// "description" "" and "parameters" {"type": "object", "properties": {}} added where absent.
nlohmann::ordered_json openAiTools(const ToolSet& tools);

nlohmann::ordered_json systemMessage(std::string_view content);
nlohmann::ordered_json userMessage(std::string_view content);
// `firstCallId`: the index the first call's id ("call" and five digits) is made from.
nlohmann::ordered_json assistantMessage(std::string_view content,
                                        std::span<const FunctionCall> calls, int firstCallId);
nlohmann::ordered_json toolMessage(std::string_view content, int callId, std::string_view name);

class ModelTemplate {
public:
    // nullopt and `whyNot` when the template does not parse, raises on the probe conversation,
    // or does not show the tools it is given. `now` is strftime_now's clock for every render.
    static std::optional<ModelTemplate> create(const Tokenizer& tokenizer, std::string_view source,
                                               const ModelTemplateOptions& options, std::time_t now,
                                               std::string& whyNot);

    // The whole conversation; `tools` an OpenAI tool array (empty: rendered without tools).
    // nullopt and `error` when the template raises.
    std::optional<std::string> render(const nlohmann::ordered_json& messages,
                                      const nlohmann::ordered_json& tools, bool addGenerationPrompt,
                                      std::string& error) const;
    // A render of `messages` (or a piece of one): the messages' contents are protected
    // (token_text.h); with `bos`, BOS as the vocabulary adds it unless the text starts with it.
    TokenizedText tokenize(std::string_view rendered, const nlohmann::ordered_json& messages,
                           bool bos = true) const;

    // The block for `tools` and `facts` (the system message, none when empty). Throws
    // std::invalid_argument when the template raises for them.
    ToolBlock toolBlock(const ToolSet& tools, std::string_view facts) const;

    const Tokenizer& tokenizer() const { return *m_tokenizer; }
    const CallFormat& callFormat() const { return m_callFormat; }
    const std::string& assistantClosing() const { return m_closing; } // after an answer's text
    bool toolsInUserTurn() const { return m_toolsInUserTurn; }
    // The template has a switch that moves the tools to the system turn (tools_in_user_message).
    bool hasSystemTurnOption() const { return m_hasSystemTurnOption; }
    const ModelTemplateOptions& options() const { return m_options; }
    // What the playground should tell about this template ("" when nothing).
    const std::string& notice() const { return m_notice; }

private:
    ModelTemplate(const Tokenizer& tokenizer, JinjaTemplate program, JinjaTemplate toJson,
                  JinjaTemplate toIndentedJson, const ModelTemplateOptions& options,
                  std::time_t now);
    bool probe(std::string& whyNot);
    std::optional<std::string> renderWith(const nlohmann::ordered_json& context,
                                          std::string& error) const;
    std::string dumped(const JinjaTemplate& filter, const nlohmann::ordered_json& value) const;
    std::vector<ToolTokenRange> toolRanges(const ToolSet& tools, std::string_view blockText,
                                           const TokenizedText& tokens, size_t blockTokens) const;

    const Tokenizer* m_tokenizer;
    JinjaTemplate m_program;
    JinjaTemplate m_toJson;         // {{ value | tojson }}: Hugging Face's json.dumps
    JinjaTemplate m_toIndentedJson; // {{ value | tojson(indent=4) }}
    ModelTemplateOptions m_options;
    std::time_t m_now;
    std::string m_bosText;
    std::string m_eosText;
    CallFormat m_callFormat;
    std::string m_closing;
    bool m_toolsInUserTurn = false;
    bool m_hasSystemTurnOption = false;
    std::string m_notice;
};

} // namespace sinkscope
