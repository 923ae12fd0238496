// libFuzzer target: any bytes as a JSON array of tool schemas -> parseTools -> tools or issues,
// then the tool block the chat template renders from them, in each of its three layouts.
//
// Properties (a violation aborts, which libFuzzer reports as a crash):
//   - parseTools never throws; it gives tools exactly when it gives no error;
//   - every issue has a message and a place inside the text (offset <= size, line and column
//     from 1);
//   - the tools round-trip: their compactJson() parses to the same names in the same order;
//   - the rendered tool block holds BOS (when the vocabulary adds it) through </tools>, every id
//     inside the vocabulary, one token range per tool, in order, inside the block;
//   - an input takes at most a second of CPU time (fuzz_limits.h).
#include "chat/chat_template.h"
#include "fuzz_limits.h"
#include "fuzz_vocabulary.h"
#include "tokenizer/tokenizer.h"
#include "tools/tool_schema.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

using namespace sinkscope;

[[noreturn]] void finding(const std::string& what) {
    std::fprintf(stderr, "fuzz_tool_schema: %s\n", what.c_str());
    std::abort();
}

void requirePlacedIssues(const std::vector<SchemaIssue>& issues, size_t size) {
    for (const SchemaIssue& issue : issues) {
        if (issue.message.empty()) finding("an issue without a message");
        if (issue.offset > size || issue.line < 1 || issue.column < 1)
            finding("issue '" + issue.text() + "' is placed outside the text");
    }
}

void requireRoundTrip(const ToolSet& tools) {
    const ToolsParseResult again = parseTools(tools.compactJson());
    if (!again.tools) finding("compactJson() does not parse again: " + again.errorSummary());
    if (again.tools->tools.size() != tools.tools.size()) finding("the round trip lost tools");
    for (size_t i = 0; i < tools.tools.size(); ++i)
        if (again.tools->tools[i].name != tools.tools[i].name)
            finding("the round trip renamed a tool");
}

// A ChatML template with the tools in the system turn, as Hugging Face tojson writes them.
constexpr std::string_view kToolTemplate =
    "{%- if tools %}<|im_start|>system\n{% if messages[0].role == 'system' %}"
    "{{ messages[0].content }}\n{% endif %}<tools>{% for t in tools %}\n{{ t | tojson }}"
    "{% endfor %}\n</tools><|im_end|>\n{% elif messages[0].role == 'system' %}"
    "<|im_start|>system\n{{ messages[0].content }}<|im_end|>\n{% endif %}"
    "{% for m in messages if m.role != 'system' %}<|im_start|>{{ m.role }}\n{{ m.content }}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

void requireWellFormedBlock(const Tokenizer& tokenizer, const ToolBlock& block,
                            const ToolSet& tools) {
    if (block.tokens.empty()) finding("an empty tool block");
    if (block.startsWithBos != (block.tokens.front() == tokenizer.bos()))
        finding("the tool block's BOS flag is wrong");
    for (const int32_t id : block.tokens)
        if (id < 0 || id >= tokenizer.size()) finding("a tool-block id outside the vocabulary");
    if (block.tools.size() != tools.tools.size()) finding("not one token range per tool");
    int previousEnd = 0;
    for (size_t i = 0; i < block.tools.size(); ++i) {
        const ToolTokenRange& range = block.tools[i];
        if (range.name != tools.tools[i].name) finding("a token range names the wrong tool");
        if (range.begin < previousEnd || range.end < range.begin ||
            range.end > static_cast<int>(block.tokens.size()))
            finding("a tool's token range is out of order or outside the block");
        previousEnd = range.end;
    }
}

void check(std::string_view text) {
    const ToolsParseResult parsed = parseTools(text);
    if (parsed.tools.has_value() != parsed.ok()) finding("tools and errors disagree");
    requirePlacedIssues(parsed.errors, text.size());
    requirePlacedIssues(parsed.warnings, text.size());
    if (!parsed.tools) return;
    requireRoundTrip(*parsed.tools);
    static const Tokenizer tokenizer(fuzz::fuzzVocabulary(true));
    for (const ChatLayout layout : {ChatLayout::Needle, ChatLayout::Plain})
        requireWellFormedBlock(tokenizer,
                               ChatTemplate(tokenizer, layout).toolBlock(*parsed.tools, "Facts."),
                               *parsed.tools);
    static const std::optional<ModelTemplate> model = [] {
        std::string whyNot;
        auto made = ModelTemplate::create(tokenizer, kToolTemplate, {}, 0, whyNot);
        if (!made) finding("the fuzz tool template is refused: " + whyNot);
        return made;
    }();
    if (parsed.tools->tools.empty()) return; // no tools: nothing is pinned
    requireWellFormedBlock(tokenizer, model->toolBlock(*parsed.tools, "Facts."), *parsed.tools);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const fuzz::CpuClock clock;
    check(std::string_view(reinterpret_cast<const char*>(data), size));
    if (clock.elapsedSeconds() > fuzz::kMaxCpuSecondsPerInput)
        finding("an input of " + std::to_string(size) + " bytes took more than a second of CPU");
    return 0;
}
