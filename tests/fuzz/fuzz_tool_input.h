// The input of the tool-call fuzz targets: a JSON array of tool schemas, one 0 byte, then the
// text a model wrote for the call. Seeds pair each shipped preset with calls for it. The targets
// read that text in every call format.
#pragma once

#include "tools/call_format.h"
#include "tools/tool_schema.h"

#include <array>
#include <optional>
#include <string_view>

namespace sinkscope::fuzz {

struct ToolCallInput {
    ToolSet tools;
    std::string_view callText;
};

// nullopt when there is no 0 byte or the schema part is not a valid tool set.
inline std::optional<ToolCallInput> readToolCallInput(std::string_view bytes) {
    const size_t separator = bytes.find('\0');
    if (separator == std::string_view::npos) return std::nullopt;
    ToolsParseResult parsed = parseTools(bytes.substr(0, separator));
    if (!parsed.tools) return std::nullopt;
    return ToolCallInput{std::move(*parsed.tools), bytes.substr(separator + 1)};
}

// Needle's and the reference templates' formats, and Qwen's with one call at most.
inline std::array<CallFormat, 5> callFormats() {
    CallFormat singleBlock = qwenCallFormat();
    singleBlock.maxCalls = 1;
    return {needleCallFormat(), smolLmCallFormat(), qwenCallFormat(), llama3CallFormat(),
            singleBlock};
}

} // namespace sinkscope::fuzz
