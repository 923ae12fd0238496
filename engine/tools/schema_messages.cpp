#include "tools/schema_messages.h"

#include <cmath>
#include <cstdint>

namespace sinkscope::schema_messages {

using Json = nlohmann::ordered_json;

std::string withArticle(std::string_view noun) {
    const bool vowel =
        !noun.empty() && std::string_view("aeiou").find(noun[0]) != std::string_view::npos;
    return std::string(vowel ? "an " : "a ") + std::string(noun);
}

std::string jsonTypeName(const Json& value) {
    if (value.is_number_integer()) return "integer";
    return value.type_name();
}

std::string briefJson(const Json& value) {
    constexpr size_t kLongest = 40;
    if (value.is_array() || value.is_object()) return withArticle(value.type_name());
    std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
    if (text.size() > kLongest) text = text.substr(0, kLongest) + "...";
    return text;
}

std::string quotedJson(std::string_view text) {
    return Json(std::string(text)).dump();
}

std::string formatNumber(double value) {
    if (std::floor(value) == value && std::fabs(value) < 1e15)
        return std::to_string(static_cast<int64_t>(value));
    return Json(value).dump();
}

} // namespace sinkscope::schema_messages
