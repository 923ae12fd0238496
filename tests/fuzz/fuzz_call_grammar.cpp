// libFuzzer target: a tool set and a byte string (fuzz_tool_input.h) -> the call grammar compiled
// from the tools in every call format, with its markers as text and as tokens, and its matcher fed
// the bytes one at a time (a marker's text where the grammar wants that marker's token).
//
// Properties (a violation aborts, which libFuzzer reports as a crash):
//   - compiling and matching never throw, whatever the schema and the bytes;
//   - wherever the matcher may stop, what it read is valid: stripped of the optional leading
//     space and the text terminator, parseCalls() reads it in the format without an error (the
//     grammar admits no call the validator would reject), and the calls are as many as the
//     matcher counted;
//   - from wherever the matcher stopped, completion() (and the marker tokens due on the way)
//     reaches a stop, and the finished text is valid the same way (what the decoder relies on
//     when the token budget runs out);
//   - acceptBytes() is all or nothing;
//   - an input takes at most a second of CPU time (fuzz_limits.h).
#include "fuzz_limits.h"
#include "fuzz_tool_input.h"
#include "tools/call_decoder.h"
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

// `text` as the matcher read it, where it may stop: an optional space, the calls, the terminator
// (JsonList's close token is not the grammar's).
void requireValidCalls(std::string_view text, const ToolSet& tools, const CallMatcher& matcher,
                       const CallGrammar& grammar, const char* how) {
    const CallFormat& format = grammar.format();
    std::string_view calls = text;
    if (format.syntax == CallSyntax::JsonList) {
        if (calls.starts_with(' ')) calls.remove_prefix(1);
        if (!calls.ends_with(grammar.options().terminator))
            finding(std::string(how) + ": no terminator");
        calls.remove_suffix(grammar.options().terminator.size());
    } else {
        if (!calls.ends_with(format.close)) finding(std::string(how) + ": no close marker");
        calls.remove_suffix(format.close.size());
    }
    const CallsParseResult parsed = parseCalls(calls, tools, format);
    if (!parsed.ok())
        finding(std::string(how) + " call is invalid: " + parsed.errors.front() + " in " +
                std::string(calls));
    if (static_cast<int>(parsed.calls.size()) != matcher.callIndex())
        finding(std::string(how) + " text has another count of calls than the matcher's");
}

// Takes the marker that is due, writing its text. False when none is due.
bool takeDueMarker(CallMatcher& matcher, const CallFormat& format, std::string& text) {
    for (const CallMarker marker : {CallMarker::Open, CallMarker::Close})
        if (matcher.acceptMarker(marker)) {
            text += marker == CallMarker::Open ? format.open : format.close;
            return true;
        }
    return false;
}

void check(const ToolSet& tools, std::string_view bytes, const CallFormat& format,
           bool markerTokens) {
    const std::optional<int32_t> token = markerTokens ? std::optional<int32_t>(0) : std::nullopt;
    const CallGrammar grammar(tools, callGrammarOptions(format, CallMarkerTokens{token, token}));
    CallMatcher matcher(grammar);
    std::string text;
    size_t taken = 0;
    while (taken < bytes.size() && !matcher.isComplete()) {
        if (matcher.mayStop()) requireValidCalls(text, tools, matcher, grammar, "a stopping");
        const bool markerDue =
            matcher.awaits(CallMarker::Open) || matcher.awaits(CallMarker::Close);
        const std::string& marker = matcher.awaits(CallMarker::Open) ? format.open : format.close;
        if (markerDue && bytes.substr(taken).starts_with(marker)) {
            takeDueMarker(matcher, format, text);
            taken += marker.size();
            continue;
        }
        CallMatcher before = matcher;
        if (!matcher.accept(static_cast<uint8_t>(bytes[taken]))) {
            matcher = before; // accept() leaves a spent matcher behind
            break;
        }
        text += bytes[taken++];
    }
    (void)matcher.plainStringRoom();
    if (matcher.isComplete()) {
        requireValidCalls(text, tools, matcher, grammar, "an accepted");
        return;
    }
    if (taken < bytes.size()) {
        CallMatcher rest = matcher;
        if (rest.acceptBytes(bytes.substr(taken)))
            finding("acceptBytes() took a byte that accept() refused");
        if (rest.completion() != matcher.completion())
            finding("a failed acceptBytes() changed the matcher");
    }
    for (int markers = 0; !matcher.mayStop(); ++markers) { // at most a close and an open
        const std::string completion = matcher.completion();
        if (!matcher.acceptBytes(completion)) finding("completion() breaks the grammar");
        text += completion;
        if (!matcher.mayStop() && (markers == 2 || !takeDueMarker(matcher, format, text)))
            finding("completion() does not reach a stop");
    }
    requireValidCalls(text, tools, matcher, grammar, "a completed");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const fuzz::CpuClock clock;
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    if (const auto input = fuzz::readToolCallInput(bytes); input && !input->tools.tools.empty())
        for (const CallFormat& format : fuzz::callFormats())
            for (const bool markerTokens : {false, true})
                check(input->tools, input->callText, format, markerTokens);
    if (clock.elapsedSeconds() > fuzz::kMaxCpuSecondsPerInput)
        finding("an input of " + std::to_string(size) + " bytes took more than a second of CPU");
    return 0;
}
