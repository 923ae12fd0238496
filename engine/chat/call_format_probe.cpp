#include "chat/call_format_probe.h"

#include <nlohmann/json.hpp>

#include <vector>

namespace sinkscope {

namespace {

struct ObjectSpan {
    size_t begin = 0;
    size_t end = 0; // exclusive
    nlohmann::ordered_json value;
};

// The end of the balanced {...} starting at `begin` (strings skipped), npos when unbalanced.
size_t objectEnd(std::string_view text, size_t begin) {
    int depth = 0;
    bool inString = false;
    for (size_t i = begin; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                inString = false;
        } else if (c == '"') {
            inString = true;
        } else if (c == '{') {
            ++depth;
        } else if (c == '}' && --depth == 0) {
            return i + 1;
        }
    }
    return std::string_view::npos;
}

// The top-level JSON objects with a "name" in `text`, in order.
std::vector<ObjectSpan> callObjects(std::string_view text) {
    std::vector<ObjectSpan> objects;
    for (size_t at = text.find('{'); at != std::string_view::npos; at = text.find('{', at)) {
        const size_t end = objectEnd(text, at);
        if (end == std::string_view::npos) break;
        nlohmann::ordered_json value =
            nlohmann::ordered_json::parse(text.substr(at, end - at), nullptr, false);
        if (value.is_object() && value.contains("name")) {
            objects.push_back({at, end, std::move(value)});
            at = end;
        } else {
            ++at;
        }
    }
    return objects;
}

std::string_view trimmed(std::string_view text) {
    constexpr std::string_view kSpace = " \t\n\r";
    const size_t first = text.find_first_not_of(kSpace);
    if (first == std::string_view::npos) return {};
    return text.substr(first, text.find_last_not_of(kSpace) - first + 1);
}

} // namespace

std::optional<CallFormat> callFormatFromRender(std::string_view oneCall,
                                               std::optional<std::string_view> twoCalls,
                                               std::string& error) {
    const std::vector<ObjectSpan> objects = callObjects(oneCall);
    if (objects.size() != 1) {
        error = "the template's probe call does not hold one {\"name\": ...} object";
        return std::nullopt;
    }
    const ObjectSpan& call = objects.front();
    CallFormat format;
    for (const auto& [key, value] : call.value.items())
        if (key != "name" && value.is_object()) {
            format.argumentsKey = key;
            break;
        }
    const std::string_view objectText = oneCall.substr(call.begin, call.end - call.begin);
    format.spaced = objectText.find("\"name\": ") != std::string_view::npos;
    const std::string_view before = trimmed(oneCall.substr(0, call.begin));
    const std::string_view after = trimmed(oneCall.substr(call.end));
    if (before.ends_with('[') && after.starts_with(']')) {
        format.syntax = CallSyntax::JsonList;
        format.open = trimmed(before.substr(0, before.size() - 1));
        format.close = trimmed(after.substr(1));
    } else if (before.empty() && after.empty()) {
        format.syntax = CallSyntax::BareObject;
        format.open.clear();
        format.close.clear();
    } else if (!before.empty() && !after.empty()) {
        format.syntax = CallSyntax::TaggedObjects;
        format.open = before;
        format.close = after;
    } else {
        error = "the template writes its probe call with text on one side only: \"" +
                std::string(before) + "\" ... \"" + std::string(after) + "\"";
        return std::nullopt;
    }
    format.maxCalls = 1;
    if (twoCalls && callObjects(*twoCalls).size() == 2) format.maxCalls = 0;
    if (format.syntax == CallSyntax::BareObject) format.maxCalls = 1; // one object is the reply
    return format;
}

} // namespace sinkscope
