#include "chat/template_family.h"

namespace sinkscope {

namespace {

bool has(std::string_view source, std::string_view marker) {
    return source.find(marker) != std::string_view::npos;
}

} // namespace

TemplateFamily templateFamily(std::string_view source) {
    if (source.empty()) return TemplateFamily::None;
    if (has(source, "<|im_start|>"))
        return has(source, "<tool_call>") ? TemplateFamily::ChatMlTools : TemplateFamily::ChatMl;
    if (has(source, "<|start_header_id|>")) return TemplateFamily::Llama3;
    if (has(source, "[INST]"))
        return has(source, "[TOOL_CALLS]") ? TemplateFamily::MistralTools : TemplateFamily::Mistral;
    if (has(source, "<start_of_turn>")) return TemplateFamily::Gemma;
    if (has(source, "<|user|>") && has(source, "<|end|>")) return TemplateFamily::Phi3;
    return TemplateFamily::Unrecognised;
}

std::string_view templateFamilyName(TemplateFamily family) {
    switch (family) {
    case TemplateFamily::None:
        return "none";
    case TemplateFamily::Needle:
        return "Needle (built in)";
    case TemplateFamily::ChatMlTools:
        return "ChatML (Qwen2.5 / Hermes tool calls)";
    case TemplateFamily::MistralTools:
        return "Mistral (with [TOOL_CALLS])";
    case TemplateFamily::Unrecognised:
        return "unrecognised";
    case TemplateFamily::ChatMl:
    case TemplateFamily::Llama3:
    case TemplateFamily::Mistral:
    case TemplateFamily::Gemma:
    case TemplateFamily::Phi3:
        break;
    }
    return templateMarkupName(family);
}

std::string_view templateMarkupName(TemplateFamily family) {
    switch (family) {
    case TemplateFamily::Needle:
        return "Needle";
    case TemplateFamily::ChatMlTools:
    case TemplateFamily::ChatMl:
        return "ChatML";
    case TemplateFamily::Llama3:
        return "Llama 3";
    case TemplateFamily::MistralTools:
    case TemplateFamily::Mistral:
        return "Mistral";
    case TemplateFamily::Gemma:
        return "Gemma";
    case TemplateFamily::Phi3:
        return "Phi-3";
    case TemplateFamily::None:
    case TemplateFamily::Unrecognised:
        break;
    }
    return "";
}

} // namespace sinkscope
