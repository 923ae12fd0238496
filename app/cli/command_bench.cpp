// bench: prefill and greedy decode speed on a fixed token stream, best of several repeats, after
// an optional depth of tokens already in the session (as llama-bench's -d), and optionally after
// a tool block pinned as sinks (--tools: the product's own path).
#include "cli_common.h"
#include "commands.h"
#include "run_tools.h"
#include "session/tool_chat.h"

#include "gguf/ggml_types.h"
#include "gguf/gguf.h"
#include "model/kernels/cpu_isa.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>

namespace sinkscope::cli {

namespace {

constexpr int64_t kMaxBenchTokens = 1 << 20;

struct BenchRates {
    double prefill = 0; // tokens per second
    double decode = 0;
};

// BOS, then the vocabulary's non-control ids in order, cycling: the same stream on every run,
// whatever the tokenizer would make of text.
std::vector<int32_t> benchPrompt(const Tokenizer& tokenizer, int length) {
    std::vector<int32_t> cycle;
    for (int32_t id = 0; id < tokenizer.size(); ++id)
        if (tokenizer.type(id) != TokenType::Control) cycle.push_back(id);
    if (cycle.empty()) throw InputError("the model's vocabulary has only control tokens");
    std::vector<int32_t> tokens = {tokenizer.bos()};
    for (size_t i = 0; tokens.size() < static_cast<size_t>(length); ++i)
        tokens.push_back(cycle[i % cycle.size()]);
    return tokens;
}

double secondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// One pass, as llama-bench times its pp and tg tests: each starts from `start()`, a session
// holding only the pinned tool block (when there is one) and the `depth` tokens after it (fed
// untimed). Prefill: the prompt in one call. Decode: `decodeTokens` steps of one token each, from
// the prompt's first token on, each next token chosen greedily (EOS ignored: the count is fixed),
// so decode speed is measured at depths depth .. depth + n, not after the prompt.
BenchRates benchOnce(const std::function<Session&()>& start, std::span<const int32_t> prompt,
                     int decodeTokens) {
    Session& prefilled = start();
    const auto prefillStart = std::chrono::steady_clock::now();
    prefilled.prefill(prompt);
    const double prefillSeconds = secondsSince(prefillStart);

    Session& session = start();
    Sampler greedy(SamplerOptions{.greedy = true});
    int32_t token = prompt.front();
    const auto decodeStart = std::chrono::steady_clock::now();
    for (int i = 0; i < decodeTokens; ++i)
        token = greedy.sample(session.feed(token));
    const double decodeSeconds = secondsSince(decodeStart);
    return {tokensPerSecond(static_cast<int64_t>(prompt.size()), prefillSeconds),
            tokensPerSecond(decodeTokens, decodeSeconds)};
}

// The tool block of `path`'s tools as the model's template renders it.
ToolBlock renderedToolBlock(const Model& model, const SessionOptions& options,
                            const std::string& path) {
    ToolsFile file = readToolsFile(path);
    try {
        return ToolChat(model, options, std::move(file.tools), "").toolBlock();
    } catch (const std::invalid_argument& error) {
        throw UsageError(error.what());
    }
}

} // namespace

int benchCommand(CommandArgs args) {
    const ParsedArgs parsed = ParsedArgs::parse("bench",
                                                withSessionOptions({{"--model"},
                                                                    {"-p"},
                                                                    {"-n"},
                                                                    {"--depth"},
                                                                    {"--repeat"},
                                                                    {"--tools"},
                                                                    {"--probe", false}}),
                                                args);
    const std::string modelPath = parsed.required("--model");
    const int promptTokens = static_cast<int>(parsed.integer("-p", 128, 1, kMaxBenchTokens));
    const int decodeTokens = static_cast<int>(parsed.integer("-n", 128, 0, kMaxBenchTokens));
    const int depthTokens = static_cast<int>(parsed.integer("--depth", 0, 0, kMaxBenchTokens));
    const int repeats = static_cast<int>(parsed.integer("--repeat", 3, 1, 1000));
    SessionOptions defaults;
    defaults.kvWindow = 0;                    // the budget window
    sessionOptionsFromArgs(parsed, defaults); // bad options are usage errors before any file read
    const std::optional<std::string> toolsPath = parsed.value("--tools");

    const std::unique_ptr<Model> model = loadModel(modelPath);
    // With tools, the session the product builds for this model (its window and position hints);
    // --probe adds the attention probe the playground and run --tools keep (every layer and head).
    SessionOptions options =
        toolsPath ? sessionOptionsFor(*model, parsed) : sessionOptionsFromArgs(parsed, defaults);
    if (parsed.has("--probe")) options.probe = AttentionProbe{true, -1, -1};
    const std::optional<ToolBlock> block =
        toolsPath ? std::optional(renderedToolBlock(*model, options, *toolsPath)) : std::nullopt;
    // The depth is the stream's start; the prompt continues it.
    const std::vector<int32_t> stream = benchPrompt(model->tokenizer(), depthTokens + promptTokens);
    const std::span<const int32_t> depth(stream.data(), static_cast<size_t>(depthTokens));
    const std::span<const int32_t> prompt(stream.data() + depthTokens,
                                          static_cast<size_t>(promptTokens));
    std::unique_ptr<Session> session = block ? nullptr : openSession(*model, options);
    const auto start = [&]() -> Session& {
        if (block)
            session = rebuildSession(*model, options, *block, {}).session;
        else
            session->reset();
        session->prefill(depth);
        return *session;
    };
    BenchRates best;
    for (int i = 0; i < repeats; ++i) {
        const BenchRates rates = benchOnce(start, prompt, decodeTokens);
        best.prefill = std::max(best.prefill, rates.prefill);
        best.decode = std::max(best.decode, rates.decode);
    }
    std::map<std::string, int> weightTypes; // tensors per type, as the file stores them
    for (const GgufTensorInfo& tensor : model->file().tensors())
        ++weightTypes[ggmlTypeName(tensor.type)];
    nlohmann::ordered_json report = {
        {"prefill_tokens_per_s", best.prefill},
        {"decode_tokens_per_s", best.decode},
        {"peak_rss_bytes", peakRssBytes()},
        {"model_bytes", std::filesystem::file_size(modelPath)},
        {"model_parameters", model->parameterCount()},
        {"weight_types", weightTypes},
        {"depth", depthTokens},
        {"n_prompt", prompt.size()},
        {"n_gen", decodeTokens},
        {"threads", options.threads},
        {"repeat", repeats},
        {"kernels", isaName(activeIsa())},
        {"row_streams", rowStreamsName(activeRowStreams())},
        {"sink_tokens", block ? block->tokens.size() : 0},
        {"probe", options.probe.enabled},
    };
    report.update(describeCache(*session));
    printJson(report);
    return 0;
}

} // namespace sinkscope::cli
