// libFuzzer target: a tool set and the text a model wrote (fuzz_tool_input.h) -> parseCalls in
// every call format -> calls validated against the tools, or errors.
//
// Properties (a violation aborts, which libFuzzer reports as a crash):
//   - parseCalls and parseCallsText never throw;
//   - a failed parse says why (at least one non-empty message);
//   - valid calls round-trip: callsBody() of the calls parses again, valid, to the same names and
//     arguments, and so does callsText() with parseCallsText();
//   - an input takes at most a second of CPU time (fuzz_limits.h).
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
    std::fprintf(stderr, "fuzz_tool_calls: %s\n", what.c_str());
    std::abort();
}

void requireSameCalls(const CallsParseResult& parsed, const CallsParseResult& again,
                      const std::string& written) {
    if (!again.ok()) finding("written valid calls are invalid: " + again.errors.front());
    if (again.calls.size() != parsed.calls.size()) finding("the round trip lost calls");
    for (size_t i = 0; i < parsed.calls.size(); ++i)
        if (again.calls[i].name != parsed.calls[i].name ||
            again.calls[i].arguments != parsed.calls[i].arguments)
            finding("the round trip changed call " + std::to_string(i) + ": " + written);
}

void check(const ToolSet& tools, std::string_view text, const CallFormat& format) {
    for (const CallsParseResult& result :
         {parseCalls(text, tools, format), parseCallsText(text, tools, format)})
        for (const std::string& error : result.errors)
            if (error.empty()) finding("an empty error message");
    const CallsParseResult parsed = parseCalls(text, tools, format);
    if (!parsed.ok()) return;
    const std::string body = callsBody(parsed.calls, format);
    requireSameCalls(parsed, parseCalls(body, tools, format), body);
    const std::string written = callsText(parsed.calls, format);
    requireSameCalls(parsed, parseCallsText(written, tools, format), written);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const fuzz::CpuClock clock;
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    if (const auto input = fuzz::readToolCallInput(bytes))
        for (const CallFormat& format : fuzz::callFormats())
            check(input->tools, input->callText, format);
    if (clock.elapsedSeconds() > fuzz::kMaxCpuSecondsPerInput)
        finding("an input of " + std::to_string(size) + " bytes took more than a second of CPU");
    return 0;
}
