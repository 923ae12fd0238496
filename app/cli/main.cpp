// sinkscope-cli: the headless face of the engine; prints JSON for scripts and benchmarks.
// Exit status: 0 success, 2 bad usage, 3 bad model or input file, 1 anything else.
#include "cli_args.h"
#include "commands.h"
#include "sinkscope_version.h"

#include <algorithm>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

namespace {

using sinkscope::cli::CommandArgs;

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInput = 3;

struct Command {
    std::string_view name;
    int (*run)(CommandArgs);
};

constexpr Command kCommands[] = {
    {"run", sinkscope::cli::runCommand},
    {"budget", sinkscope::cli::budgetCommand},
    {"tokenize", sinkscope::cli::tokenizeCommand},
    {"logits", sinkscope::cli::logitsCommand},
    {"template", sinkscope::cli::templateCommand},
    {"perplexity", sinkscope::cli::perplexityCommand},
    {"bench", sinkscope::cli::benchCommand},
    {"make-model", sinkscope::cli::makeModelCommand},
    {"soak", sinkscope::cli::soakCommand},
    {"stream-ppl", sinkscope::cli::streamPplCommand},
    {"eval-tools", sinkscope::cli::evalToolsCommand},
};

constexpr std::string_view kUsage = R"(usage: sinkscope-cli COMMAND [OPTIONS]

commands:
  run --model FILE (--prompt TEXT | --prompt-file FILE) [--n-predict N (128)]
      [--greedy | --temp T --top-k K --top-p P --seed S] [--ignore-eos] [--special] [--json]
      [--kv-window W (the model's, else 256; 0 = budget)] [--kv-bits 8|16|32 (8)]
      [--positions absolute|streaming (the model's, else absolute)]
      [--sinks bos|first:N|none (bos)] [--threads T (the number of cores)]
      Prints the generated text as it comes, or one JSON report with --json. --special reads
      control-token text in the prompt (e.g. <|im_start|>) as those tokens. A model may name
      its window and position mode in its metadata (sinkscope.kv_window,
      sinkscope.position_mode); run, budget and eval-tools use them unless given here.
      With --tools FILE (a JSON array of tools, or a preset): [--facts TEXT]
      [--constrained on|off (on)] [--call auto|required|none (auto)] [--max-call-tokens N (192)]
      [--arguments-from-message on|off (off)] [--tools-in-system]; --n-predict caps the turn
      (256). Pins the tools as sinks and answers
      one user turn, in the model's own chat template where it has one that renders tools;
      --json prints {type, function_calls, text, confidence, prefill_tokens_per_s,
      decode_tokens_per_s, error, attribution, mask_us_per_token, layout, template_family,
      tools_pinned, template_notice, call_format, ...}. The prompt defaults to a preset's query.
      --tools-in-system renders the tools in the system turn where the template can
      (tools_in_user_message, Llama-3.1/3.2) so they can be pinned: not how the model was trained.
      --arguments-from-message on (constrained calls only) lets every string argument without a
      minimum length be only a span of the user's latest message: copied words.
  budget (--model FILE | --layers L --kv-heads H --head-dim D --d-model M --sites S --max-seq N)
      [--kv-window W (the model's, else 0 = budget)]
      Prints the budget-derived KV window (and, for a model, its position mode) as JSON.
  tokenize --model FILE --text TEXT [--special] [--no-bos]
      Prints the token ids (BOS included when the vocabulary adds it) and pieces as JSON;
      FILE may be a vocabulary without tensors.
  logits --model FILE (--prompt TEXT | --prompt-file FILE) [--special] [--top K (16)]
      [--kv-bits B (16)] [--threads T] [--json]
      Prints, for every prompt position, the K best [token id, logit] as JSON:
      {"ids": [...], "positions": [{"top": [[id, logit], ...]}, ...]}.
  template (--model FILE | --template FILE.jinja [--bos X] [--eos Y]) --conversation C.json
      [--tools T.json] [--no-generation-prompt] [--now YYYY-MM-DD]
      Prints the conversation ({"messages": [...], "tools": [...]}, OpenAI form) rendered as
      Hugging Face's apply_chat_template renders it; --now fixes strftime_now's clock.
  perplexity --model FILE --file TEXT --ctx N [--kv-window W (0 = budget)] [--kv-bits B (32)]
      [--positions P] [--sinks S] [--threads T]
      Prints llama-perplexity's figure for the text as JSON.
  bench --model FILE [-p N (128)] [-n N (128)] [--depth N (0)] [--threads T] [--repeat R (3)]
      [--kv-window W (0 = budget)] [--kv-bits B] [--positions P] [--sinks S]
      [--tools FILE [--probe]]
      Prints the best prefill and decode speeds as JSON, each measured as llama-bench's pp
      and tg tests are, from a session holding N tokens (--depth), with the model's bytes,
      parameters and tensors per weight type, and the kernels' level and row streams
      (SINKSCOPE_ISA and SINKSCOPE_ROW_STREAMS choose them for measuring). With --tools,
      after the file's tools pinned as sinks, on the model's own window and positions (as
      the playground runs it); --probe adds the attention probe the playground keeps.
  make-model --out FILE [--vocab N --embd N --layers N --heads N --kv-heads N --ff N --ctx N
      --seed S --type f32|f16|q8_0|q4_0|q4_k_m --rope adjacent|neox
      | --arch llama|exaone|qwen2|qwen3 --tied]
      Writes a deterministic synthetic model and prints its path, bytes and parameters as JSON.
  soak --model FILE --tokens N [--kv-window W (64)] [--kv-bits B] [--positions P] [--sinks S]
      [--seed S (42)] [--threads T] [--json]
      Samples N tokens in one session (EOS ignored), checking the cache invariants after each
      token and RSS every 10k tokens (on stderr); prints tokens, invariant_violations,
      rss_start_bytes (after warm-up), rss_end_bytes, rss_growth_bytes and tokens_per_s.
      Exits 1 when an invariant was violated.
  stream-ppl --model FILE --file TEXT [--repeat N (1)] [--window W (128)] [--policy P]...
      [--recompute-every K (1)] [--kv-bits B (32)] [--threads T] [--csv OUT] [--json]
      P: dense, window, sink:N, sink:N:streaming, recompute (default: dense, window, sink:1,
      sink:4, sink:4:streaming, recompute). Streams BOS + the text N times token by token
      through each policy; prints perplexity figures as a table, or JSON with --json; --csv
      writes position,policy,nll,rolling_ppl (rolling over 256 positions).
  eval-tools --model FILE --suite FILE [--sinks on|off (on)] [--constrained on|off (on)]
      [--call auto|required|none (auto)] [--n-predict N (256)] [--max-call-tokens N (192)]
      [--limit N (all)] [--kv-window W] [--kv-bits B] [--positions P] [--threads T] [--json]
      [--verbose] [--arguments-from-message on|off (off)]
      Runs each conversation of a JSONL suite ({"tools", "system", "turns": [{"query",
      "answers", "result"}]}, one per line) as one session, greedy, the window sliding across
      its turns; after each call the turn's result ({"status":"ok"} by default) goes back as
      the tool result. A turn is exact when the model made the expected calls in order with
      equal arguments (numbers by value, keys in any order); answers [] expects no call.
      --sinks on pins the tool block (BOS through </tools>) as sinks; --sinks off is the
      control: the same window and positions with nothing pinned, so BOS and the tool block
      slide out of the window like any other token. Prints rates as a table, or JSON with
      --json: conversations, turns, exact_match, exact_match_first (turn 1), exact_match_late
      (turns 30+), late_mean_position, call_exact_match, call_names_match, no_call_accuracy
      (null where no turn qualifies), sink_slots (the largest session's), tool_block_resident
      (share of the block still cached at the end), decode_tokens_per_s, seconds, ...
      --verbose prints every turn on stderr. A bad suite line exits 3 naming the line.
      --arguments-from-message as for run (reported as arguments_from_message): run the suite
      with it on and off to compare.
  help
      Prints this text.
  --version
      Prints "sinkscope-cli VERSION".

--threads T (1 to 256) splits each matrix product and attention's heads among T threads; the
results are the same bits for any T. Default: the number of cores.

exit status: 0 success, 2 bad usage, 3 bad model or input file, 1 other failure
)";

bool isHelp(std::string_view arg) {
    return arg == "help" || arg == "--help" || arg == "-h";
}

int dispatch(CommandArgs args) {
    if (args.empty()) {
        std::cerr << kUsage;
        return kExitUsage;
    }
    if (isHelp(args.front()) || (args.size() > 1 && args[1] == "--help")) {
        std::cout << kUsage;
        return 0;
    }
    if (args.front() == "--version") {
        std::cout << "sinkscope-cli " << sinkscope::kVersion << '\n';
        return 0;
    }
    const auto command = std::ranges::find(kCommands, args.front(), &Command::name);
    if (command == std::end(kCommands))
        throw sinkscope::cli::UsageError("unknown command '" + std::string(args.front()) +
                                         "' (see sinkscope-cli help)");
    return command->run(args.subspan(1));
}

// Messages may quote a loader's text; the contract is one line on stderr.
int fail(const char* message, int status) {
    std::string line = message;
    std::ranges::replace_if(
        line, [](char c) { return c == '\n' || c == '\r'; }, ' ');
    std::cout.flush();
    std::cerr << "sinkscope-cli: error: " << line << '\n';
    return status;
}

} // namespace

int main(int argc, char** argv) {
    try {
        const std::vector<std::string_view> args(argv + 1, argv + argc);
        return dispatch(args);
    } catch (const sinkscope::cli::UsageError& error) {
        return fail(error.what(), kExitUsage);
    } catch (const sinkscope::cli::InputError& error) {
        return fail(error.what(), kExitInput);
    } catch (const std::exception& error) {
        return fail(error.what(), kExitFailure);
    } catch (...) {
        return fail("unexpected failure", kExitFailure);
    }
}
