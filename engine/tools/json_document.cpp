#include "tools/json_document.h"

#include "tools/json_location.h"

#include <algorithm>

namespace sinkscope {

namespace {

using Json = nlohmann::ordered_json;

constexpr int kMaxDocumentDepth = 64; // any JSON read here: copying and printing recurse

// The text of nlohmann's parse error after its own position ("... column 13: syntax error ...").
std::string parseErrorDetail(const char* what) {
    const std::string_view message = what;
    const size_t column = message.find("column ");
    const size_t colon = column == std::string_view::npos ? column : message.find(": ", column);
    return std::string(colon == std::string_view::npos ? message : message.substr(colon + 2));
}

// "invalid JSON at line L, column C: what", placed at `offset`.
SchemaIssue positionedIssue(std::string_view text, size_t offset, const std::string& what) {
    SchemaIssue issue;
    issue.offset = offset;
    const TextPosition position = textPosition(text, offset);
    issue.line = position.line;
    issue.column = position.column;
    issue.message = "invalid JSON at line " + std::to_string(position.line) + ", column " +
                    std::to_string(position.column) + ": " + what;
    return issue;
}

} // namespace

std::string SchemaIssue::text() const {
    return pointer.empty() ? message : pointer + ": " + message;
}

SchemaIssue locatedIssue(std::string_view sourceText, std::string pointer, std::string message) {
    SchemaIssue issue{std::move(pointer), std::move(message)};
    // Missing keys have no place of their own: mark the nearest enclosing value.
    std::string place = issue.pointer;
    std::optional<size_t> offset = locateJsonPointer(sourceText, place);
    while (!offset && !place.empty()) {
        place.erase(place.rfind('/'));
        offset = locateJsonPointer(sourceText, place);
    }
    issue.offset = offset.value_or(0);
    const TextPosition position = textPosition(sourceText, issue.offset);
    issue.line = position.line;
    issue.column = position.column;
    return issue;
}

JsonDocument parseJsonDocument(std::string_view text) {
    JsonDocument document;
    if (const std::optional<size_t> deep = firstOffsetDeeperThan(text, kMaxDocumentDepth)) {
        document.syntaxError = positionedIssue(text, *deep,
                                               "JSON nested deeper than " +
                                                   std::to_string(kMaxDocumentDepth) + " levels");
        return document;
    }
    try {
        document.value = Json::parse(text);
    } catch (const Json::parse_error& e) {
        // e.byte counts the bytes read, the offending one included.
        const size_t offset = e.byte > 0 ? std::min<size_t>(e.byte - 1, text.size()) : 0;
        document.syntaxError = positionedIssue(text, offset, parseErrorDetail(e.what()));
    } catch (const Json::exception& e) {
        document.syntaxError = positionedIssue(text, 0, e.what());
    }
    return document;
}

} // namespace sinkscope
