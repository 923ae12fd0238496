#include "tools/tool_calls.h"

#include "tools/json_location.h"
#include "tools/json_text.h"
#include "tools/value_validation.h"

namespace sinkscope {

namespace {

using Json = nlohmann::ordered_json;

// One call: {"name": "...", "<argumentsKey>": {...}} and nothing else. `pointer` names its place
// ("" for the whole document).
std::optional<FunctionCall> readCall(const Json& element, const std::string& pointer,
                                     const std::string& argumentsKey,
                                     std::vector<std::string>& errors) {
    const std::string where = pointer.empty() ? "the call" : pointer;
    if (!element.is_object()) {
        errors.push_back(where + ": expected a call object, got " +
                         std::string(element.type_name()));
        return std::nullopt;
    }
    FunctionCall call;
    bool ok = true;
    const auto name = element.find("name");
    if (name == element.end() || !name->is_string()) {
        errors.push_back(name == element.end() ? where + ": missing \"name\""
                                               : pointer + "/name: expected a string");
        ok = false;
    } else {
        call.name = name->get<std::string>();
    }
    const auto arguments = element.find(argumentsKey);
    if (arguments == element.end() || !arguments->is_object()) {
        errors.push_back(arguments == element.end()
                             ? where + ": missing " + Json(argumentsKey).dump()
                             : pointer + "/" + escapeJsonPointerToken(argumentsKey) +
                                   ": expected an object");
        ok = false;
    } else {
        call.arguments = *arguments;
    }
    for (const auto& [key, value] : element.items())
        if (key != "name" && key != argumentsKey)
            errors.push_back(pointer + "/" + escapeJsonPointerToken(key) + ": not part of a call");
    if (!ok) return std::nullopt;
    return call;
}

// Reads one call and validates it against the tool of its name.
void readAndValidate(const Json& element, const std::string& pointer, const ToolSet& tools,
                     const CallFormat& format, CallsParseResult& result) {
    std::optional<FunctionCall> call =
        readCall(element, pointer, format.argumentsKey, result.errors);
    if (!call) return;
    if (const ToolSchema* tool = tools.find(call->name))
        validateValue(tool->parameters, call->arguments,
                      pointer + "/" + escapeJsonPointerToken(format.argumentsKey), result.errors);
    else
        result.errors.push_back(pointer + "/name: " + Json(call->name).dump() +
                                " is not a declared tool");
    result.calls.push_back(std::move(*call));
}

std::optional<Json> parseDocument(std::string_view text, const std::string& prefix,
                                  std::vector<std::string>& errors) {
    JsonDocument document = parseJsonDocument(text);
    if (document.syntaxError) {
        errors.push_back(prefix + document.syntaxError->message);
        return std::nullopt;
    }
    return std::move(document.value);
}

void parseList(std::string_view body, const ToolSet& tools, const CallFormat& format,
               CallsParseResult& result) {
    const std::optional<Json> root = parseDocument(body, "", result.errors);
    if (!root) return;
    if (!root->is_array()) {
        result.errors.push_back("expected a JSON array of calls, got " +
                                std::string(root->type_name()));
        return;
    }
    if (root->empty()) result.errors.push_back("the array of calls is empty");
    for (size_t i = 0; i < root->size(); ++i)
        readAndValidate((*root)[i], "/" + std::to_string(i), tools, format, result);
}

void parseBlocks(std::string_view body, const ToolSet& tools, const CallFormat& format,
                 CallsParseResult& result) {
    // A raw newline cannot occur inside a JSON string, so the separator never splits a call.
    const std::string separator = "\n" + format.close + "\n" + format.open;
    for (size_t block = 0, start = 0;; ++block) {
        const size_t found = body.find(separator, start);
        const std::string_view text = body.substr(start, found - start);
        const std::string pointer = "/" + std::to_string(block);
        if (const std::optional<Json> call =
                parseDocument(text, "block " + std::to_string(block) + ": ", result.errors))
            readAndValidate(*call, pointer, tools, format, result);
        if (found == std::string_view::npos) break;
        start = found + separator.size();
    }
}

std::string callObject(const FunctionCall& call, const CallFormat& format) {
    return jsonText(Json{{"name", call.name}, {format.argumentsKey, call.arguments}},
                    format.spaced);
}

} // namespace

std::string callsJson(std::span<const FunctionCall> calls) {
    return callsBody(calls, needleCallFormat());
}

std::string callsText(std::span<const FunctionCall> calls, const CallFormat& format) {
    return format.open + callsBody(calls, format) + format.close;
}

std::string callsBody(std::span<const FunctionCall> calls, const CallFormat& format) {
    std::string body;
    switch (format.syntax) {
    case CallSyntax::JsonList:
        body = "[";
        for (size_t i = 0; i < calls.size(); ++i)
            body += (i == 0 ? "" : format.spaced ? ", " : ",") + callObject(calls[i], format);
        return body + "]";
    case CallSyntax::TaggedObjects:
        for (size_t i = 0; i < calls.size(); ++i)
            body += (i == 0 ? "" : format.close + "\n" + format.open) + "\n" +
                    callObject(calls[i], format) + "\n";
        return body;
    case CallSyntax::BareObject:
        for (const FunctionCall& call : calls)
            body += callObject(call, format);
        return body;
    }
    return body;
}

CallsParseResult parseCalls(std::string_view json, const ToolSet& tools) {
    return parseCalls(json, tools, needleCallFormat());
}

CallsParseResult parseCalls(std::string_view body, const ToolSet& tools, const CallFormat& format) {
    CallsParseResult result;
    switch (format.syntax) {
    case CallSyntax::JsonList:
        parseList(body, tools, format, result);
        break;
    case CallSyntax::TaggedObjects:
        parseBlocks(body, tools, format, result);
        break;
    case CallSyntax::BareObject:
        if (const std::optional<Json> call = parseDocument(body, "", result.errors))
            readAndValidate(*call, "", tools, format, result);
        break;
    }
    if (format.maxCalls > 0 && static_cast<int>(result.calls.size()) > format.maxCalls)
        result.errors.push_back(std::to_string(result.calls.size()) + " calls where the format " +
                                "takes at most " + std::to_string(format.maxCalls));
    return result;
}

CallsParseResult parseCallsText(std::string_view text, const ToolSet& tools,
                                const CallFormat& format) {
    if (!text.starts_with(format.open) || !text.ends_with(format.close) ||
        text.size() < format.open.size() + format.close.size()) {
        CallsParseResult result;
        result.errors.push_back("expected the calls between " + Json(format.open).dump() + " and " +
                                Json(format.close).dump());
        return result;
    }
    text.remove_prefix(format.open.size());
    text.remove_suffix(format.close.size());
    return parseCalls(text, tools, format);
}

nlohmann::ordered_json CallAttribution::toJson() const {
    Json shares = Json::object();
    for (const ToolShare& share : tools)
        shares[share.tool] = share.share;
    shares["other"] = other;
    return shares;
}

const char* responseTypeName(ResponseType type) {
    return type == ResponseType::Call ? "call" : "text";
}

nlohmann::ordered_json ToolResponse::toJson() const {
    Json calls = Json::array();
    for (const FunctionCall& call : functionCalls)
        calls.push_back(Json{{"name", call.name}, {"arguments", call.arguments}});
    Json shares = Json::array();
    for (const CallAttribution& item : attribution)
        shares.push_back(item.toJson());
    return Json{
        {"type", responseTypeName(type)},
        {"function_calls", calls},
        {"text", text},
        {"confidence", confidence},
        {"prefill_tokens_per_s", prefillTokensPerSecond},
        {"decode_tokens_per_s", decodeTokensPerSecond},
        {"error", error.empty() ? Json(nullptr) : Json(error)},
        {"attribution", shares},
    };
}

} // namespace sinkscope
