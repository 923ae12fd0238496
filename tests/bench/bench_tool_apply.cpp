// Time to pin a tool block, then to apply it again with its last tool's description edited, as
// the playground's Apply does (ToolChat::replaceTools): the second build takes over the pinned
// tokens the two blocks share (rebuildSession's `previous`). Not a test: run it by hand,
//   build/tests/bench_tool_apply MODEL.gguf TOOLS.json [threads]
// TOOLS.json is a JSON array of tools. Prints one JSON object.
#include "session/tool_chat.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

using namespace sinkscope;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

ToolSet toolsFrom(const nlohmann::ordered_json& json) {
    ToolsParseResult parsed = parseTools(json.dump());
    if (!parsed.tools) throw std::runtime_error("tools: " + parsed.errorSummary());
    return *parsed.tools;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s MODEL.gguf TOOLS.json [threads]\n", argv[0]);
        return 2;
    }
    try {
        std::string error;
        const std::unique_ptr<Model> model = Model::load(argv[1], error);
        if (!model) throw std::runtime_error(error);
        std::ifstream file(argv[2]);
        const auto json = nlohmann::ordered_json::parse(
            std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()));
        nlohmann::ordered_json edited = json;
        edited.back()["description"] = edited.back().value("description", "") + " (edited)";
        SessionOptions options;
        options.threads = argc > 3 ? std::stoi(argv[3]) : 1;

        auto start = Clock::now();
        ToolChat chat(*model, options, toolsFrom(json));
        const double pinSeconds = secondsSince(start);
        start = Clock::now();
        const RebuildReport report = chat.replaceTools(toolsFrom(edited), "");
        const double applySeconds = secondsSince(start);
        const nlohmann::ordered_json out = {{"block_tokens", report.sinkTokens},
                                            {"threads", options.threads},
                                            {"first_pin_seconds", pinSeconds},
                                            {"apply_edited_last_tool_seconds", applySeconds},
                                            {"reused_sink_tokens", report.reusedSinkTokens}};
        std::printf("%s\n", out.dump(2).c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_tool_apply: %s\n", e.what());
        return 1;
    }
    return 0;
}
