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

#include "tools/json_document.h"

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

struct ToolsParseResult {
    std::optional<ToolSet> tools; // set only when there are no errors
    std::vector<SchemaIssue> errors;
    std::vector<SchemaIssue> warnings;
    bool ok() const { return errors.empty(); }
    // The errors' text() joined with "; " (empty when ok).
    std::string errorSummary() const;
};

// Parses and validates a JSON array of tools. Pure: bytes in, tools or issues out.
ToolsParseResult parseTools(std::string_view json);
// The same over an already parsed value (e.g. a preset's "tools"); issues carry no positions
// unless `sourceText` holds the text `value` was parsed from and `pointerPrefix` its place there.
ToolsParseResult parseToolsValue(const nlohmann::ordered_json& value,
                                 std::string_view sourceText = {},
                                 std::string_view pointerPrefix = {});

} // namespace sinkscope
