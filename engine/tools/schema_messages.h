// How the schema parser and the value validator word their messages: values quoted briefly (never
// a whole large value), types with their article, numbers as people write them.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace sinkscope::schema_messages {

// "a string", "an integer": for "expected ..." messages.
std::string withArticle(std::string_view noun);
// The JSON type of a value, with integers told apart from other numbers.
std::string jsonTypeName(const nlohmann::ordered_json& value);
// A value as messages quote it: scalars as JSON (long strings cut), containers by their kind,
// so that a message never prints (or recurses into) a large value.
std::string briefJson(const nlohmann::ordered_json& value);
// Text as a JSON string literal.
std::string quotedJson(std::string_view text);
// Integral doubles as integers ("100", not "100.0"); others as the shortest round-trip text.
std::string formatNumber(double value);

} // namespace sinkscope::schema_messages
