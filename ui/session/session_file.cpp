#include "session/session_file.h"

#include "tools/tool_schema.h"
#include "window/app_settings.h"

#include <QFile>
#include <QSaveFile>

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>
#include <string_view>

namespace sinkscope::ui {

namespace {

using Json = nlohmann::ordered_json;

constexpr char kFormatName[] = "sinkscope-session";
constexpr int kMaxKvWindow = 1 << 20;
constexpr int kMaxNewTokens = 1 << 20;
constexpr double kMaxTemperature = 100.0;

// A field that is missing or wrong: the reader stops at the first one.
struct FieldError : std::runtime_error {
    FieldError(const std::string& field, const std::string& what)
        : std::runtime_error(field + ": " + what) {}
};

// The raw bytes' shape, before any parser allocates for them: nesting depth, the longest string
// and how many members the arrays and objects have (commas and openings, an upper bound).
std::optional<QString> limitsProblem(std::string_view bytes) {
    int depth = 0;
    qint64 values = 1;
    bool inString = false;
    bool escaped = false;
    size_t stringStart = 0;
    const auto tooLong = [&](size_t end) {
        return qint64(end - stringStart) > kMaxSessionStringBytes;
    };
    for (size_t i = 0; i < bytes.size(); ++i) {
        const char c = bytes[i];
        if (inString) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"') {
                inString = false;
                if (tooLong(i))
                    return QStringLiteral("it holds a string longer than %1 MiB")
                        .arg(kMaxSessionStringBytes >> 20);
            }
            continue;
        }
        if (c == '"') {
            inString = true;
            stringStart = i + 1;
        } else if (c == '[' || c == '{') {
            if (++depth > kMaxSessionDepth)
                return QStringLiteral("it is nested deeper than %1 levels").arg(kMaxSessionDepth);
            ++values;
        } else if (c == ']' || c == '}') {
            --depth;
        } else if (c == ',') {
            ++values;
        }
        if (values > kMaxSessionValues)
            return QStringLiteral("it holds more than %1 values").arg(kMaxSessionValues);
    }
    if (inString && tooLong(bytes.size()))
        return QStringLiteral("it holds a string longer than %1 MiB")
            .arg(kMaxSessionStringBytes >> 20);
    return std::nullopt;
}

const Json& member(const Json& object, const std::string& path, const char* key) {
    const auto found = object.find(key);
    if (found == object.end()) throw FieldError(path + key, "missing");
    return *found;
}

const Json& objectAt(const Json& object, const std::string& path, const char* key) {
    const Json& value = member(object, path, key);
    if (!value.is_object()) throw FieldError(path + key, "not an object");
    return value;
}

std::string stringAt(const Json& object, const std::string& path, const char* key) {
    const Json& value = member(object, path, key);
    if (!value.is_string()) throw FieldError(path + key, "not a string");
    return value.get<std::string>();
}

bool boolAt(const Json& object, const std::string& path, const char* key) {
    const Json& value = member(object, path, key);
    if (!value.is_boolean()) throw FieldError(path + key, "not true or false");
    return value.get<bool>();
}

int64_t integerAt(const Json& object, const std::string& path, const char* key, int64_t low,
                  int64_t high) {
    const Json& value = member(object, path, key);
    if (!value.is_number_integer()) throw FieldError(path + key, "not an integer");
    const bool inRange =
        value.is_number_unsigned()
            ? value.get<uint64_t>() <= uint64_t(high) && value.get<int64_t>() >= low
            : value.get<int64_t>() >= low && value.get<int64_t>() <= high;
    if (!inRange)
        throw FieldError(path + key,
                         "outside " + std::to_string(low) + " to " + std::to_string(high));
    return value.get<int64_t>();
}

double numberAt(const Json& object, const std::string& path, const char* key, double low,
                double high) {
    const Json& value = member(object, path, key);
    if (!value.is_number()) throw FieldError(path + key, "not a number");
    const double number = value.get<double>();
    if (!(number >= low && number <= high))
        throw FieldError(path + key,
                         "outside " + std::to_string(low) + " to " + std::to_string(high));
    return number;
}

// One of the engine's names for an enum value.
template <typename Value>
Value namedAt(const Json& object, const std::string& path, const char* key,
              std::optional<Value> (*named)(const QString&)) {
    const std::string name = stringAt(object, path, key);
    const std::optional<Value> value = named(QString::fromStdString(name));
    if (!value) throw FieldError(path + key, "unknown value \"" + name + "\"");
    return *value;
}

std::optional<TurnRole> turnRoleNamed(const QString& name) {
    for (const TurnRole role : {TurnRole::User, TurnRole::Assistant, TurnRole::ToolResult})
        if (name == QLatin1String(turnRoleName(role))) return role;
    return std::nullopt;
}

bool isSha256(const std::string& text) {
    return text.size() == 64 && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

EngineSettings readSettings(const Json& settings) {
    const std::string at = "settings.";
    EngineSettings engine;
    engine.kvWindow = int(integerAt(settings, at, "kv_window", 0, kMaxKvWindow));
    engine.kvBits = int(integerAt(settings, at, "kv_bits", 8, 32));
    if (engine.kvBits != 8 && engine.kvBits != 16 && engine.kvBits != 32)
        throw FieldError(at + "kv_bits", "not 8, 16 or 32");
    engine.positions = namedAt(settings, at, "positions", &positionModeNamed);
    engine.sinks = namedAt(settings, at, "sinks", &sinkModeNamed);
    engine.firstN = int(integerAt(settings, at, "first_n", 0, kMaxKvWindow));
    engine.useModelHints = boolAt(settings, at, "use_model_hints");
    engine.threads = int(integerAt(settings, at, "threads", 1, kMaxThreads));
    const Json& probe = objectAt(settings, at, "probe");
    engine.probe.enabled = boolAt(probe, at + "probe.", "enabled");
    engine.probe.layer = int(integerAt(probe, at + "probe.", "layer", -1, 1 << 16));
    engine.probe.head = int(integerAt(probe, at + "probe.", "head", -1, 1 << 16));
    const Json& sampler = objectAt(settings, at, "sampler");
    const std::string samplerAt = at + "sampler.";
    engine.sampler.temperature =
        float(numberAt(sampler, samplerAt, "temperature", 0.0, kMaxTemperature));
    engine.sampler.greedy = engine.sampler.temperature == 0.0f;
    engine.sampler.topK = int(integerAt(sampler, samplerAt, "top_k", 0, 1 << 24));
    engine.sampler.topP = float(numberAt(sampler, samplerAt, "top_p", 0.0, 1.0));
    const Json& seed = member(sampler, samplerAt, "seed");
    if (!seed.is_number_unsigned()) throw FieldError(samplerAt + "seed", "not an unsigned integer");
    engine.sampler.seed = seed.get<uint64_t>();
    return engine;
}

GenerationLimits readLimits(const Json& limits) {
    const std::string at = "limits.";
    GenerationLimits read;
    read.maxNewTokens = int(integerAt(limits, at, "max_new_tokens", 1, kMaxNewTokens));
    read.stopAtNewline = boolAt(limits, at, "stop_at_newline");
    read.ignoreEos = boolAt(limits, at, "ignore_eos");
    read.calls = namedAt(limits, at, "calls", &callPolicyNamed);
    return read;
}

QString compact(const Json& value) {
    return QString::fromStdString(value.dump());
}

TurnView readTurn(const Json& turn, const std::string& at) {
    if (!turn.is_object()) throw FieldError(at.substr(0, at.size() - 1), "not an object");
    TurnView view;
    view.role = namedAt(turn, at, "role", &turnRoleNamed);
    view.text = QString::fromStdString(stringAt(turn, at, "text"));
    const auto calls = turn.find("calls");
    if (calls == turn.end()) return view;
    if (view.role != TurnRole::Assistant)
        throw FieldError(at + "calls", "only assistant turns call");
    if (!calls->is_array()) throw FieldError(at + "calls", "not an array");
    for (size_t i = 0; i < calls->size(); ++i) {
        const std::string callAt = at + "calls[" + std::to_string(i) + "].";
        const Json& call = (*calls)[i];
        if (!call.is_object())
            throw FieldError(callAt.substr(0, callAt.size() - 1), "not an object");
        ToolCallView callView;
        callView.name = QString::fromStdString(stringAt(call, callAt, "name"));
        if (callView.name.isEmpty()) throw FieldError(callAt + "name", "empty");
        callView.argumentsJson = compact(objectAt(call, callAt, "arguments"));
        view.calls.append(callView);
    }
    return view;
}

SessionFile readSession(const Json& root) {
    if (!root.is_object()) throw FieldError("the file", "not a JSON object");
    if (stringAt(root, "", "format") != kFormatName)
        throw FieldError("format", "not a Sinkscope session");
    const int64_t version = integerAt(root, "", "version", 1, INT32_MAX);
    if (version > kSessionFormatVersion)
        throw FieldError("version", std::to_string(version) +
                                        " is newer than this Sinkscope reads (" +
                                        std::to_string(kSessionFormatVersion) +
                                        "); open it with a newer Sinkscope");
    SessionFile session;
    const Json& model = objectAt(root, "", "model");
    session.modelPath = QString::fromStdString(stringAt(model, "model.", "path"));
    if (session.modelPath.isEmpty()) throw FieldError("model.path", "empty");
    const std::string sha256 = stringAt(model, "model.", "sha256");
    if (!isSha256(sha256)) throw FieldError("model.sha256", "not 64 lowercase hex digits");
    session.modelSha256 = QString::fromStdString(sha256);
    session.settings = readSettings(objectAt(root, "", "settings"));
    session.limits = readLimits(objectAt(root, "", "limits"));

    const Json& tools = objectAt(root, "", "tools");
    session.toolsInSystemTurn = boolAt(tools, "tools.", "in_system_turn");
    const Json& definitions = member(tools, "tools.", "definitions");
    if (!definitions.is_array()) throw FieldError("tools.definitions", "not an array");
    const std::string toolsJson = definitions.dump();
    if (const ToolsParseResult parsed = parseTools(toolsJson); !parsed.ok())
        throw FieldError("tools.definitions", parsed.errorSummary());
    session.toolsJson = QString::fromStdString(toolsJson);

    const Json& turns = member(root, "", "turns");
    if (!turns.is_array()) throw FieldError("turns", "not an array");
    if (turns.size() > size_t(kMaxSessionTurns))
        throw FieldError("turns", std::to_string(turns.size()) + " turns, more than " +
                                      std::to_string(kMaxSessionTurns));
    session.turns.reserve(qsizetype(turns.size()));
    for (size_t i = 0; i < turns.size(); ++i)
        session.turns.append(readTurn(turns[i], "turns[" + std::to_string(i) + "]."));
    return session;
}

Json parsedOrEmpty(const QString& json) {
    return Json::parse(json.toStdString(), nullptr, false);
}

} // namespace

QByteArray sessionFileBytes(const SessionFile& session) {
    const EngineSettings& engine = session.settings;
    Json turns = Json::array();
    for (const TurnView& turn : session.turns) {
        Json entry = {{"role", turnRoleName(turn.role)}, {"text", turn.text.toStdString()}};
        if (!turn.calls.isEmpty()) {
            Json calls = Json::array();
            for (const ToolCallView& call : turn.calls)
                calls.push_back({{"name", call.name.toStdString()},
                                 {"arguments", parsedOrEmpty(call.argumentsJson)}});
            entry["calls"] = std::move(calls);
        }
        turns.push_back(std::move(entry));
    }
    const Json root = {{"format", kFormatName},
                       {"version", kSessionFormatVersion},
                       {"model",
                        {{"path", session.modelPath.toStdString()},
                         {"sha256", session.modelSha256.toStdString()}}},
                       {"settings",
                        {{"kv_window", engine.kvWindow},
                         {"kv_bits", engine.kvBits},
                         {"positions", positionModeName(engine.positions)},
                         {"sinks", sinkModeName(engine.sinks)},
                         {"first_n", engine.firstN},
                         {"use_model_hints", engine.useModelHints},
                         {"probe",
                          {{"enabled", engine.probe.enabled},
                           {"layer", engine.probe.layer},
                           {"head", engine.probe.head}}},
                         {"threads", engine.threads},
                         {"sampler",
                          {{"temperature", engine.sampler.temperature},
                           {"top_k", engine.sampler.topK},
                           {"top_p", engine.sampler.topP},
                           {"seed", engine.sampler.seed}}}}},
                       {"limits",
                        {{"max_new_tokens", session.limits.maxNewTokens},
                         {"stop_at_newline", session.limits.stopAtNewline},
                         {"ignore_eos", session.limits.ignoreEos},
                         {"calls", callPolicyName(session.limits.calls)}}},
                       {"tools",
                        {{"definitions", parsedOrEmpty(session.toolsJson)},
                         {"in_system_turn", session.toolsInSystemTurn}}},
                       {"turns", std::move(turns)}};
    const std::string text = root.dump(2, ' ', false, Json::error_handler_t::replace);
    return QByteArray(text.data(), qsizetype(text.size()));
}

QString indentedJson(const QString& compactJson) {
    return QString::fromStdString(parsedOrEmpty(compactJson).dump(2));
}

std::optional<SessionFile> parseSessionFile(QByteArrayView bytes, QString& error) {
    if (bytes.size() > kMaxSessionFileBytes) {
        error = QStringLiteral("it is larger than %1 MiB").arg(kMaxSessionFileBytes >> 20);
        return std::nullopt;
    }
    const std::string_view text(bytes.data(), size_t(bytes.size()));
    if (const std::optional<QString> problem = limitsProblem(text)) {
        error = *problem;
        return std::nullopt;
    }
    try {
        return readSession(Json::parse(text));
    } catch (const Json::parse_error& parseError) {
        error = QStringLiteral("it is not valid JSON (%1)")
                    .arg(QString::fromUtf8(parseError.what()).section(QLatin1Char(' '), 1));
    } catch (const std::exception& fieldError) {
        error = QString::fromUtf8(fieldError.what());
    }
    return std::nullopt;
}

std::optional<SessionFile> readSessionFile(const QString& path, QString& error) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        error = file.errorString();
        return std::nullopt;
    }
    if (file.size() > kMaxSessionFileBytes) {
        error = QStringLiteral("it is larger than %1 MiB").arg(kMaxSessionFileBytes >> 20);
        return std::nullopt;
    }
    return parseSessionFile(file.readAll(), error);
}

bool writeSessionFile(const QString& path, const SessionFile& session, QString& error) {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(sessionFileBytes(session)) < 0 ||
        !file.commit()) {
        error = file.errorString();
        return false;
    }
    return true;
}

} // namespace sinkscope::ui
