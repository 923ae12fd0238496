// logits: the best logits at every prompt position, for comparing the engine with a reference
// implementation token for token.
#include "cli_common.h"
#include "commands.h"

#include <algorithm>
#include <numeric>

namespace sinkscope::cli {

namespace {

// The `count` best [id, logit] pairs, best first; ties by the lower id.
nlohmann::ordered_json bestLogits(std::span<const float> logits, int count) {
    std::vector<int32_t> ids(logits.size());
    std::iota(ids.begin(), ids.end(), 0);
    const auto better = [&](int32_t a, int32_t b) {
        return logits[size_t(a)] != logits[size_t(b)] ? logits[size_t(a)] > logits[size_t(b)]
                                                      : a < b;
    };
    const size_t kept = std::min(ids.size(), static_cast<size_t>(count));
    std::partial_sort(ids.begin(), ids.begin() + std::ptrdiff_t(kept), ids.end(), better);
    nlohmann::ordered_json top = nlohmann::ordered_json::array();
    for (size_t i = 0; i < kept; ++i)
        top.push_back({ids[i], logits[size_t(ids[i])]});
    return top;
}

} // namespace

int logitsCommand(CommandArgs args) {
    constexpr OptionSpec kOptions[] = {{"--model"},          {"--prompt"},     {"--prompt-file"},
                                       {"--special", false}, {"--top"},        {"--kv-bits"},
                                       {"--threads"},        {"--json", false}};
    const ParsedArgs parsed = ParsedArgs::parse("logits", kOptions, args);
    if (parsed.has("--prompt") == parsed.has("--prompt-file"))
        throw UsageError("'logits' needs exactly one of --prompt and --prompt-file");
    const std::string prompt = parsed.has("--prompt")
                                   ? parsed.required("--prompt")
                                   : readWholeFile(parsed.required("--prompt-file"), "prompt file");
    if (prompt.empty()) throw UsageError("empty prompt");
    const int top = static_cast<int>(parsed.integer("--top", 16, 1, 1 << 20));
    SessionOptions options;
    options.kvWindow = 0; // the budget window: every position sees the whole prompt it can
    options.threads = threadsFromArgs(parsed);
    options.kvBits = static_cast<int>(parsed.integer("--kv-bits", 16, 8, 32));
    if (options.kvBits != 8 && options.kvBits != 16 && options.kvBits != 32)
        throw UsageError("--kv-bits must be 8, 16 or 32");

    const std::unique_ptr<Model> model = loadModel(parsed.required("--model"));
    const std::vector<int32_t> ids =
        tokenizeWithBos(model->tokenizer(), prompt, parsed.has("--special"));
    Session session(*model, options);
    nlohmann::ordered_json positions = nlohmann::ordered_json::array();
    for (const int32_t id : ids)
        positions.push_back({{"top", bestLogits(session.feed(id), top)}});
    printJson({{"ids", ids}, {"positions", positions}});
    return 0;
}

} // namespace sinkscope::cli
