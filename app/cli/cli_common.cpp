#include "cli_common.h"

#include "gguf/gguf.h"
#include "memory/budget.h"
#include "session/session_defaults.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace sinkscope::cli {

namespace {

constexpr int kMaxKvWindow = 1 << 20;

// InputError unless `path` names an existing regular file (following links).
void requireRegularFile(const std::string& path, std::string_view what) {
    std::error_code error;
    const std::filesystem::file_status status = std::filesystem::status(path, error);
    if (!std::filesystem::exists(status))
        throw InputError(std::string(what) + " '" + path + "' does not exist");
    if (std::filesystem::is_directory(status))
        throw InputError(std::string(what) + " '" + path + "' is a directory");
    if (!std::filesystem::is_regular_file(status))
        throw InputError(std::string(what) + " '" + path + "' is not a regular file");
}

// --sinks bos|first:N|none; also sets the mode's parameter (sinkCapacity or firstN).
SinkMode parseSinks(const std::string& text, SessionOptions& options) {
    constexpr std::string_view firstPrefix = "first:";
    if (text == "bos") {
        options.sinkCapacity = 0;
        return SinkMode::ToolsAndBos;
    }
    if (text == "none") return SinkMode::None;
    if (text.starts_with(firstPrefix)) {
        options.firstN = static_cast<int>(parseInteger(
            "--sinks first:N", std::string_view(text).substr(firstPrefix.size()), 1, kMaxKvWindow));
        return SinkMode::FirstN;
    }
    throwNotAChoice("--sinks", text, "bos, first:N, none");
}

constexpr Choice<PositionMode> kPositionChoices[] = {
    {"absolute", PositionMode::Absolute},
    {"streaming", PositionMode::Streaming},
};

} // namespace

std::vector<int32_t> tokenizeWithBos(const Tokenizer& tokenizer, std::string_view text,
                                     bool parseSpecial) {
    return tokenizer.encode(text, tokenizer.addBos(), parseSpecial);
}

std::unique_ptr<Model> loadModel(const std::string& path) {
    requireRegularFile(path, "model");
    std::string error;
    std::unique_ptr<Model> model = Model::load(path, error);
    if (!model) throw InputError("cannot load model '" + path + "': " + error);
    return model;
}

Tokenizer loadTokenizer(const std::string& path) {
    requireRegularFile(path, "model");
    std::string error;
    const std::unique_ptr<GgufFile> file = GgufFile::open(path, error);
    std::optional<Tokenizer> tokenizer;
    if (file) tokenizer = Tokenizer::fromGguf(*file, error);
    if (!tokenizer) throw InputError("cannot load model '" + path + "': " + error);
    return std::move(*tokenizer);
}

std::string readWholeFile(const std::string& path, std::string_view what) {
    requireRegularFile(path, what);
    std::ifstream file(path, std::ios::binary);
    std::string bytes{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
    if (!file.is_open() || file.bad())
        throw InputError("cannot read " + std::string(what) + " '" + path + "'");
    return bytes;
}

std::vector<OptionSpec> withSessionOptions(std::initializer_list<OptionSpec> own) {
    std::vector<OptionSpec> specs(own);
    specs.insert(specs.end(),
                 {{"--kv-window"}, {"--kv-bits"}, {"--positions"}, {"--sinks"}, {"--threads"}});
    return specs;
}

int threadsFromArgs(const ParsedArgs& args) {
    const unsigned cores = std::thread::hardware_concurrency();
    const int64_t fallback = std::clamp<int64_t>(cores, 1, kMaxThreads);
    return static_cast<int>(args.integer("--threads", fallback, 1, kMaxThreads));
}

SessionOptions cacheOptionsFromArgs(const ParsedArgs& args, const SessionOptions& defaults) {
    SessionOptions options = defaults;
    options.threads = threadsFromArgs(args);
    options.kvWindow =
        static_cast<int>(args.integer("--kv-window", options.kvWindow, 0, kMaxKvWindow));
    options.kvBits =
        static_cast<int>(args.integer("--kv-bits", options.kvBits, INT32_MIN, INT32_MAX));
    if (options.kvBits != 8 && options.kvBits != 16 && options.kvBits != 32)
        throw UsageError("option '--kv-bits': " + std::to_string(options.kvBits) +
                         " is not 8, 16 or 32");
    if (const std::optional<std::string> positions = args.value("--positions"))
        options.positions = parseChoice("--positions", *positions, kPositionChoices);
    return options;
}

SessionOptions sessionOptionsFromArgs(const ParsedArgs& args, const SessionOptions& defaults) {
    SessionOptions options = cacheOptionsFromArgs(args, defaults);
    if (const std::optional<std::string> sinks = args.value("--sinks"))
        options.sinks = parseSinks(*sinks, options);
    return options;
}

SessionOptions sessionOptionsFor(const Model& model, const ParsedArgs& args) {
    return sessionOptionsFromArgs(args, defaultSessionOptions(model.config()));
}

std::unique_ptr<Session> openSession(const Model& model, const SessionOptions& options) {
    try {
        return std::make_unique<Session>(model, options);
    } catch (const std::invalid_argument& rejected) {
        throw UsageError(std::string("session options rejected: ") + rejected.what());
    }
}

std::string sinksText(const SessionOptions& options) {
    switch (options.sinks) {
    case SinkMode::ToolsAndBos:
        return "bos";
    case SinkMode::FirstN:
        return "first:" + std::to_string(options.firstN);
    case SinkMode::None:
        return "none";
    }
    return "unknown";
}

std::string positionsText(PositionMode mode) {
    return choiceText(mode, kPositionChoices);
}

nlohmann::ordered_json describeCache(const Session& session) {
    const KvCache& cache = session.cache();
    return {
        {"budget_window", session.budgetWindow()},
        {"effective_window", session.effectiveWindow()},
        {"sink_slots", cache.shape().sinkSlots},
        {"kv_bytes", cache.bytesAllocated()},
        {"kv_budget_bytes", kKvBudgetBytes},
        {"kv_bits", cache.shape().kvBits},
        {"positions", positionsText(session.options().positions)},
        {"sinks", sinksText(session.options())},
    };
}

namespace {

// A "Key:     1234 kB" line of /proc/self/status, in bytes; 0 without such a line.
int64_t processStatusBytes(std::string_view key) {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (!line.starts_with(key)) continue;
        std::istringstream fields(line.substr(key.size()));
        int64_t kibibytes = 0;
        fields >> kibibytes;
        return kibibytes * 1024;
    }
    return 0;
}

} // namespace

int64_t peakRssBytes() {
    return processStatusBytes("VmHWM:");
}

int64_t currentRssBytes() {
    return processStatusBytes("VmRSS:");
}

double tokensPerSecond(int64_t tokens, double seconds) {
    return seconds > 0 ? static_cast<double>(tokens) / seconds : 0.0;
}

void printJson(const nlohmann::ordered_json& value) {
    std::cout << value.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n'
              << std::flush;
}

} // namespace sinkscope::cli
