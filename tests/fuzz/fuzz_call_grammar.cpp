// libFuzzer target: a tool set and a byte string (fuzz_tool_input.h) -> the call grammar compiled
// from the tools and its matcher fed the bytes one at a time, with and without a text terminator.
//
// Properties (a violation aborts, which libFuzzer reports as a crash):
//   - compiling and matching never throw, whatever the schema and the bytes;
//   - what the matcher accepts as complete is a valid call: stripped of the optional leading
//     space and the terminator, parseCalls() reads it without an error (the grammar admits no
//     call the validator would reject);
//   - from wherever the matcher stopped, completion() finishes the call, and the finished text
//     is valid the same way (what the decoder relies on when the token budget runs out);
//   - acceptBytes() is all or nothing;
//   - an input takes at most a second of CPU time (fuzz_limits.h).
#include "tools/call_matcher.h"
#include "fuzz_limits.h"
#include "fuzz_tool_input.h"
#include "tools/tool_calls.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

using namespace sinkscope;

[[noreturn]] void finding(const std::string& what) {
    std::fprintf(stderr, "fuzz_call_grammar: %s\n", what.c_str());
    std::abort();
}

// `text` as the matcher read it: an optional space, the calls, the terminator.
void requireValidCall(std::string_view text, const ToolSet& tools,
                      const CallGrammarOptions& options, const char* how) {
    std::string_view calls = text;
    if (calls.starts_with(' ')) calls.remove_prefix(1);
    if (!calls.ends_with(options.terminator)) finding(std::string(how) + ": no terminator");
    calls.remove_suffix(options.terminator.size());
    const CallsParseResult parsed = parseCalls(calls, tools);
    if (!parsed.ok())
        finding(std::string(how) + " call is invalid: " + parsed.errors.front() + " in " +
                std::string(calls));
}

void check(const ToolSet& tools, std::string_view bytes, const CallGrammarOptions& options) {
    const CallGrammar grammar(tools, options);
    CallMatcher matcher(grammar);
    size_t taken = 0;
    while (taken < bytes.size() && !matcher.isComplete()) {
        CallMatcher before = matcher;
        if (!matcher.accept(static_cast<uint8_t>(bytes[taken]))) {
            matcher = before; // accept() leaves a spent matcher behind
            break;
        }
        ++taken;
    }
    (void)matcher.plainStringRoom();
    std::string text(bytes.substr(0, taken));
    if (matcher.isComplete()) {
        requireValidCall(text, tools, options, "an accepted");
        return;
    }
    if (taken < bytes.size()) {
        CallMatcher rest = matcher;
        if (rest.acceptBytes(bytes.substr(taken)))
            finding("acceptBytes() took a byte that accept() refused");
        if (rest.completion() != matcher.completion())
            finding("a failed acceptBytes() changed the matcher");
    }
    const std::string completion = matcher.completion();
    if (!matcher.acceptBytes(completion) || !matcher.isComplete())
        finding("completion() does not complete the call");
    requireValidCall(text + completion, tools, options, "a completed");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const fuzz::CpuClock clock;
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    if (const auto input = fuzz::readToolCallInput(bytes); input && !input->tools.tools.empty()) {
        check(input->tools, input->callText, CallGrammarOptions{});
        check(input->tools, input->callText, CallGrammarOptions{"</tool_call>", true});
    }
    if (clock.elapsedSeconds() > fuzz::kMaxCpuSecondsPerInput)
        finding("an input of " + std::to_string(size) + " bytes took more than a second of CPU");
    return 0;
}
