// A JSON document read from text a person wrote (tools, presets, tool results), and issues placed
// in that text: by line and column for broken syntax, by JSON pointer for a value that is wrong.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace sinkscope {

struct SchemaIssue {
    std::string pointer; // JSON pointer of the place ("" for the whole document)
    std::string message;
    size_t offset = 0; // byte offset of that place in the text
    int line = 1;      // 1-based
    int column = 1;    // 1-based, in bytes
    // "pointer: message", or the message alone for the whole document / invalid JSON.
    std::string text() const;
};

// An issue placed at the value `pointer` names in `sourceText`, or at its nearest enclosing value
// when it names nothing there (a missing key).
SchemaIssue locatedIssue(std::string_view sourceText, std::string pointer, std::string message);

// A JSON document, or the issue that says where its syntax breaks ("invalid JSON at line 3,
// column 14: ..."). Pure; never throws.
struct JsonDocument {
    nlohmann::ordered_json value;
    std::optional<SchemaIssue> syntaxError;
};
JsonDocument parseJsonDocument(std::string_view text);

} // namespace sinkscope
