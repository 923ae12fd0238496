// How a conversation with tools is written for the model, in one of three layouts, and which of
// its tokens are the tool block that becomes the pinned sink.
//
// Needle (the vocabulary has all eight markers below as special tokens):
//   [BOS]<|im_start|>system\n{facts}<|im_end|>\n            (only when facts are given)
//   <|im_start|>user\n<tools>{tools JSON}</tools>           <- the tool block ends here
//   \n{query}<|im_end|>\n<|im_start|>assistant\n            first user turn
//   <|im_start|>user\n{query}<|im_end|>\n<|im_start|>assistant\n      later user turns
//   {text}<tool_call>[{"name":...,"arguments":{...}}]</tool_call><|im_end|>\n   assistant turn
//   <|im_start|>tool\n<tool_result>{json}</tool_result><|im_end|>\n<|im_start|>assistant\n
// ModelTemplate (the model's tokenizer.chat_template parses and renders tools): the model's own
//   template renders the whole conversation; model_template.h finds the tool block, the closing
//   and the call format from its renders, and chat/conversation.h feeds render differences.
// Plain (any other model):
//   [BOS]{facts}\nTools: <tools>{tools JSON}</tools>          <- the tool block
//   \nUser: {query}\nAssistant:                              every user turn
//   {text}<tool_call>[...]</tool_call>                        assistant turn
//   \nTool: <tool_result>{json}</tool_result>\nAssistant:     tool result
//
// A marker is one token when the vocabulary has it as a special (control or user-defined) token,
// otherwise its text. The rest is text, encoded per run between marker tokens with special-token
// parsing off, so that user text can never forge a marker. Like llama.cpp, the tokenizer puts its
// space prefix at the start of every run (after each special token). The tool block holds BOS
// through </tools>; the tools JSON is ToolSet::compactJson().
#pragma once

#include "chat/model_template.h"
#include "chat/template_family.h"
#include "chat/tool_block.h"
#include "model/model.h"
#include "tools/call_format.h"
#include "tools/tool_calls.h"
#include "tools/tool_schema.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sinkscope {

enum class ChatLayout { Needle, ModelTemplate, Plain };
const char* chatLayoutName(ChatLayout layout); // "needle", "template", "plain"

enum class ChatMarker {
    ImStart,
    ImEnd,
    Tools,
    ToolsEnd,
    ToolCall,
    ToolCallEnd,
    ToolResult,
    ToolResultEnd
};
std::string_view chatMarkerText(ChatMarker marker); // "<|im_start|>", ..., "</tool_result>"

class ChatTemplate {
public:
    // Needle when the vocabulary has all eight markers as special tokens; ModelTemplate when
    // `chatTemplate` (GGUF tokenizer.chat_template) parses and renders a probe conversation with
    // tools; Plain otherwise (notice() says why).
    static ChatLayout detectLayout(const Tokenizer& tokenizer, std::string_view chatTemplate);
    static ChatLayout detectLayout(const Model& model);

    // Needle or Plain (ModelTemplate needs the template's text: std::invalid_argument). The
    // tokenizer must outlive the template.
    ChatTemplate(const Tokenizer& tokenizer, ChatLayout layout);
    // The detected layout for this template text ("" for none).
    ChatTemplate(const Tokenizer& tokenizer, std::string_view chatTemplate,
                 const ModelTemplateOptions& options = {});
    explicit ChatTemplate(const Model& model, const ModelTemplateOptions& options = {});

    ChatLayout layout() const { return m_layout; }
    // Needle for Needle's layout; otherwise the family of the template text (None without one),
    // also when the template fell back to the plain layout.
    TemplateFamily family() const { return m_family; }
    const Tokenizer& tokenizer() const { return *m_tokenizer; }
    // The model's template (ModelTemplate layout only, else nullptr).
    const ModelTemplate* modelTemplate() const { return m_model.get(); }
    // How the model writes calls: from the template's render, else needleCallFormat().
    CallFormat callFormat() const;
    // What the playground should show about the layout: why a model with a template is Plain,
    // the tools not pinned, the system-turn option in force; "" when nothing.
    const std::string& notice() const { return m_notice; }
    // The marker's token id when it is one special token; nullopt when it is written as text.
    std::optional<int32_t> markerToken(ChatMarker marker) const;
    // The token that ends an assistant turn (<|im_end|>, the template's own, e.g. <|eot_id|>).
    std::optional<int32_t> endOfTurnToken() const;

    ToolBlock toolBlock(const ToolSet& tools, std::string_view facts = {}) const;
    // Needle and Plain only (ModelTemplate renders whole conversations: std::logic_error).
    // A user turn, ending where the assistant starts writing. The first one continues the message
    // the tool block opened.
    Rendered userTurn(std::string_view text, bool firstTurn) const;
    Rendered toolResultTurn(const nlohmann::ordered_json& result) const;
    // A whole assistant turn with its calls (none: text only), closed.
    Rendered assistantTurn(std::string_view text, std::span<const FunctionCall> calls) const;
    // What opens a call, as the assistant writes it.
    Rendered callOpening() const;
    // What closes an assistant turn after its generated tokens (ModelTemplate: the template's
    // closing); `endOfTurnGenerated` when the model already wrote the end-of-turn token.
    Rendered assistantClosing(bool endOfTurnGenerated) const;

private:
    void requireOwnLayout() const; // std::logic_error for ModelTemplate

    const Tokenizer* m_tokenizer;
    ChatLayout m_layout;
    TemplateFamily m_family;
    std::shared_ptr<const ModelTemplate> m_model; // ModelTemplate only
    std::string m_notice;
    std::optional<int32_t> m_markerTokens[8]; // by ChatMarker
};

} // namespace sinkscope
