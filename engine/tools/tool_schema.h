// Tool schemas: a JSON array of tools in the Needle / OpenAI form
//   {"name": "set_light", "description": "...",
//    "parameters": {"type": "object", "properties": {...}, "required": [...]}}
// or wrapped as {"type": "function", "function": {...}}, read into value types the call grammar
// and the call validator work from.
//
// Supported JSON-Schema subset, per value: "type" (string, integer, number, boolean, array with
// "items", object with "properties" and "required"), "enum", "const", "minimum", "maximum",
// "exclusiveMinimum", "exclusiveMaximum" (a number, or draft 4's boolean), "minLength",
// "maxLength", "minItems", "maxItems", "default", "description", and "additionalProperties":
// false (what the grammar always does). Any other keyword, or a known one on a type it does not
// apply to, is a warning ("unsupported keyword"), never a silent drop. A missing "type" is
// inferred from "enum"/"const" values of one JSON type; "parameters" defaults to an object.
//
// Errors name their place: invalid JSON by line and column; schema errors by a JSON pointer,
// e.g. `/2/parameters/properties/brightness/type: unknown type "int"`; duplicate tool names and
// names that are not identifiers ([A-Za-z_][A-Za-z0-9_]*). Every issue also carries the byte
// offset, line and column of the place it names, for an editor to mark it.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sinkscope {

enum class ValueType { String, Integer, Number, Boolean, Array, Object };
const char* valueTypeName(ValueType type); // "string", "integer", ...

struct NumericBound {
    double value = 0;
    bool exclusive = false;
};

struct PropertySchema;

// One value's schema, after parsing: only the supported keywords survive (the warnings list the
// others).
struct ValueSchema {
    ValueType type = ValueType::String;
    std::string description;
    std::vector<nlohmann::ordered_json> enumValues; // empty: no enum
    std::optional<nlohmann::ordered_json> constValue;
    std::optional<nlohmann::ordered_json> defaultValue;
    std::optional<NumericBound> minimum;      // integer, number
    std::optional<NumericBound> maximum;      // integer, number
    std::optional<int64_t> minLength;         // string, in characters (code points)
    std::optional<int64_t> maxLength;         // string
    std::optional<int64_t> minItems;          // array
    std::optional<int64_t> maxItems;          // array
    std::shared_ptr<const ValueSchema> items; // array: the schema of every element
    std::vector<PropertySchema> properties;   // object: in written order

    // The values an enum or const restricts this to (const wins); empty when unrestricted.
    std::vector<nlohmann::ordered_json> allowedValues() const;
};

struct PropertySchema {
    std::string name;
    ValueSchema schema;
    bool required = false;
};

struct ToolSchema {
    std::string name;
    std::string description;
    ValueSchema parameters;            // type Object
    nlohmann::ordered_json definition; // the tool object as written, unwrapped from "function"
};

struct ToolSet {
    std::vector<ToolSchema> tools;

    const ToolSchema* find(std::string_view name) const;
    int indexOf(std::string_view name) const; // -1 when not declared
    // The definitions as one compact JSON array, keys in their written order: the text the chat
    // template pins as the tool block.
    std::string compactJson() const;
};

struct SchemaIssue {
    std::string pointer; // JSON pointer of the place ("" for the whole document)
    std::string message;
    size_t offset = 0; // byte offset of that place in the text
    int line = 1;      // 1-based
    int column = 1;    // 1-based, in bytes
    // "pointer: message", or the message alone for the whole document / invalid JSON.
    std::string text() const;
};

struct ToolsParseResult {
    std::optional<ToolSet> tools; // set only when there are no errors
    std::vector<SchemaIssue> errors;
    std::vector<SchemaIssue> warnings;
    bool ok() const { return errors.empty(); }
    // The errors' text() joined with "; " (empty when ok).
    std::string errorSummary() const;
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

// Parses and validates a JSON array of tools. Pure: bytes in, tools or issues out.
ToolsParseResult parseTools(std::string_view json);
// The same over an already parsed value (e.g. a preset's "tools"); issues carry no positions
// unless `sourceText` holds the text `value` was parsed from and `pointerPrefix` its place there.
ToolsParseResult parseToolsValue(const nlohmann::ordered_json& value,
                                 std::string_view sourceText = {},
                                 std::string_view pointerPrefix = {});

// Checks `value` against `schema`, appending "pointer: message" errors (pointer = `pointer` plus
// the path inside the value). Enum/const, type, bounds, lengths, items, required and undeclared
// properties. Returns true when it added no error.
bool validateValue(const ValueSchema& schema, const nlohmann::ordered_json& value,
                   const std::string& pointer, std::vector<std::string>& errors);

// Code points in UTF-8 text (bytes that are not continuation bytes).
int64_t utf8Length(std::string_view text);

} // namespace sinkscope
