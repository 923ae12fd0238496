#include "run_tools.h"

#include "cli_common.h"
#include "session/tool_chat.h"
#include "tools/tool_preset.h"

#include <iostream>

namespace sinkscope::cli {

namespace {

constexpr int64_t kMaxTurnTokens = 1 << 16;

[[noreturn]] void throwIssues(const std::string& path, const std::vector<SchemaIssue>& errors) {
    std::string message = "tools file '" + path + "': " + errors.front().text();
    if (errors.size() > 1) message += " (and " + std::to_string(errors.size() - 1) + " more)";
    throw InputError(message);
}

constexpr Choice<bool> kOnOffChoices[] = {{"on", true}, {"off", false}};
constexpr Choice<CallPolicy> kCallChoices[] = {
    {"auto", CallPolicy::Auto}, {"required", CallPolicy::Required}, {"none", CallPolicy::None}};

nlohmann::ordered_json toolTokens(const ToolBlock& block) {
    nlohmann::ordered_json counts = nlohmann::ordered_json::object();
    for (const ToolTokenRange& tool : block.tools)
        counts[tool.name] = tool.count();
    return counts;
}

nlohmann::ordered_json report(const ToolChat& chat, const ToolResponse& response,
                              const RespondOptions& options,
                              const std::vector<SchemaIssue>& warnings) {
    nlohmann::ordered_json out = response.toJson();
    const Session& session = chat.session();
    const SinkBudget budget = chat.budget();
    std::vector<int32_t> promptIds = chat.toolBlock().tokens;
    const std::vector<int32_t> transcript = chat.conversation().transcriptTokens();
    promptIds.insert(promptIds.end(), transcript.begin(),
                     transcript.end() - std::ptrdiff_t(response.tokens.size()));
    std::vector<std::string> warningTexts;
    for (const SchemaIssue& warning : warnings)
        warningTexts.push_back(warning.text());
    const CallFormat format = chat.callFormat();
    out.update(nlohmann::ordered_json{
        {"layout", chatLayoutName(chat.chatTemplate().layout())},
        {"template_family", std::string(templateFamilyName(chat.chatTemplate().family()))},
        {"tools_pinned", chat.toolBlock().pinsTools},
        {"template_notice",
         chat.toolBlock().notice.empty() ? chat.chatTemplate().notice() : chat.toolBlock().notice},
        {"call_format",
         {{"syntax", callSyntaxName(format.syntax)},
          {"open", format.open},
          {"close", format.close},
          {"arguments_key", format.argumentsKey},
          {"spaced", format.spaced},
          {"max_calls", format.maxCalls}}},
        {"rerendered", chat.lastTurn().rerendered},
        {"rerender_reason", chat.lastTurn().rerenderReason},
        {"constrained", options.constrained},
        {"arguments_from_message", options.argumentsFromMessage},
        {"call_policy", callPolicyName(options.calls)},
        {"call_text", response.callText},
        {"call_tokens", response.callTokens},
        {"call_wrapped_up", response.callWrappedUp},
        {"mask_us_per_token", response.maskMicrosPerToken},
        {"sink_tokens", chat.toolBlock().tokens.size()},
        {"tool_tokens", toolTokens(chat.toolBlock())},
        {"sink_prefill_seconds", chat.lastRebuild().seconds},
        {"kv_bytes_sinks_and_window", budget.kvBytes},
        {"kv_over_budget", budget.overBudget},
        {"warnings", warningTexts},
        {"prompt_ids", promptIds},
        {"generated_ids", response.tokens},
        {"tokens_seen", session.position()},
        {"sinks_used", session.cache().sinksUsed()},
        {"evictions", session.cache().evictions()},
    });
    out.update(describeCache(session));
    out["peak_rss_bytes"] = peakRssBytes();
    return out;
}

void printText(const ToolResponse& response) {
    if (!response.text.empty()) std::cout << response.text << '\n';
    for (const FunctionCall& call : response.functionCalls)
        std::cout << "call: " << call.name << ' '
                  << call.arguments.dump(-1, ' ', false,
                                         nlohmann::ordered_json::error_handler_t::replace)
                  << '\n';
    if (!response.error.empty()) std::cout << "error: " << response.error << '\n';
}

} // namespace

RespondOptions respondOptionsFromArgs(const ParsedArgs& args, const SamplerOptions& sampler) {
    RespondOptions options;
    options.sampler = sampler;
    options.constrained =
        parseChoice("--constrained", args.value("--constrained").value_or("on"), kOnOffChoices);
    options.argumentsFromMessage =
        parseChoice("--arguments-from-message",
                    args.value("--arguments-from-message").value_or("off"), kOnOffChoices);
    if (options.argumentsFromMessage && !options.constrained)
        throw UsageError("--arguments-from-message on needs --constrained on");
    options.calls = parseChoice("--call", args.value("--call").value_or("auto"), kCallChoices);
    options.maxTokens =
        static_cast<int>(args.integer("--n-predict", options.maxTokens, 1, kMaxTurnTokens));
    options.maxCallTokens = static_cast<int>(
        args.integer("--max-call-tokens", options.maxCallTokens, 1, kMaxTurnTokens));
    return options;
}

ToolsFile readToolsFile(const std::string& path) {
    const std::string text = readWholeFile(path, "tools file");
    const JsonDocument document = parseJsonDocument(text);
    ToolsFile file;
    if (document.value.is_object() && document.value.contains("tools")) {
        PresetParseResult preset = parsePreset(text);
        if (!preset.ok()) throwIssues(path, preset.errors);
        file.tools = std::move(preset.preset->tools);
        file.query = preset.preset->query;
        file.warnings = std::move(preset.warnings);
        return file;
    }
    ToolsParseResult parsed = parseTools(text);
    if (!parsed.ok()) throwIssues(path, parsed.errors);
    file.tools = std::move(*parsed.tools);
    file.warnings = std::move(parsed.warnings);
    return file;
}

int runWithTools(const ParsedArgs& args, const std::string& prompt, const SamplerOptions& sampler) {
    for (const char* option : {"--ignore-eos", "--special"})
        if (args.has(option))
            throw UsageError("option '" + std::string(option) + "' does not apply with --tools");
    const RespondOptions options = respondOptionsFromArgs(args, sampler);
    const std::string toolsPath = args.required("--tools");
    ToolsFile file = readToolsFile(toolsPath);
    const std::string query = prompt.empty() ? file.query : prompt;
    if (query.empty()) throw UsageError("'run --tools' needs --prompt (or a preset with a query)");
    for (const SchemaIssue& warning : file.warnings)
        std::cerr << "sinkscope-cli: warning: " << warning.text() << '\n';

    const std::unique_ptr<Model> model = loadModel(args.required("--model"));
    SessionOptions session = sessionOptionsFor(*model, args);
    session.probe = AttentionProbe{true, -1, -1}; // attribution: the mean over layers and heads
    std::unique_ptr<ToolChat> chat;
    try {
        chat = std::make_unique<ToolChat>(*model, session, std::move(file.tools),
                                          args.value("--facts").value_or(""), std::nullopt,
                                          ModelTemplateOptions{args.has("--tools-in-system")});
    } catch (const std::invalid_argument& error) {
        throw UsageError(error.what());
    }
    const ToolResponse response = chat->ask(query, options);
    if (args.has("--json"))
        printJson(report(*chat, response, options, file.warnings));
    else
        printText(response);
    return 0;
}

} // namespace sinkscope::cli
