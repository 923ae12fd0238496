// stream-ppl: the attention-sink experiment. A text, repeated, streams token by token through one
// session per KV policy; each policy's per-position NLL becomes perplexity figures, and the CSV
// the plots are drawn from.
#include "cli_common.h"
#include "commands.h"
#include "eval/stream_eval.h"

#include <cstdio>
#include <fstream>
#include <iostream>

namespace sinkscope::cli {

namespace {

constexpr std::string_view kPolicyOption = "--policy";
constexpr int64_t kMaxRepeat = 10'000;
constexpr int64_t kTailPositions = 1'000;

struct PolicyArgs {
    std::vector<Policy> policies;       // in the order given; empty when none was given
    std::vector<std::string_view> rest; // every other argument, for ParsedArgs
};

// --policy may be given several times, which ParsedArgs refuses for any option: its values are
// taken out here, in order.
PolicyArgs takePolicies(CommandArgs args) {
    PolicyArgs taken;
    const std::string inlinePrefix = std::string(kPolicyOption) + "=";
    for (size_t i = 0; i < args.size(); ++i) {
        std::string_view text;
        if (args[i] == kPolicyOption) {
            if (i + 1 == args.size())
                throw UsageError("option '" + std::string(kPolicyOption) + "' needs a value");
            text = args[++i];
        } else if (args[i].starts_with(inlinePrefix)) {
            text = args[i].substr(inlinePrefix.size());
        } else {
            taken.rest.push_back(args[i]);
            continue;
        }
        std::string error;
        const std::optional<Policy> policy = parsePolicy(text, error);
        if (!policy) throw UsageError("option '" + std::string(kPolicyOption) + "': " + error);
        taken.policies.push_back(*policy);
    }
    return taken;
}

// BOS once, then the text `repeat` times, tokenized as one text so the copies join as they would
// in a file holding them.
std::vector<int32_t> streamTokens(const Tokenizer& tokenizer, const std::string& text,
                                  int64_t repeat) {
    std::string repeated;
    repeated.reserve(text.size() * static_cast<size_t>(repeat));
    for (int64_t i = 0; i < repeat; ++i)
        repeated += text;
    return tokenizer.encode(repeated, true);
}

// Every policy's stream, opened before any runs so that a rejected option fails at once.
std::vector<std::unique_ptr<PolicyStream>> openStreams(const Model& model,
                                                       const std::vector<int32_t>& tokens,
                                                       std::span<const Policy> policies,
                                                       const StreamEvalOptions& options) {
    std::vector<std::unique_ptr<PolicyStream>> streams;
    try {
        for (const Policy& policy : policies)
            streams.push_back(std::make_unique<PolicyStream>(model, tokens, policy, options));
    } catch (const std::invalid_argument& rejected) {
        throw UsageError(std::string("stream options rejected: ") + rejected.what());
    }
    return streams;
}

std::string displayName(const Policy& policy, const StreamEvalOptions& options) {
    std::string name = policyName(policy);
    if (policy.kind == PolicyKind::Recompute && options.recomputeEvery > 1)
        name += " (every " + std::to_string(options.recomputeEvery) + " positions)";
    return name;
}

struct StreamReport {
    std::string modelPath;
    std::string textPath;
    int64_t repeat = 1;
    int64_t textTokens = 0; // one copy, without BOS
    int64_t streamTokens = 0;
    int64_t trainedContext = 0;
    StreamEvalOptions options;
};

nlohmann::ordered_json policyJson(const PolicyResult& result, const StreamReport& report) {
    nlohmann::ordered_json entry = {
        {"policy", policyName(result.policy)},
        {"ppl", perplexityOf(result.nll)},
        {"ppl_last_1000", tailPerplexity(result, kTailPositions)},
        {"ppl_before_trained_context", rangePerplexity(result, 0, report.trainedContext)},
        {"ppl_past_trained_context",
         rangePerplexity(result, report.trainedContext, report.streamTokens)},
        {"tokens_per_s", positionsPerSecond(result)},
        {"kv_bytes", result.kvBytes},
        {"positions_evaluated", result.positions.size()},
        {"seconds", result.seconds},
    };
    if (result.policy.kind == PolicyKind::Recompute) entry["every"] = report.options.recomputeEvery;
    return entry;
}

void printJsonReport(std::span<const PolicyResult> results, const StreamReport& report,
                     const std::optional<std::string>& csvPath) {
    nlohmann::ordered_json policies = nlohmann::ordered_json::array();
    for (const PolicyResult& result : results)
        policies.push_back(policyJson(result, report));
    nlohmann::ordered_json json = {
        {"model", report.modelPath},
        {"file", report.textPath},
        {"repeat", report.repeat},
        {"text_tokens", report.textTokens},
        {"stream_tokens", report.streamTokens},
        {"window", report.options.window},
        {"kv_bits", report.options.kvBits},
        {"recompute_every", report.options.recomputeEvery},
        {"trained_context", report.trainedContext},
        {"rolling_span", kRollingSpan},
        {"policies", policies},
    };
    if (csvPath) json["csv"] = *csvPath;
    printJson(json);
}

void printTable(std::span<const PolicyResult> results, const StreamReport& report) {
    std::cout << "stream: '" << report.textPath << "' (" << report.textTokens
              << " tokens) repeated " << report.repeat
              << " times after BOS = " << report.streamTokens << " tokens; window "
              << report.options.window << ", kv_bits " << report.options.kvBits
              << ", trained context " << report.trainedContext << "\n\n";
    char line[256];
    std::snprintf(line, sizeof line, "%-36s %10s %10s %10s %10s %10s %12s %10s\n", "policy", "ppl",
                  "ppl<ctx", "ppl>=ctx", "last 1000", "tokens/s", "kv_bytes", "positions");
    std::cout << line;
    for (const PolicyResult& result : results) {
        std::snprintf(line, sizeof line, "%-36s %10.4f %10.4f %10.4f %10.4f %10.1f %12lld %10zu\n",
                      displayName(result.policy, report.options).c_str(), perplexityOf(result.nll),
                      rangePerplexity(result, 0, report.trainedContext),
                      rangePerplexity(result, report.trainedContext, report.streamTokens),
                      tailPerplexity(result, kTailPositions), positionsPerSecond(result),
                      static_cast<long long>(result.kvBytes), result.positions.size());
        std::cout << line;
    }
    std::cout << std::flush;
}

} // namespace

int streamPplCommand(CommandArgs args) {
    const PolicyArgs policyArgs = takePolicies(args);
    const OptionSpec specs[] = {{"--model"},           {"--file"},    {"--repeat"},  {"--window"},
                                {"--recompute-every"}, {"--kv-bits"}, {"--threads"}, {"--csv"},
                                {"--json", false}};
    const ParsedArgs parsed = ParsedArgs::parse("stream-ppl", specs, policyArgs.rest);
    StreamReport report;
    report.modelPath = parsed.required("--model");
    report.textPath = parsed.required("--file");
    report.repeat = parsed.integer("--repeat", 1, 1, kMaxRepeat);
    report.options.window = static_cast<int>(parsed.integer("--window", 128, 1, 1 << 20));
    report.options.recomputeEvery =
        static_cast<int>(parsed.integer("--recompute-every", 1, 1, 1 << 20));
    SessionOptions f32;
    f32.kvBits = 32; // the policy is measured, not the cache's rounding
    report.options.kvBits = sessionOptionsFromArgs(parsed, f32).kvBits;
    report.options.threads = threadsFromArgs(parsed);
    const std::vector<Policy> policies =
        policyArgs.policies.empty() ? defaultPolicies() : policyArgs.policies;
    const std::optional<std::string> csvPath = parsed.value("--csv");

    const std::string text = readWholeFile(report.textPath, "text file");
    const std::unique_ptr<Model> model = loadModel(report.modelPath);
    const std::vector<int32_t> tokens = streamTokens(model->tokenizer(), text, report.repeat);
    report.textTokens = static_cast<int64_t>(model->tokenizer().encode(text, false).size());
    report.streamTokens = static_cast<int64_t>(tokens.size());
    report.trainedContext = model->config().nCtxTrain;
    if (tokens.size() < 2)
        throw InputError("text file '" + report.textPath + "' gives no token to score");
    std::vector<std::unique_ptr<PolicyStream>> streams =
        openStreams(*model, tokens, policies, report.options);
    std::ofstream csv;
    if (csvPath) {
        csv.open(*csvPath, std::ios::binary | std::ios::trunc);
        if (!csv) throw InputError("cannot write CSV file '" + *csvPath + "'");
    }

    std::vector<PolicyResult> results;
    for (const std::unique_ptr<PolicyStream>& stream : streams)
        results.push_back(evaluatePolicy(*stream));
    if (csvPath) {
        writeStreamCsv(csv, results);
        csv.close();
        if (!csv) throw InputError("cannot write CSV file '" + *csvPath + "'");
    }
    if (parsed.has("--json"))
        printJsonReport(results, report, csvPath);
    else
        printTable(results, report);
    return 0;
}

} // namespace sinkscope::cli
