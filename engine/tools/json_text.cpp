#include "tools/json_text.h"

namespace sinkscope {

namespace {

using Json = nlohmann::ordered_json;

std::string compactText(const Json& value) {
    return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

void appendSpaced(const Json& value, std::string& out) {
    if (value.is_object()) {
        out += '{';
        bool first = true;
        for (const auto& [key, item] : value.items()) {
            out += first ? "" : ", ";
            first = false;
            out += compactText(Json(key));
            out += ": ";
            appendSpaced(item, out);
        }
        out += '}';
    } else if (value.is_array()) {
        out += '[';
        for (size_t i = 0; i < value.size(); ++i) {
            out += i == 0 ? "" : ", ";
            appendSpaced(value[i], out);
        }
        out += ']';
    } else {
        out += compactText(value);
    }
}

} // namespace

std::string jsonText(const nlohmann::ordered_json& value, bool spaced) {
    if (!spaced) return compactText(value);
    std::string out;
    appendSpaced(value, out);
    return out;
}

} // namespace sinkscope
