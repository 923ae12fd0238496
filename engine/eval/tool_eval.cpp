#include "eval/tool_eval.h"

#include "session/tool_chat.h"
#include "tools/value_validation.h"

#include <algorithm>

namespace sinkscope {

namespace {

using Json = nlohmann::ordered_json;

bool sameNumber(const Json& a, const Json& b) {
    if (a.is_number_float() || b.is_number_float()) return a.get<double>() == b.get<double>();
    if (a.is_number_unsigned() && b.is_number_unsigned())
        return a.get<uint64_t>() == b.get<uint64_t>();
    if (a.is_number_unsigned() != b.is_number_unsigned()) {
        const Json& unsignedValue = a.is_number_unsigned() ? a : b;
        const int64_t signedValue = (a.is_number_unsigned() ? b : a).get<int64_t>();
        return signedValue >= 0 &&
               static_cast<uint64_t>(signedValue) == unsignedValue.get<uint64_t>();
    }
    return a.get<int64_t>() == b.get<int64_t>();
}

bool sameObject(const Json& a, const Json& b) {
    if (a.size() != b.size()) return false;
    for (const auto& [key, value] : a.items()) {
        const auto other = b.find(key);
        if (other == b.end() || !sameJson(value, *other)) return false;
    }
    return true;
}

bool sameArray(const Json& a, const Json& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), sameJson);
}

// Where a suite line breaks the format: "/turns/2/query: expected a string".
class LineErrors {
public:
    void add(const std::string& pointer, const std::string& message) {
        m_errors.push_back(pointer.empty() ? message : pointer + ": " + message);
    }
    bool empty() const { return m_errors.empty(); }
    const std::vector<std::string>& list() const { return m_errors; }

private:
    std::vector<std::string> m_errors;
};

// "expected a string, got a number", as the tools schema words it.
std::string expected(const char* what, const Json& value) {
    const std::string type = value.type_name();
    const std::string found = value.is_null()                    ? type
                              : type.find_first_of("aeiou") == 0 ? "an " + type
                                                                 : "a " + type;
    return std::string("expected ") + what + ", got " + found;
}

// A member that must be there with the given kind; nullptr (and an error) otherwise.
const Json* member(const Json& object, const char* key, const std::string& pointer,
                   bool (Json::*isKind)() const noexcept, const char* kind, LineErrors& errors) {
    const auto found = object.find(key);
    if (found == object.end()) {
        errors.add(pointer, std::string("missing \"") + key + "\"");
        return nullptr;
    }
    if (!((*found).*isKind)()) {
        errors.add(pointer + "/" + key, expected(kind, *found));
        return nullptr;
    }
    return &*found;
}

// One expected call: {"name", "arguments"} (arguments may be left out: {}), checked against the
// tool it names so that a suite cannot expect what the tools cannot express.
std::optional<FunctionCall> readAnswer(const Json& answer, const ToolSet& tools,
                                       const std::string& pointer, LineErrors& errors) {
    if (!answer.is_object()) {
        errors.add(pointer, expected("a call object", answer));
        return std::nullopt;
    }
    const Json* name = member(answer, "name", pointer, &Json::is_string, "a string", errors);
    if (!name) return std::nullopt;
    FunctionCall call{name->get<std::string>(), Json::object()};
    if (answer.contains("arguments")) {
        const Json* arguments =
            member(answer, "arguments", pointer, &Json::is_object, "an object", errors);
        if (!arguments) return std::nullopt;
        call.arguments = *arguments;
    }
    const ToolSchema* tool = tools.find(call.name);
    if (!tool) {
        errors.add(pointer + "/name", "\"" + call.name + "\" is not one of the tools");
        return std::nullopt;
    }
    std::vector<std::string> invalid;
    if (!validateValue(tool->parameters, call.arguments, pointer + "/arguments", invalid)) {
        for (const std::string& message : invalid)
            errors.add({}, message);
        return std::nullopt;
    }
    return call;
}

std::optional<EvalTurn> readTurn(const Json& turn, const ToolSet& tools, const std::string& pointer,
                                 LineErrors& errors) {
    if (!turn.is_object()) {
        errors.add(pointer, expected("a turn object", turn));
        return std::nullopt;
    }
    const Json* query = member(turn, "query", pointer, &Json::is_string, "a string", errors);
    const Json* answers = member(turn, "answers", pointer, &Json::is_array, "an array", errors);
    if (!query || !answers) return std::nullopt;
    EvalTurn read{query->get<std::string>(), {}, Json{{"status", "ok"}}};
    if (const auto result = turn.find("result"); result != turn.end() && !result->is_null())
        read.result = *result;
    bool ok = true;
    for (size_t i = 0; i < answers->size(); ++i) {
        std::optional<FunctionCall> call =
            readAnswer((*answers)[i], tools, pointer + "/answers/" + std::to_string(i), errors);
        if (call)
            read.answers.push_back(std::move(*call));
        else
            ok = false;
    }
    if (!ok) return std::nullopt;
    return read;
}

std::optional<ToolSet> readTools(const Json& line, std::string_view lineText, LineErrors& errors) {
    const Json* tools = member(line, "tools", "", &Json::is_array, "an array", errors);
    if (!tools) return std::nullopt;
    ToolsParseResult parsed = parseToolsValue(*tools, lineText, "/tools");
    for (const SchemaIssue& issue : parsed.errors)
        errors.add({}, issue.text());
    return std::move(parsed.tools);
}

std::optional<EvalConversation> readConversation(const Json& line, std::string_view lineText,
                                                 LineErrors& errors) {
    if (!line.is_object()) {
        errors.add({}, expected("a conversation object", line));
        return std::nullopt;
    }
    std::optional<ToolSet> tools = readTools(line, lineText, errors);
    EvalConversation conversation;
    if (const auto system = line.find("system"); system != line.end()) {
        if (system->is_string())
            conversation.facts = system->get<std::string>();
        else
            errors.add("/system", expected("a string", *system));
    }
    const Json* turns = member(line, "turns", "", &Json::is_array, "an array", errors);
    if (turns && turns->empty()) errors.add("/turns", "no turns");
    if (!tools || !turns || !errors.empty()) return std::nullopt;
    conversation.tools = std::move(*tools);
    for (size_t i = 0; i < turns->size(); ++i) {
        std::optional<EvalTurn> turn =
            readTurn((*turns)[i], conversation.tools, "/turns/" + std::to_string(i), errors);
        if (turn) conversation.turns.push_back(std::move(*turn));
    }
    if (!errors.empty()) return std::nullopt;
    return conversation;
}

// "line 3, column 14: invalid JSON: ..." from parseJsonDocument's "invalid JSON at line 1,
// column 14: ..." over one line.
std::string syntaxErrorText(int lineNumber, const SchemaIssue& issue) {
    const size_t detail = issue.message.find(": ");
    return "line " + std::to_string(lineNumber) + ", column " + std::to_string(issue.column) +
           ": invalid JSON" +
           (detail == std::string::npos ? std::string() : issue.message.substr(detail));
}

bool isBlank(std::string_view line) {
    return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

double secondsPerToken(const ToolResponse& response) {
    return response.decodeTokensPerSecond > 0 ? 1.0 / response.decodeTokensPerSecond : 0.0;
}

// Time and tokens of one respond() call, from the rates it reports.
void addCosts(TurnOutcome& outcome, const ToolResponse& response, size_t promptTokens) {
    outcome.generatedTokens += static_cast<int>(response.tokens.size());
    outcome.decodeSeconds +=
        static_cast<double>(response.tokens.size()) * secondsPerToken(response);
    outcome.prefillTokens += static_cast<int>(promptTokens);
    if (response.prefillTokensPerSecond > 0)
        outcome.prefillSeconds +=
            static_cast<double>(promptTokens) / response.prefillTokensPerSecond;
}

bool namesMatch(std::span<const FunctionCall> expected, std::span<const FunctionCall> actual) {
    return std::ranges::equal(expected, actual, {}, &FunctionCall::name, &FunctionCall::name);
}

// The last turn added to the chat's conversation that has `role`.
size_t lastTurnTokens(const ToolChat& chat, TurnRole role) {
    const std::vector<Turn>& turns = chat.conversation().turns();
    const auto turn = std::ranges::find(turns.rbegin(), turns.rend(), role, &Turn::role);
    return turn == turns.rend() ? 0 : turn->tokens.size();
}

TurnOutcome runTurn(ToolChat& chat, const EvalTurn& turn, int index,
                    const RespondOptions& respond) {
    TurnOutcome outcome;
    outcome.turn = index;
    outcome.expectsCall = !turn.answers.empty();
    const int64_t start = chat.session().position();
    const ToolResponse answer = chat.ask(turn.query, respond);
    const size_t userTokens = lastTurnTokens(chat, TurnRole::User);
    outcome.position = start + static_cast<int64_t>(userTokens);
    outcome.called = answer.type == ResponseType::Call;
    outcome.exact = outcome.expectsCall
                        ? answer.error.empty() && sameCalls(turn.answers, answer.functionCalls)
                        : !outcome.called;
    outcome.namesRight = outcome.expectsCall && namesMatch(turn.answers, answer.functionCalls);
    outcome.calls = answer.functionCalls;
    outcome.callText = answer.callText;
    outcome.error = answer.error;
    addCosts(outcome, answer, userTokens);
    if (outcome.called) {
        const ToolResponse reply = chat.sendToolResult(turn.result, respond);
        addCosts(outcome, reply, lastTurnTokens(chat, TurnRole::ToolResult));
    }
    return outcome;
}

// Tool-block positions [0, blockTokens) still held by the cache.
int residentBlockTokens(const Session& session, int blockTokens) {
    const std::vector<SlotInfo>& slots = session.cache().slotInfos();
    return static_cast<int>(std::ranges::count_if(slots, [&](const SlotInfo& slot) {
        return slot.kind != SlotKind::Empty && slot.position >= 0 && slot.position < blockTokens;
    }));
}

std::optional<double> rate(int hits, int total) {
    if (total == 0) return std::nullopt;
    return static_cast<double>(hits) / total;
}

} // namespace

bool sameJson(const Json& a, const Json& b) {
    if (a.is_number() && b.is_number()) return sameNumber(a, b);
    if (a.type() != b.type()) return false;
    if (a.is_object()) return sameObject(a, b);
    if (a.is_array()) return sameArray(a, b);
    return a == b;
}

bool sameCalls(std::span<const FunctionCall> expected, std::span<const FunctionCall> actual) {
    return std::ranges::equal(expected, actual, [](const FunctionCall& e, const FunctionCall& a) {
        return e.name == a.name && sameJson(e.arguments, a.arguments);
    });
}

EvalSuite parseEvalSuite(std::string_view text) {
    EvalSuite suite;
    int lineNumber = 0;
    size_t begin = 0;
    while (begin < text.size()) {
        const size_t end = std::min(text.find('\n', begin), text.size());
        const std::string_view line = text.substr(begin, end - begin);
        begin = end + 1;
        ++lineNumber;
        if (isBlank(line)) continue;
        const JsonDocument document = parseJsonDocument(line);
        if (document.syntaxError) {
            suite.errors.push_back(syntaxErrorText(lineNumber, *document.syntaxError));
            continue;
        }
        LineErrors errors;
        std::optional<EvalConversation> conversation =
            readConversation(document.value, line, errors);
        for (const std::string& error : errors.list())
            suite.errors.push_back("line " + std::to_string(lineNumber) + ": " + error);
        if (!conversation) continue;
        conversation->line = lineNumber;
        suite.conversations.push_back(std::move(*conversation));
    }
    if (suite.conversations.empty() && suite.errors.empty())
        suite.errors.push_back("the suite has no conversations");
    return suite;
}

ConversationOutcome runEvalConversation(const Model& model, const SessionOptions& options,
                                        const EvalConversation& conversation,
                                        const RespondOptions& respond) {
    ToolChat chat(model, options, conversation.tools, conversation.facts);
    ConversationOutcome outcome;
    for (size_t i = 0; i < conversation.turns.size(); ++i)
        outcome.turns.push_back(runTurn(chat, conversation.turns[i], static_cast<int>(i), respond));
    const Session& session = chat.session();
    outcome.sinkSlots = session.cache().shape().sinkSlots;
    outcome.toolBlockTokens = static_cast<int>(chat.toolBlock().tokens.size());
    outcome.toolBlockResidentTokens = residentBlockTokens(session, outcome.toolBlockTokens);
    outcome.evictions = session.cache().evictions();
    outcome.effectiveWindow = session.effectiveWindow();
    return outcome;
}

void EvalTally::add(const ConversationOutcome& conversation) {
    m_turns.insert(m_turns.end(), conversation.turns.begin(), conversation.turns.end());
    ++m_conversations;
    m_maxSinkSlots = std::max(m_maxSinkSlots, conversation.sinkSlots);
    m_evictions += conversation.evictions;
    m_effectiveWindow = conversation.effectiveWindow;
    if (conversation.toolBlockTokens > 0)
        m_residentShares += static_cast<double>(conversation.toolBlockResidentTokens) /
                            conversation.toolBlockTokens;
}

EvalSummary EvalTally::summary() const {
    EvalSummary s;
    s.conversations = m_conversations;
    s.turns = static_cast<int>(m_turns.size());
    int exact = 0, firstTurns = 0, firstExact = 0, lateExact = 0, callExact = 0, namesRight = 0,
        noCallRight = 0;
    double latePositions = 0;
    for (const TurnOutcome& t : m_turns) {
        exact += t.exact;
        if (t.turn == 0) {
            ++firstTurns;
            firstExact += t.exact;
        }
        if (t.turn + 1 >= kLateTurn) {
            ++s.lateTurns;
            lateExact += t.exact;
            latePositions += static_cast<double>(t.position);
        }
        if (t.expectsCall) {
            ++s.callTurns;
            callExact += t.exact;
            namesRight += t.namesRight;
        } else {
            ++s.noCallTurns;
            noCallRight += t.exact;
        }
        s.generatedTokens += t.generatedTokens;
        s.decodeSeconds += t.decodeSeconds;
        s.prefillTokens += t.prefillTokens;
        s.prefillSeconds += t.prefillSeconds;
    }
    s.exactMatch = rate(exact, s.turns);
    s.exactMatchFirst = rate(firstExact, firstTurns);
    s.exactMatchLate = rate(lateExact, s.lateTurns);
    if (s.lateTurns > 0) s.lateMeanPosition = latePositions / s.lateTurns;
    s.callExactMatch = rate(callExact, s.callTurns);
    s.callNamesMatch = rate(namesRight, s.callTurns);
    s.noCallAccuracy = rate(noCallRight, s.noCallTurns);
    s.maxSinkSlots = m_maxSinkSlots;
    s.evictions = m_evictions;
    s.effectiveWindow = m_effectiveWindow;
    if (m_conversations > 0) s.toolBlockResident = m_residentShares / m_conversations;
    return s;
}

} // namespace sinkscope
