// libFuzzer target: template bytes, optionally a 0 byte and then a text -> JinjaTemplate::parse
// and render, with a fixed conversation (system, user, an assistant tool call, its result, a last
// user turn whose content is the text after the 0 byte, also given as `user_text`) and tools.
//
// Properties (a violation aborts, which libFuzzer reports as a crash):
//   - parse and render never throw (nlohmann's exceptions included) nor crash (ASan, UBSan);
//   - every error has a message, and either no place or one inside the source;
//   - a rendered text is valid UTF-8 and within maxOutputBytes;
//   - rendering twice gives the same text or the same error;
//   - an input takes at most a second of CPU time and holds at most 64 MiB of heap at once.
#include "fuzz_limits.h"
#include "jinja/jinja_template.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

using namespace sinkscope;
using Json = nlohmann::ordered_json;

constexpr int64_t kMaxHeapBytes = int64_t{64} << 20;

// Smaller than the defaults where they only cost time; nesting stays at the default so that the
// deepest recursion the limits allow runs under the sanitizers' larger stack frames.
JinjaLimits fuzzLimits() {
    JinjaLimits limits;
    limits.maxLoopIterations = 20000;
    limits.maxOutputBytes = 1u << 20;
    limits.maxSteps = 300000;
    return limits;
}

[[noreturn]] void finding(const std::string& what) {
    std::fprintf(stderr, "fuzz_jinja: %s\n", what.c_str());
    std::abort();
}

// The text as valid UTF-8 (the context must be): every byte outside ASCII becomes '?'.
std::string asciiOnly(std::string_view bytes) {
    std::string text(bytes);
    for (char& c : text)
        if (static_cast<unsigned char>(c) >= 0x80) c = '?';
    return text;
}

Json conversation(const std::string& text) {
    const Json call = {{"type", "function"},
                       {"function", {{"name", "set_light"}, {"arguments", {{"room", "kitchen"}}}}}};
    Json messages = Json::array();
    messages.push_back({{"role", "system"}, {"content", "You are a helpful assistant."}});
    messages.push_back({{"role", "user"}, {"content", "Turn on the light"}});
    messages.push_back(
        {{"role", "assistant"}, {"content", ""}, {"tool_calls", Json::array({call})}});
    messages.push_back({{"role", "tool"}, {"name", "set_light"}, {"content", "{\"ok\": true}"}});
    messages.push_back({{"role", "user"}, {"content", text}});
    const Json tool = {
        {"type", "function"},
        {"function",
         {{"name", "set_light"},
          {"description", "Switch a room's light."},
          {"parameters",
           {{"type", "object"},
            {"properties", {{"room", {{"type", "string"}}}, {"on", {{"type", "boolean"}}}}},
            {"required", Json::array({"room"})}}}}}};
    return {{"messages", messages}, {"tools", Json::array({tool})},  {"bos_token", "<s>"},
            {"eos_token", "</s>"},  {"add_generation_prompt", true}, {"user_text", text}};
}

bool validUtf8(std::string_view text) {
    for (size_t i = 0; i < text.size();) {
        const auto lead = static_cast<unsigned char>(text[i]);
        const size_t length = lead < 0x80    ? 1
                              : lead >= 0xF0 ? 4
                              : lead >= 0xE0 ? 3
                              : lead >= 0xC2 ? 2
                                             : 0;
        if (length == 0 || i + length > text.size()) return false;
        for (size_t k = 1; k < length; ++k)
            if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) return false;
        i += length;
    }
    return true;
}

// Lines as the interpreter counts them: \r\n, \r and \n each end one (jinja2 normalizes them).
int lineCount(std::string_view source) {
    int lines = 1;
    for (size_t i = 0; i < source.size(); ++i)
        if (source[i] == '\n' ||
            (source[i] == '\r' && (i + 1 == source.size() || source[i + 1] != '\n')))
            ++lines;
    return lines;
}

void checkError(const JinjaError& error, std::string_view source, const char* stage) {
    if (error.message.empty()) finding(std::string(stage) + ": an empty error message");
    if (error.line < 0 || error.line > lineCount(source) || (error.line > 0 && error.column < 1) ||
        (error.line == 0 && error.column != 0))
        finding(std::string(stage) + ": error place " + std::to_string(error.line) + ":" +
                std::to_string(error.column) + " outside the source: " + error.message);
}

void check(std::string_view source, const Json& context) {
    const JinjaLimits limits = fuzzLimits();
    JinjaError error;
    const std::optional<JinjaTemplate> compiled = JinjaTemplate::parse(source, error, limits);
    if (!compiled) {
        checkError(error, source, "parse");
        return;
    }
    JinjaError firstError;
    const std::optional<std::string> first = compiled->render(context, 1796083200, firstError);
    JinjaError secondError;
    const std::optional<std::string> second = compiled->render(context, 1796083200, secondError);
    if (first != second || firstError.message != secondError.message)
        finding("two renders of one template differ");
    if (!first) {
        checkError(firstError, source, "render");
        return;
    }
    if (first->size() > limits.maxOutputBytes) finding("the render is longer than the limit");
    if (!validUtf8(*first)) finding("the render is not valid UTF-8");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const fuzz::CpuClock clock;
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    const size_t separator = bytes.find('\0');
    const std::string_view source = bytes.substr(0, separator);
    const std::string text = separator == std::string_view::npos
                                 ? std::string("Hello")
                                 : asciiOnly(bytes.substr(separator + 1));
    {
        const fuzz::HeapPeak heap;
        check(source, conversation(text));
        if (heap.peakBytes() > kMaxHeapBytes)
            finding("an input of " + std::to_string(size) + " bytes held " +
                    std::to_string(heap.peakBytes()) + " bytes of heap");
    }
    if (clock.elapsedSeconds() > fuzz::kMaxCpuSecondsPerInput)
        finding("an input of " + std::to_string(size) + " bytes took more than a second of CPU");
    return 0;
}
