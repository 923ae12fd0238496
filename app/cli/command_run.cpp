// run: generate text from a prompt, streamed to stdout, or reported as one JSON object.
#include "cli_common.h"
#include "commands.h"
#include "run_tools.h"

#include <iostream>

namespace sinkscope::cli {

namespace {

constexpr int64_t kMaxPredict = 1 << 20;

// --greedy, or --temp/--top-k/--top-p/--seed over the sampler's defaults (temp 0 means greedy).
SamplerOptions samplerOptionsFromArgs(const ParsedArgs& args) {
    SamplerOptions options;
    const bool sampling =
        args.has("--temp") || args.has("--top-k") || args.has("--top-p") || args.has("--seed");
    if (args.has("--greedy")) {
        if (sampling)
            throw UsageError("option '--greedy' excludes --temp, --top-k, --top-p and --seed");
        options.greedy = true;
        return options;
    }
    options.temperature = static_cast<float>(args.real("--temp", options.temperature, 0, 1e6));
    options.topK = static_cast<int>(args.integer("--top-k", options.topK, 0, INT32_MAX));
    options.topP = static_cast<float>(args.real("--top-p", options.topP, 0, 1));
    options.seed = static_cast<uint64_t>(
        args.integer("--seed", static_cast<int64_t>(options.seed), 0, INT64_MAX));
    options.greedy = options.temperature == 0.0f;
    return options;
}

// Exactly one of --prompt and --prompt-file, and not empty; with --tools neither may be given
// (then "": a preset's query).
std::string promptFromArgs(const ParsedArgs& args) {
    const bool inlinePrompt = args.has("--prompt");
    if (!inlinePrompt && !args.has("--prompt-file") && args.has("--tools")) return {};
    if (inlinePrompt == args.has("--prompt-file"))
        throw UsageError("'run' needs exactly one of --prompt and --prompt-file");
    const std::string prompt = inlinePrompt
                                   ? args.required("--prompt")
                                   : readWholeFile(args.required("--prompt-file"), "prompt file");
    if (prompt.empty()) throw UsageError("empty prompt");
    return prompt;
}

// Generates while printing each generated token's text as it comes.
void generateStreaming(Session& session, std::span<const int32_t> prompt, int maxTokens,
                       Sampler& sampler, bool ignoreEos) {
    const Tokenizer& tokenizer = session.model().tokenizer();
    const auto printGenerated = [&](const StepSnapshot& step) {
        if (step.generated) std::cout << tokenizer.piece(step.queryToken) << std::flush;
        return true;
    };
    session.generate(prompt, maxTokens, sampler, printGenerated, ignoreEos);
}

nlohmann::ordered_json runReport(const Session& session, std::span<const int32_t> prompt,
                                 const GenerationResult& result) {
    nlohmann::ordered_json report = {
        {"text", result.text},
        {"prompt_ids", prompt},
        {"generated_ids", result.tokens},
        {"stopped_by_eos", result.stoppedByEos},
        {"tokens_seen", session.position()},
        {"sinks_used", session.cache().sinksUsed()},
        {"evictions", session.cache().evictions()},
    };
    report.update(describeCache(session));
    report["prefill_tokens_per_s"] = tokensPerSecond(result.prefillTokens, result.prefillSeconds);
    report["decode_tokens_per_s"] =
        tokensPerSecond(static_cast<int64_t>(result.tokens.size()), result.decodeSeconds);
    report["peak_rss_bytes"] = peakRssBytes();
    return report;
}

} // namespace

int runCommand(CommandArgs args) {
    const ParsedArgs parsed = ParsedArgs::parse("run",
                                                withSessionOptions({{"--model"},
                                                                    {"--prompt"},
                                                                    {"--prompt-file"},
                                                                    {"--n-predict"},
                                                                    {"--greedy", false},
                                                                    {"--temp"},
                                                                    {"--top-k"},
                                                                    {"--top-p"},
                                                                    {"--seed"},
                                                                    {"--ignore-eos", false},
                                                                    {"--special", false},
                                                                    {"--json", false},
                                                                    {"--tools"},
                                                                    {"--facts"},
                                                                    {"--constrained"},
                                                                    {"--arguments-from-message"},
                                                                    {"--call"},
                                                                    {"--max-call-tokens"},
                                                                    {"--tools-in-system", false}}),
                                                args);
    const std::string modelPath = parsed.required("--model");
    const int nPredict = static_cast<int>(parsed.integer("--n-predict", 128, 0, kMaxPredict));
    const SamplerOptions samplerOptions = samplerOptionsFromArgs(parsed);
    // Checked here so that bad options are usage errors (exit 2) before any file is read; the
    // session's options are built once the model, whose metadata may set their defaults, is.
    sessionOptionsFromArgs(parsed, SessionOptions{});
    const bool ignoreEos = parsed.has("--ignore-eos");
    const std::string prompt = promptFromArgs(parsed);
    if (parsed.has("--tools")) return runWithTools(parsed, prompt, samplerOptions);
    for (const std::string_view option : kToolOnlyOptions)
        if (parsed.has(option))
            throw UsageError("option '" + std::string(option) + "' needs --tools");

    const std::unique_ptr<Model> model = loadModel(modelPath);
    const std::vector<int32_t> promptIds =
        tokenizeWithBos(model->tokenizer(), prompt, parsed.has("--special"));
    if (promptIds.empty()) throw UsageError("the prompt has no tokens");
    const std::unique_ptr<Session> session = openSession(*model, sessionOptionsFor(*model, parsed));
    Sampler sampler(samplerOptions);
    if (!parsed.has("--json")) {
        generateStreaming(*session, promptIds, nPredict, sampler, ignoreEos);
        return 0;
    }
    const GenerationResult result = session->generate(promptIds, nPredict, sampler, {}, ignoreEos);
    printJson(runReport(*session, promptIds, result));
    return 0;
}

} // namespace sinkscope::cli
