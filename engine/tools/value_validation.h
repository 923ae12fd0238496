// Checks a JSON value against a parsed ValueSchema (tool_schema.h): enum/const, type, bounds,
// lengths, items, required and undeclared properties. The call validator checks a call's
// arguments with it, and the schema parser its enum, const and default values.
#pragma once

#include "tools/tool_schema.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sinkscope {

// One thing wrong with a value: where (a JSON pointer) and what.
struct ValueProblem {
    std::string pointer;
    std::string message;
};

// Appends the problems of `value` (pointers = `pointer` plus the path inside the value). Returns
// true when it added none.
bool validateValue(const ValueSchema& schema, const nlohmann::ordered_json& value,
                   const std::string& pointer, std::vector<ValueProblem>& problems);
// The same, each problem appended as "pointer: message".
bool validateValue(const ValueSchema& schema, const nlohmann::ordered_json& value,
                   const std::string& pointer, std::vector<std::string>& errors);

// Code points in UTF-8 text (bytes that are not continuation bytes).
int64_t utf8Length(std::string_view text);

} // namespace sinkscope
