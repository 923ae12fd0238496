// template: a conversation rendered through a chat template exactly as Hugging Face's
// apply_chat_template renders it (the engine's Jinja interpreter), for comparing renders.
#include "cli_common.h"
#include "commands.h"
#include "gguf/gguf.h"
#include "jinja/jinja_template.h"

#include <ctime>
#include <iostream>

namespace sinkscope::cli {

namespace {

using Json = nlohmann::ordered_json;

Json readJsonFile(const std::string& path, std::string_view what) {
    const std::string text = readWholeFile(path, what);
    Json value = Json::parse(text, nullptr, false);
    if (value.is_discarded()) throw InputError(std::string(what) + " '" + path + "' is not JSON");
    return value;
}

// Midnight UTC of YYYY-MM-DD, the clock strftime_now reads.
std::time_t parseDay(const std::string& text) {
    std::tm day{};
    int year = 0, month = 0, dayOfMonth = 0;
    char tail = 0;
    if (std::sscanf(text.c_str(), "%4d-%2d-%2d%c", &year, &month, &dayOfMonth, &tail) != 3 ||
        month < 1 || month > 12 || dayOfMonth < 1 || dayOfMonth > 31)
        throw UsageError("--now must be a date YYYY-MM-DD, not '" + text + "'");
    day.tm_year = year - 1900;
    day.tm_mon = month - 1;
    day.tm_mday = dayOfMonth;
    return timegm(&day);
}

struct TemplateSource {
    std::string text;
    std::string bos;
    std::string eos;
};

// The model's own template and its BOS/EOS text, or a template file with the given tokens.
TemplateSource templateSource(const ParsedArgs& args) {
    if (args.has("--model") == args.has("--template"))
        throw UsageError("'template' needs exactly one of --model and --template");
    if (args.has("--template"))
        return {readWholeFile(args.required("--template"), "template"),
                args.value("--bos").value_or(""), args.value("--eos").value_or("")};
    if (args.has("--bos") || args.has("--eos"))
        throw UsageError("--bos and --eos go with --template; a model names its own");
    const std::string path = args.required("--model");
    const Tokenizer tokenizer = loadTokenizer(path);
    std::string error;
    const auto file = GgufFile::open(path, error);
    if (!file) throw InputError(error);
    const std::optional<std::string> text = file->getString("tokenizer.chat_template");
    if (!text)
        throw InputError(path + ": the model has no chat template (tokenizer.chat_template)");
    return {*text, tokenizer.piece(tokenizer.bos(), true), tokenizer.piece(tokenizer.eos(), true)};
}

std::string located(const JinjaError& error) {
    if (error.line == 0) return error.message;
    return "line " + std::to_string(error.line) + ", column " + std::to_string(error.column) +
           ": " + error.message;
}

} // namespace

int templateCommand(CommandArgs args) {
    constexpr OptionSpec kOptions[] = {{"--model"},
                                       {"--template"},
                                       {"--bos"},
                                       {"--eos"},
                                       {"--conversation"},
                                       {"--tools"},
                                       {"--no-generation-prompt", false},
                                       {"--now"}};
    const ParsedArgs parsed = ParsedArgs::parse("template", kOptions, args);
    const TemplateSource source = templateSource(parsed);
    const Json conversation = readJsonFile(parsed.required("--conversation"), "conversation");
    if (!conversation.is_object() || !conversation.contains("messages") ||
        !conversation["messages"].is_array())
        throw InputError("the conversation must be an object with a \"messages\" array");
    Json context = Json::object();
    context["messages"] = conversation["messages"];
    if (parsed.has("--tools"))
        context["tools"] = readJsonFile(parsed.required("--tools"), "tools");
    else if (conversation.contains("tools"))
        context["tools"] = conversation["tools"];
    context["bos_token"] = source.bos;
    context["eos_token"] = source.eos;
    context["add_generation_prompt"] = !parsed.has("--no-generation-prompt");
    const std::time_t now =
        parsed.has("--now") ? parseDay(parsed.required("--now")) : std::time(nullptr);

    JinjaError error;
    const std::optional<JinjaTemplate> compiled = JinjaTemplate::parse(source.text, error);
    if (!compiled) throw InputError("the template does not parse: " + located(error));
    const std::optional<std::string> rendered = compiled->render(context, now, error);
    if (!rendered) throw InputError("the template raised: " + located(error));
    std::cout << *rendered;
    return 0;
}

} // namespace sinkscope::cli
