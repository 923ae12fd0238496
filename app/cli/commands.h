// The sinkscope-cli commands. Each parses its own options (args exclude the command name),
// prints its result on stdout and returns 0, or throws UsageError / InputError.
#pragma once

#include <span>
#include <string_view>

namespace sinkscope::cli {

using CommandArgs = std::span<const std::string_view>;

int runCommand(CommandArgs args);
int budgetCommand(CommandArgs args);
int tokenizeCommand(CommandArgs args);
int logitsCommand(CommandArgs args);
int templateCommand(CommandArgs args);
int perplexityCommand(CommandArgs args);
int benchCommand(CommandArgs args);
int makeModelCommand(CommandArgs args);
int soakCommand(CommandArgs args);
int streamPplCommand(CommandArgs args);
int evalToolsCommand(CommandArgs args);

} // namespace sinkscope::cli
