// run --tools FILE: one assistant turn with the file's tools pinned as sinks, printed in Needle's
// response shape (tool_calls.h) plus the usual run fields, or as text and call lines.
#pragma once

#include "cli_args.h"
#include "session/assistant_turn.h"
#include "session/sampler.h"
#include "tools/tool_schema.h"

namespace sinkscope::cli {

// The options `run` accepts only together with --tools.
inline constexpr std::string_view kToolOnlyOptions[] = {"--facts", "--constrained", "--call",
                                                        "--max-call-tokens", "--tools-in-system"};

struct ToolsFile {
    ToolSet tools;
    std::string query; // a preset's sample query
    std::vector<SchemaIssue> warnings;
};

// A JSON array of tools, or a preset object ({"name", "tools", "query", ...}). Throws InputError
// (exit 3) naming the file and its first problem.
ToolsFile readToolsFile(const std::string& path);

// --constrained on|off, --call auto|required|none, --n-predict N (the turn's cap) and
// --max-call-tokens N over RespondOptions' defaults, decoding with `sampler`.
RespondOptions respondOptionsFromArgs(const ParsedArgs& args, const SamplerOptions& sampler);

// `args` are run's parsed options, --tools among them; `prompt` may be empty when the tools file
// is a preset with a query. The session's options are the model's (sessionOptionsFor) under
// args. Throws InputError (exit 3) for a tools file that is not valid.
int runWithTools(const ParsedArgs& args, const std::string& prompt, const SamplerOptions& sampler);

} // namespace sinkscope::cli
