#include "tools/tool_calls.h"

#include "tools/json_location.h"
#include "tools/value_validation.h"

namespace sinkscope {

namespace {

using Json = nlohmann::ordered_json;

// One element of the array: {"name": "...", "arguments": {...}} and nothing else.
std::optional<FunctionCall> readCall(const Json& element, const std::string& pointer,
                                     std::vector<std::string>& errors) {
    if (!element.is_object()) {
        errors.push_back(pointer + ": expected a call object, got " +
                         std::string(element.type_name()));
        return std::nullopt;
    }
    FunctionCall call;
    bool ok = true;
    const auto name = element.find("name");
    if (name == element.end() || !name->is_string()) {
        errors.push_back(
            pointer + (name == element.end() ? ": missing \"name\"" : "/name: expected a string"));
        ok = false;
    } else {
        call.name = name->get<std::string>();
    }
    const auto arguments = element.find("arguments");
    if (arguments == element.end() || !arguments->is_object()) {
        errors.push_back(pointer + (arguments == element.end() ? ": missing \"arguments\""
                                                               : "/arguments: expected an object"));
        ok = false;
    } else {
        call.arguments = *arguments;
    }
    for (const auto& [key, value] : element.items())
        if (key != "name" && key != "arguments")
            errors.push_back(pointer + "/" + escapeJsonPointerToken(key) + ": not part of a call");
    if (!ok) return std::nullopt;
    return call;
}

} // namespace

std::string callsJson(std::span<const FunctionCall> calls) {
    Json array = Json::array();
    for (const FunctionCall& call : calls)
        array.push_back(Json{{"name", call.name}, {"arguments", call.arguments}});
    return array.dump(-1, ' ', false, Json::error_handler_t::replace);
}

CallsParseResult parseCalls(std::string_view json, const ToolSet& tools) {
    CallsParseResult result;
    JsonDocument document = parseJsonDocument(json);
    if (document.syntaxError) {
        result.errors.push_back(document.syntaxError->message);
        return result;
    }
    const Json& root = document.value;
    if (!root.is_array()) {
        result.errors.push_back("expected a JSON array of calls, got " +
                                std::string(root.type_name()));
        return result;
    }
    if (root.empty()) result.errors.push_back("the array of calls is empty");
    for (size_t i = 0; i < root.size(); ++i) {
        const std::string pointer = "/" + std::to_string(i);
        std::optional<FunctionCall> call = readCall(root[i], pointer, result.errors);
        if (!call) continue;
        if (const ToolSchema* tool = tools.find(call->name))
            validateValue(tool->parameters, call->arguments, pointer + "/arguments", result.errors);
        else
            result.errors.push_back(pointer + "/name: " + Json(call->name).dump() +
                                    " is not a declared tool");
        result.calls.push_back(std::move(*call));
    }
    return result;
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
