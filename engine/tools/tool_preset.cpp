#include "tools/tool_preset.h"

#include "tools/json_location.h"

#include <algorithm>

namespace sinkscope {

namespace {

using Json = nlohmann::ordered_json;

// A string member, "" when absent; an error when present but not a string.
std::string readText(const Json& root, const char* key, bool required, std::string_view text,
                     std::vector<SchemaIssue>& errors) {
    const auto found = root.find(key);
    if (found == root.end()) {
        if (required)
            errors.push_back(locatedIssue(text, "", std::string("missing \"") + key + "\""));
        return {};
    }
    if (!found->is_string()) {
        errors.push_back(locatedIssue(text, std::string("/") + key, "expected a string"));
        return {};
    }
    return found->get<std::string>();
}

void readResults(const Json& root, const ToolSet& tools, std::string_view text, ToolPreset& preset,
                 std::vector<SchemaIssue>& errors) {
    const auto results = root.find("results");
    if (results == root.end()) return;
    if (!results->is_object()) {
        errors.push_back(
            locatedIssue(text, "/results", "expected an object of tool name -> result"));
        return;
    }
    for (const auto& [name, result] : results->items()) {
        if (!tools.find(name))
            errors.push_back(locatedIssue(text, "/results/" + escapeJsonPointerToken(name),
                                          "\"" + name + "\" is not a declared tool"));
        else
            preset.results.emplace(name, result);
    }
}

} // namespace

PresetParseResult parsePreset(std::string_view json) {
    PresetParseResult result;
    JsonDocument document = parseJsonDocument(json);
    if (document.syntaxError) {
        result.errors.push_back(std::move(*document.syntaxError));
        return result;
    }
    const Json& root = document.value;
    if (!root.is_object()) {
        result.errors.push_back(locatedIssue(json, "", "a preset must be a JSON object"));
        return result;
    }
    ToolPreset preset;
    preset.name = readText(root, "name", true, json, result.errors);
    preset.description = readText(root, "description", false, json, result.errors);
    preset.query = readText(root, "query", false, json, result.errors);
    if (const auto expect = root.find("expect_call"); expect != root.end()) {
        if (expect->is_boolean())
            preset.expectCall = expect->get<bool>();
        else
            result.errors.push_back(locatedIssue(json, "/expect_call", "expected true or false"));
    }
    for (const auto& [key, value] : root.items()) {
        static const char* const known[] = {"name",  "description", "query",
                                            "tools", "results",     "expect_call"};
        if (std::ranges::find(known, key) == std::end(known))
            result.warnings.push_back(
                locatedIssue(json, "/" + escapeJsonPointerToken(key),
                             "unsupported keyword \"" + key + "\" (ignored)"));
    }
    const auto tools = root.find("tools");
    if (tools == root.end()) {
        result.errors.push_back(locatedIssue(json, "", "missing \"tools\""));
        return result;
    }
    ToolsParseResult parsed = parseToolsValue(*tools, json, "/tools");
    result.errors.insert(result.errors.end(), parsed.errors.begin(), parsed.errors.end());
    result.warnings.insert(result.warnings.end(), parsed.warnings.begin(), parsed.warnings.end());
    if (!parsed.tools) return result;
    preset.tools = std::move(*parsed.tools);
    readResults(root, preset.tools, json, preset, result.errors);
    if (result.errors.empty()) result.preset = std::move(preset);
    return result;
}

} // namespace sinkscope
