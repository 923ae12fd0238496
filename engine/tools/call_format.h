// How a model writes its tool calls, as its own chat template renders them. chat/ finds the format
// from the template's render of a probe call; needle-nano and models without a template use
// needleCallFormat().
#pragma once

#include <string>

namespace sinkscope {

enum class CallSyntax {
    JsonList,      // open "[" call (", "|"," call)* "]" close     Needle (compact), SmolLM (spaced)
    TaggedObjects, // open "\n" call "\n" close, repeated, "\n" between blocks   Qwen2.5, Hermes
    BareObject,    // one call, the whole reply, no tags                          Llama-3.x
};
const char* callSyntaxName(CallSyntax syntax); // "json-list", "tagged-objects", "bare-object"

struct CallFormat {
    CallSyntax syntax = CallSyntax::JsonList;
    std::string open = "<tool_call>";        // "" for BareObject
    std::string close = "</tool_call>";      // "" for BareObject
    std::string argumentsKey = "arguments";  // Llama-3: "parameters"
    bool spaced = false; // ", " and ": " between JSON items (json.dumps, Hugging Face's tojson)
    int maxCalls = 0;    // 0: any number; 1 where the template accepts only one call
    bool operator==(const CallFormat&) const = default;
};

CallFormat needleCallFormat(); // JsonList, compact, "arguments", any number of calls

} // namespace sinkscope
