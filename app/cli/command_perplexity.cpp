// perplexity: llama-perplexity's figure for a text file under the chosen cache settings.
#include "cli_common.h"
#include "commands.h"
#include "eval/perplexity.h"

namespace sinkscope::cli {

namespace {

constexpr int kMinContext = 4; // what chunkedPerplexity accepts

} // namespace

int perplexityCommand(CommandArgs args) {
    const ParsedArgs parsed = ParsedArgs::parse(
        "perplexity", withSessionOptions({{"--model"}, {"--file"}, {"--ctx"}}), args);
    const std::string modelPath = parsed.required("--model");
    const std::string textPath = parsed.required("--file");
    const int contextLength =
        static_cast<int>(parseInteger("--ctx", parsed.required("--ctx"), kMinContext, 1 << 20));
    SessionOptions defaults;
    defaults.kvWindow = 0; // the budget window: at least ctx for small models
    defaults.kvBits = 32;  // the reference precision, so the default figure is llama.cpp's
    const SessionOptions options = sessionOptionsFromArgs(parsed, defaults);
    const std::string text = readWholeFile(textPath, "text file");

    const std::unique_ptr<Model> model = loadModel(modelPath);
    // Opened first so that options the engine rejects read as usage errors.
    const nlohmann::ordered_json cache = describeCache(*openSession(*model, options));
    const std::vector<int32_t> tokens = tokenizeWithBos(model->tokenizer(), perplexityText(text));
    if (tokens.size() < static_cast<size_t>(contextLength))
        throw InputError("text file '" + textPath + "' has " + std::to_string(tokens.size()) +
                         " tokens, fewer than one chunk of --ctx " + std::to_string(contextLength));
    const PerplexityResult result = chunkedPerplexity(*model, tokens, contextLength, options);
    nlohmann::ordered_json report = {
        {"ppl", result.perplexity}, {"chunks", result.chunks},      {"tokens", result.scoredTokens},
        {"ctx", contextLength},     {"text_tokens", tokens.size()},
    };
    report.update(cache);
    printJson(report);
    return 0;
}

} // namespace sinkscope::cli
