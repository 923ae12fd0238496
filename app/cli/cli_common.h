// What several sinkscope-cli commands share: loading inputs, session options, JSON output and
// resource figures.
#pragma once

#include "cli_args.h"
#include "model/model.h"
#include "session/session.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sinkscope::cli {

// The prompt's token ids as `run` feeds them: BOS first when the vocabulary asks for it.
// With parseSpecial, control-token text such as "<|im_start|>" becomes that token (--special).
std::vector<int32_t> tokenizeWithBos(const Tokenizer& tokenizer, std::string_view text,
                                     bool parseSpecial = false);

// Throws InputError for a missing path, a directory, or a file the loader rejects (its message).
std::unique_ptr<Model> loadModel(const std::string& path);
// The file's tokenizer alone (no tensors needed); throws InputError as loadModel does.
Tokenizer loadTokenizer(const std::string& path);
// The whole file's bytes; InputError naming `what` ("prompt file") when it cannot be read.
std::string readWholeFile(const std::string& path, std::string_view what);

// The command's own options followed by --kv-window, --kv-bits, --positions and --sinks.
std::vector<OptionSpec> withSessionOptions(std::initializer_list<OptionSpec> own);
// `defaults` with the options above applied (--kv-window 0 = the budget window).
SessionOptions sessionOptionsFromArgs(const ParsedArgs& args, const SessionOptions& defaults);
// The same without --sinks, for a command that gives --sinks its own meaning.
SessionOptions cacheOptionsFromArgs(const ParsedArgs& args, const SessionOptions& defaults);
// --threads: 1 to kMaxThreads, by default the number of cores.
int threadsFromArgs(const ParsedArgs& args);
// The model's own options (defaultSessionOptions: its window and position mode, when its
// metadata has them) with the options above applied: what the user passes wins.
SessionOptions sessionOptionsFor(const Model& model, const ParsedArgs& args);
// The session, or UsageError when the engine rejects the options for this model.
std::unique_ptr<Session> openSession(const Model& model, const SessionOptions& options);
// "bos", "first:N" or "none": the --sinks spelling of the options' sink mode.
std::string sinksText(const SessionOptions& options);
// "absolute" or "streaming": the --positions spelling.
std::string positionsText(PositionMode mode);
// How a session's cache is set up: budget_window, effective_window, sink_slots, kv_bytes,
// kv_budget_bytes, kv_bits, positions, sinks.
nlohmann::ordered_json describeCache(const Session& session);

// Peak resident set size (VmHWM) in bytes; 0 where /proc/self/status has no such line.
int64_t peakRssBytes();
// Resident set size now (VmRSS) in bytes; 0 where /proc/self/status has no such line.
int64_t currentRssBytes();
double tokensPerSecond(int64_t tokens, double seconds); // 0 when nothing was timed
void printJson(const nlohmann::ordered_json& value);    // on stdout; invalid UTF-8 replaced

} // namespace sinkscope::cli
