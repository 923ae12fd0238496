// A preset: a tool set with a sample query, as a JSON file in resources/presets/:
//   {"name": "Smart home", "description": "...", "query": "...", "tools": [ ... ],
//    "results": {"set_light": {"ok": true}},   optional: a canned result per tool
//    "expect_call": false}                      optional (true): whether the query should call
#pragma once

#include "tools/tool_schema.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sinkscope {

struct ToolPreset {
    std::string name;
    std::string description;
    std::string query;
    ToolSet tools;
    std::map<std::string, nlohmann::ordered_json> results; // tool name -> canned result
    bool expectCall = true;
};

struct PresetParseResult {
    std::optional<ToolPreset> preset; // set only when there are no errors
    std::vector<SchemaIssue> errors;  // pointers into the preset file ("/tools/2/name")
    std::vector<SchemaIssue> warnings;
    bool ok() const { return errors.empty(); }
};

// Parses and validates a preset file. Pure.
PresetParseResult parsePreset(std::string_view json);

} // namespace sinkscope
