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
// ChatML (tokenizer.chat_template mentions <|im_start|>): the tools go in the system message,
//   [BOS]<|im_start|>system\n{facts}\n<tools>{tools JSON}</tools>   <- the tool block
//   <|im_end|>\n<|im_start|>user\n{query}<|im_end|>\n<|im_start|>assistant\n   first user turn
//   and the rest as in Needle's layout.
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

#include "model/model.h"
#include "tools/tool_calls.h"
#include "tools/tool_schema.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sinkscope {

enum class ChatLayout { Needle, ChatMl, Plain };
const char* chatLayoutName(ChatLayout layout); // "needle", "chatml", "plain"

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

// Text as the model reads it (markers written out, BOS not shown) and its token ids.
struct Rendered {
    std::string text;
    std::vector<int32_t> tokens;
};

// One tool's tokens in the tool block: [begin, end) token indexes, which are also its positions
// (the block starts the session) and, with ToolsAndBos sinks, its sink slots.
struct ToolTokenRange {
    std::string name;
    int begin = 0;
    int end = 0;
    int count() const { return end - begin; }
};

struct ToolBlock {
    std::string text;
    std::vector<int32_t> tokens;       // BOS through </tools>
    std::vector<ToolTokenRange> tools; // in declaration order; a token belongs to the tool its
                                       // first byte is in (the ',' after a tool is the tool's)
    bool startsWithBos = false;
    // Tokens to reserve beyond BOS: SessionOptions::sinkCapacity for a session that pins the block.
    int sinkCapacity() const;
};

class ChatTemplate {
public:
    // Needle when the vocabulary has all eight markers as special tokens; ChatML when
    // `chatTemplate` (GGUF tokenizer.chat_template) contains "<|im_start|>"; Plain otherwise.
    static ChatLayout detectLayout(const Tokenizer& tokenizer, std::string_view chatTemplate);
    static ChatLayout detectLayout(const Model& model);

    // `tokenizer` must outlive the template.
    ChatTemplate(const Tokenizer& tokenizer, ChatLayout layout);
    explicit ChatTemplate(const Model& model); // the detected layout

    ChatLayout layout() const { return m_layout; }
    const Tokenizer& tokenizer() const { return *m_tokenizer; }
    // The marker's token id when it is one special token; nullopt when it is written as text.
    std::optional<int32_t> markerToken(ChatMarker marker) const;
    // <|im_end|> as one token, where the layout ends turns with it.
    std::optional<int32_t> endOfTurnToken() const;

    ToolBlock toolBlock(const ToolSet& tools, std::string_view facts = {}) const;
    // A user turn, ending where the assistant starts writing. The first one continues the message
    // the tool block opened.
    Rendered userTurn(std::string_view text, bool firstTurn) const;
    Rendered toolResultTurn(const nlohmann::ordered_json& result) const;
    // A whole assistant turn with its calls (none: text only), closed.
    Rendered assistantTurn(std::string_view text, std::span<const FunctionCall> calls) const;
    // What opens a call, as the assistant writes it.
    Rendered callOpening() const;
    // What closes an assistant turn after its generated tokens; `endOfTurnGenerated` when the
    // model already wrote <|im_end|>.
    Rendered assistantClosing(bool endOfTurnGenerated) const;

private:
    const Tokenizer* m_tokenizer;
    ChatLayout m_layout;
    std::optional<int32_t> m_markerTokens[8]; // by ChatMarker
};

} // namespace sinkscope
