#include "chat/model_template.h"

#include "chat/call_format_probe.h"

#include <algorithm>
#include <stdexcept>

namespace sinkscope {

namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kProbeQuestion = "Which tool answers this probe?";
constexpr std::string_view kProbeAnswer = "The probe is answered.";
constexpr std::string_view kLaterQuestion = "And a second probe?";

// A tool every template can render (Hermes-style templates read each property's description).
const Json& probeTools() {
    static const Json tools = Json::parse(R"([{"type": "function", "function": {
        "name": "probe_forecast", "description": "Forecast for a probe city.",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string", "description": "The city."},
            "days": {"type": "integer", "description": "How many days."}},
        "required": ["city"]}}}])");
    return tools;
}

std::vector<FunctionCall> probeCalls(size_t count) {
    std::vector<FunctionCall> calls;
    for (size_t i = 0; i < count; ++i)
        calls.push_back({"probe_forecast", {{"city", i == 0 ? "Porto" : "Lyon"}, {"days", 3}}});
    return calls;
}

Json withMessage(Json messages, Json message) {
    messages.push_back(std::move(message));
    return messages;
}

size_t commonPrefix(std::string_view a, std::string_view b) {
    const auto [ia, ib] = std::ranges::mismatch(a, b);
    return static_cast<size_t>(ia - a.begin());
}

size_t commonSuffix(std::string_view a, std::string_view b) {
    size_t count = 0;
    while (count < a.size() && count < b.size() &&
           a[a.size() - 1 - count] == b[b.size() - 1 - count])
        ++count;
    return count;
}

std::string located(const JinjaError& error) {
    if (error.line == 0) return error.message;
    return "line " + std::to_string(error.line) + ", column " + std::to_string(error.column) +
           ": " + error.message;
}

// The number of leading tokens that end at or before `offset`; a BOS the tokenizer added (not in
// the text) always counts.
size_t tokensBefore(const TokenizedText& tokens, size_t offset, size_t textSize, bool addedBos) {
    size_t count = tokens.tokenAtOrAfter(offset);
    const size_t end = count < tokens.tokens.size() ? tokens.starts[count] : textSize;
    if (end > offset && count > 0) --count; // that token runs past the offset
    return addedBos ? std::max<size_t>(count, 1) : count;
}

// The text as a JSON string the template accepts: malformed UTF-8 (a reply cut inside a
// character) becomes U+FFFD.
Json utf8Text(std::string_view text) {
    const std::string quoted =
        Json(std::string(text)).dump(-1, ' ', false, Json::error_handler_t::replace);
    return Json::parse(quoted);
}

} // namespace

Json openAiTools(const ToolSet& tools) {
    Json array = Json::array();
    for (const ToolSchema& tool : tools.tools) {
        Json function = tool.definition.is_object() ? tool.definition : Json::object();
        function["name"] = tool.name;
        if (!function.contains("description")) function["description"] = "";
        if (!function.contains("parameters"))
            function["parameters"] = {{"type", "object"}, {"properties", Json::object()}};
        array.push_back({{"type", "function"}, {"function", std::move(function)}});
    }
    return array;
}

Json systemMessage(std::string_view content) {
    return {{"role", "system"}, {"content", utf8Text(content)}};
}

Json userMessage(std::string_view content) {
    return {{"role", "user"}, {"content", utf8Text(content)}};
}

Json assistantMessage(std::string_view content, std::span<const FunctionCall> calls,
                      int firstCallId) {
    Json message = {{"role", "assistant"}, {"content", utf8Text(content)}};
    if (calls.empty()) return message;
    Json toolCalls = Json::array();
    for (size_t i = 0; i < calls.size(); ++i) {
        const std::string id = std::to_string(100000 + firstCallId + static_cast<int>(i));
        toolCalls.push_back(
            {{"id", "call" + id.substr(id.size() - 5)},
             {"type", "function"},
             {"function", {{"name", calls[i].name}, {"arguments", calls[i].arguments}}}});
    }
    message["tool_calls"] = std::move(toolCalls);
    return message;
}

Json toolMessage(std::string_view content, int callId, std::string_view name) {
    const std::string id = std::to_string(100000 + callId);
    return {{"role", "tool"},
            {"tool_call_id", "call" + id.substr(id.size() - 5)},
            {"name", utf8Text(name)},
            {"content", utf8Text(content)}};
}

ModelTemplate::ModelTemplate(const Tokenizer& tokenizer, JinjaTemplate program,
                             JinjaTemplate toJson, JinjaTemplate toIndentedJson,
                             const ModelTemplateOptions& options, std::time_t now)
    : m_tokenizer(&tokenizer), m_program(std::move(program)), m_toJson(std::move(toJson)),
      m_toIndentedJson(std::move(toIndentedJson)), m_options(options), m_now(now),
      m_bosText(tokenizer.piece(tokenizer.bos(), true)),
      m_eosText(tokenizer.piece(tokenizer.eos(), true)) {}

std::optional<ModelTemplate> ModelTemplate::create(const Tokenizer& tokenizer,
                                                   std::string_view source,
                                                   const ModelTemplateOptions& options,
                                                   std::time_t now, std::string& whyNot) {
    JinjaError error;
    std::optional<JinjaTemplate> program = JinjaTemplate::parse(source, error);
    if (!program) {
        whyNot = "the model's chat template does not parse: " + located(error);
        return std::nullopt;
    }
    std::optional<JinjaTemplate> toJson = JinjaTemplate::parse("{{ value | tojson }}", error);
    std::optional<JinjaTemplate> toIndentedJson =
        JinjaTemplate::parse("{{ value | tojson(indent=4) }}", error);
    if (!toJson || !toIndentedJson) throw std::logic_error("the tojson helpers do not parse");
    ModelTemplate result(tokenizer, std::move(*program), std::move(*toJson),
                         std::move(*toIndentedJson), options, now);
    if (!result.probe(whyNot)) return std::nullopt;
    return result;
}

std::optional<std::string> ModelTemplate::renderWith(const Json& context,
                                                     std::string& error) const {
    JinjaError jinjaError;
    std::optional<std::string> text = m_program.render(context, m_now, jinjaError);
    if (!text) error = located(jinjaError);
    return text;
}

std::optional<std::string> ModelTemplate::render(const Json& messages, const Json& tools,
                                                 bool addGenerationPrompt,
                                                 std::string& error) const {
    Json context = {{"messages", messages},
                    {"bos_token", m_bosText},
                    {"eos_token", m_eosText},
                    {"add_generation_prompt", addGenerationPrompt}};
    if (tools.is_array() && !tools.empty()) context["tools"] = tools;
    if (m_options.toolsInSystemTurn && m_hasSystemTurnOption)
        context["tools_in_user_message"] = false;
    return renderWith(context, error);
}

TokenizedText ModelTemplate::tokenize(std::string_view rendered, const Json& messages,
                                      bool bos) const {
    std::vector<std::string> contents;
    for (const Json& message : messages)
        if (message.is_object() && message.contains("content") && message["content"].is_string())
            contents.push_back(message["content"].get<std::string>());
    const std::vector<TextSpan> spans = findInOrder(rendered, contents);
    return tokenizeRendered(*m_tokenizer, rendered, spans, bos && m_tokenizer->addBos());
}

std::string ModelTemplate::dumped(const JinjaTemplate& filter, const Json& value) const {
    JinjaError error;
    return filter.render(Json{{"value", value}}, m_now, error).value_or("");
}

bool ModelTemplate::probe(std::string& whyNot) {
    const Json tools = probeTools();
    const Json user = Json::array({userMessage(kProbeQuestion)});
    std::string error;
    const auto fail = [&](std::string_view what) {
        whyNot = std::string("the model's chat template ") + std::string(what) +
                 (error.empty() ? "" : ": " + error);
        return false;
    };
    // Rendered before the switch is known, so as the model was trained.
    const std::optional<std::string> asTrained = render(user, tools, true, error);
    if (!asTrained) return fail("raises on a probe conversation with tools");
    Json switchedContext = {{"messages", user},
                            {"tools", tools},
                            {"bos_token", m_bosText},
                            {"eos_token", m_eosText},
                            {"add_generation_prompt", true},
                            {"tools_in_user_message", false}};
    const std::optional<std::string> switched = renderWith(switchedContext, error);
    m_hasSystemTurnOption = switched && *switched != *asTrained;

    const std::optional<std::string> withTools = render(user, tools, true, error);
    const std::optional<std::string> without = render(user, Json::array(), true, error);
    if (!withTools || !without) return fail("raises on a probe conversation");
    if (*withTools == *without) return fail("does not render the tools it is given");

    const Json answered = withMessage(user, assistantMessage(kProbeAnswer, {}, 0));
    const std::optional<std::string> withAnswer = render(answered, tools, false, error);
    if (!withAnswer) return fail("raises on a probe answer");
    const std::string answerStart = *withTools + std::string(kProbeAnswer);
    if (withAnswer->starts_with(answerStart)) m_closing = withAnswer->substr(answerStart.size());

    // The header of a user turn (text before its content), from a later turn without tools.
    const Json twoTurns = withMessage(answered, userMessage(kLaterQuestion));
    std::string header;
    const std::optional<std::string> plainAnswer = render(answered, Json::array(), false, error);
    const std::optional<std::string> later = render(twoTurns, Json::array(), true, error);
    const std::optional<std::string> laterWithTools = render(twoTurns, tools, true, error);
    if (!later || !laterWithTools) return fail("raises on a probe conversation of two turns");
    if (plainAnswer && later->starts_with(*plainAnswer)) {
        const size_t question = later->find(kLaterQuestion, plainAnswer->size());
        if (question != std::string::npos)
            header = later->substr(plainAnswer->size(), question - plainAnswer->size());
    }
    // Over two turns, the renders with and without tools must rejoin before the first user turn
    // (header included): else the tools are inside it (Llama-3.x) or move with the last one
    // (Mistral).
    const size_t probeAt = later->find(kProbeQuestion);
    const size_t shared = commonSuffix(*laterWithTools, *later);
    const size_t userTurnStart =
        probeAt != std::string::npos && probeAt >= header.size() &&
                later->compare(probeAt - header.size(), header.size(), header) == 0
            ? probeAt - header.size()
            : probeAt;
    m_toolsInUserTurn = later->size() - shared > userTurnStart;

    const std::vector<FunctionCall> one = probeCalls(1);
    const std::vector<FunctionCall> two = probeCalls(2);
    const std::optional<std::string> oneCall =
        render(withMessage(user, assistantMessage("", one, 0)), tools, false, error);
    std::string twoError;
    const std::optional<std::string> twoCalls =
        render(withMessage(user, assistantMessage("", two, 0)), tools, false, twoError);
    std::string callError = "the template raises on a probe call";
    std::optional<CallFormat> format;
    if (oneCall && oneCall->starts_with(*withTools)) {
        const auto callText = [&](const std::string& rendered) {
            std::string_view text = std::string_view(rendered).substr(withTools->size());
            if (!m_closing.empty() && text.ends_with(m_closing))
                text.remove_suffix(m_closing.size());
            return std::string(text);
        };
        const std::optional<std::string> twoText = twoCalls && twoCalls->starts_with(*withTools)
                                                       ? std::optional(callText(*twoCalls))
                                                       : std::nullopt;
        format = callFormatFromRender(callText(*oneCall), twoText, callError);
    } else if (oneCall) {
        callError = "the template's call does not follow its generation prompt";
    }
    m_callFormat = format.value_or(needleCallFormat());

    std::vector<std::string> notes;
    if (!format) notes.push_back(callError + ": calls are written as Needle's");
    if (m_options.toolsInSystemTurn && !m_hasSystemTurnOption)
        notes.push_back("pinning the tools in the system turn is not available: the template "
                        "has no tools_in_user_message switch");
    if (m_options.toolsInSystemTurn && m_hasSystemTurnOption)
        notes.push_back("the tools are pinned in the system turn (tools_in_user_message false), "
                        "which is not how the model was trained to see them");
    if (m_toolsInUserTurn)
        notes.push_back(std::string("the template writes the tools inside the user turn (or "
                                    "moves them with the last one), so they are not pinned: "
                                    "they are rendered with the conversation") +
                        (m_hasSystemTurnOption ? " (the option to pin them in the system turn "
                                                 "is available)"
                                               : ""));
    for (const std::string& note : notes)
        m_notice += (m_notice.empty() ? "" : "; ") + note;

    ToolsParseResult parsed = parseToolsValue(tools);
    if (!parsed.tools) throw std::logic_error("the probe tool does not parse");
    try {
        const ToolBlock block = toolBlock(*parsed.tools, {});
        if (block.pinsTools && block.tools.empty())
            return fail("does not show the tool definitions it is given");
    } catch (const std::invalid_argument& raised) {
        whyNot = raised.what();
        return false;
    }
    return true;
}

ToolBlock ModelTemplate::toolBlock(const ToolSet& tools, std::string_view facts) const {
    Json messages = Json::array();
    if (!facts.empty()) messages.push_back(systemMessage(facts));
    messages.push_back(userMessage(kProbeQuestion));
    const Json toolsJson = openAiTools(tools);
    std::string error;
    const std::optional<std::string> withTools = render(messages, toolsJson, true, error);
    const std::optional<std::string> without = render(messages, Json::array(), true, error);
    if (!withTools || !without)
        throw std::invalid_argument("the model's chat template raises for these tools: " + error);
    const size_t shared = commonSuffix(*withTools, *without);
    const size_t probeAt = withTools->rfind(kProbeQuestion);
    ToolBlock block;
    block.pinsTools = !m_toolsInUserTurn && !tools.tools.empty() && probeAt != std::string::npos &&
                      withTools->size() - shared <= probeAt;
    const size_t blockEnd =
        block.pinsTools ? withTools->size() - shared : commonPrefix(*withTools, *without);
    const TokenizedText tokens = tokenize(*withTools, messages);
    const bool addedBos = !tokens.tokens.empty() && tokens.tokens.front() == m_tokenizer->bos() &&
                          !withTools->starts_with(m_bosText);
    const size_t count = tokensBefore(tokens, blockEnd, withTools->size(), addedBos);
    const size_t textEnd = count < tokens.tokens.size() ? tokens.starts[count] : withTools->size();
    block.text = withTools->substr(0, textEnd);
    block.tokens.assign(tokens.tokens.begin(), tokens.tokens.begin() + std::ptrdiff_t(count));
    block.startsWithBos = !block.tokens.empty() && block.tokens.front() == m_tokenizer->bos();
    if (block.pinsTools) block.tools = toolRanges(tools, block.text, tokens, count);
    block.notice = m_notice;
    if (block.pinsTools && block.tools.empty() && !tools.tools.empty())
        block.notice += std::string(m_notice.empty() ? "" : "; ") +
                        "the tool definitions could not be located in the pinned block: no "
                        "attention per tool";
    return block;
}

std::vector<ToolTokenRange> ModelTemplate::toolRanges(const ToolSet& tools,
                                                      std::string_view blockText,
                                                      const TokenizedText& tokens,
                                                      size_t blockTokens) const {
    const Json toolsJson = openAiTools(tools);
    std::vector<size_t> begins;
    size_t lastEnd = 0;
    size_t cursor = 0;
    for (const Json& wrapped : toolsJson) {
        const Json& function = wrapped["function"];
        const std::string forms[] = {
            dumped(m_toJson, wrapped),  dumped(m_toIndentedJson, wrapped),  wrapped.dump(),
            dumped(m_toJson, function), dumped(m_toIndentedJson, function), function.dump()};
        size_t begin = std::string_view::npos;
        size_t end = 0;
        for (const std::string& form : forms) {
            begin = form.empty() ? std::string_view::npos : blockText.find(form, cursor);
            if (begin == std::string_view::npos) continue;
            end = begin + form.size();
            break;
        }
        if (begin == std::string_view::npos) {
            // Written field by field (Hermes): from its {"name": ... to its parameters.
            const std::string name = "{\"name\": " + Json(function["name"]).dump();
            begin = blockText.find(name, cursor);
            if (begin == std::string_view::npos) return {};
            const std::string_view wrapper = "{\"type\": \"function\", \"function\": ";
            if (begin >= wrapper.size() &&
                blockText.substr(begin - wrapper.size(), wrapper.size()) == wrapper)
                begin -= wrapper.size();
            end = begin + name.size();
            const std::string parameters = dumped(m_toJson, function["parameters"]);
            const size_t found = blockText.find(parameters, end);
            if (!parameters.empty() && found != std::string_view::npos)
                end = found + parameters.size();
            while (end < blockText.size() && blockText[end] == '}')
                ++end;
        }
        begins.push_back(begin);
        lastEnd = end;
        cursor = end;
    }
    const auto tokenAt = [&](size_t offset) {
        return static_cast<int>(std::min(tokens.tokenAtOrAfter(offset), blockTokens));
    };
    std::vector<ToolTokenRange> ranges;
    for (size_t i = 0; i < tools.tools.size(); ++i) {
        const size_t end = i + 1 < begins.size() ? begins[i + 1] : lastEnd;
        ranges.push_back({tools.tools[i].name, tokenAt(begins[i]), tokenAt(end)});
    }
    return ranges;
}

} // namespace sinkscope
