// The family a chat template belongs to, named from the markers its source writes. Only a label
// for the playground and the command line: nothing renders, tokenises or decodes by family
// (model_template.h reads everything from the template's own renders).
//
//   <|im_start|> and <tool_call>     ChatML (Qwen2.5 / Hermes tool calls)   Qwen2.5, Hermes-2-Pro
//   <|im_start|>                     ChatML                                 SmolLM2
//   <|start_header_id|>              Llama 3                                Llama-3.x
//   [INST] (and [TOOL_CALLS])        Mistral (with [TOOL_CALLS])            Mistral-Nemo
//   <start_of_turn>                  Gemma                                  Gemma-2
//   <|user|> and <|end|>             Phi-3                                  Phi-3.5
//
// The first row that matches names the family; a source with none of them is unrecognised.
#pragma once

#include <string_view>

namespace sinkscope {

enum class TemplateFamily {
    None,         // no template
    Needle,       // Needle's own markers, written by the engine (chat_template.h)
    ChatMlTools,  // ChatML with Qwen2.5 / Hermes <tool_call> blocks
    ChatMl,       // ChatML without tool calls
    Llama3,       // <|start_header_id|> role <|end_header_id|>
    MistralTools, // [INST] with [TOOL_CALLS]
    Mistral,      // [INST] only
    Gemma,        // <start_of_turn>
    Phi3,         // <|user|> ... <|end|>
    Unrecognised, // a template with none of the markers above
};

// The family of a Jinja chat template's source (GGUF tokenizer.chat_template); None when empty.
TemplateFamily templateFamily(std::string_view source);

// "ChatML (Qwen2.5 / Hermes tool calls)", "Llama 3", "Needle (built in)", "unrecognised", "none".
std::string_view templateFamilyName(TemplateFamily family);
// The markup alone, for a short phrase ("the ChatML template"): "ChatML", "Llama 3", "Mistral",
// "Gemma", "Phi-3", "Needle"; "" for None and Unrecognised.
std::string_view templateMarkupName(TemplateFamily family);

} // namespace sinkscope
