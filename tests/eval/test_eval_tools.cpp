// Tool-call evaluation: the normalised comparison of calls, the suite reader's errors, the
// sinkscope-cli eval-tools report on a synthetic model (counts, known outcomes, the sinks-off
// control), and the model's window and position mode from its metadata in budget, run and
// eval-tools.
#include "cli_run.h"
#include "eval/tool_eval.h"
#include "gguf/gguf_writer.h"
#include "session/session_defaults.h"
#include "tool_test_support.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <functional>

namespace {

using sinkscope::test::CliRun;
using sinkscope::test::runCli;

using Json = nlohmann::ordered_json;
using sinkscope::FunctionCall;

constexpr int kTurns = 32; // a suite's conversations have at least 32 turns (issue 6)

// The tools of the hand-written suites: one with an integer, one with an enum and an array.
const char* const kTools =
    R"([{"name":"set_light","description":"Set a room's light.","parameters":{"type":"object",)"
    R"("properties":{"room":{"type":"string"},"level":{"type":"integer"}},"required":["room"]}},)"
    R"({"name":"add_items","description":"Add to a list.","parameters":{"type":"object",)"
    R"("properties":{"list":{"type":"string","enum":["shopping","todo"]},"items":{"type":"array",)"
    R"("items":{"type":"string"}}},"required":["list","items"]}}])";

// Turn i of a conversation: a call, an off-topic query, or two calls, in turn.
Json suiteTurn(int i) {
    switch (i % 3) {
    case 0:
        return {{"query", "Set the hall light to " + std::to_string(i) + "."},
                {"answers", Json::array({{{"name", "set_light"},
                                          {"arguments", {{"room", "hall"}, {"level", i}}}}})}};
    case 1:
        return {{"query", "Tell me a joke."}, {"answers", Json::array()}};
    default:
        return {
            {"query", "Add milk to shopping and dim the den."},
            {"answers", Json::array({{{"name", "add_items"},
                                      {"arguments", {{"list", "shopping"}, {"items", {"milk"}}}}},
                                     {{"name", "set_light"}, {"arguments", {{"room", "den"}}}}})},
            {"result", {{"added", 1}}}};
    }
}

// `conversations` lines of `turns` turns; with noCalls, every turn expects no call.
QByteArray suiteText(int conversations, int turns, bool noCalls) {
    QByteArray text;
    for (int c = 0; c < conversations; ++c) {
        Json conversation = {{"tools", Json::parse(kTools)}, {"turns", Json::array()}};
        if (c == 1) conversation["system"] = "The hall is upstairs.";
        for (int i = 0; i < turns; ++i)
            conversation["turns"].push_back(noCalls ? suiteTurn(1) : suiteTurn(i));
        text += QByteArray::fromStdString(conversation.dump()) + '\n';
    }
    return text;
}

// The turns of suiteText that expect no call.
int noCallTurns(int conversations, int turns) {
    int count = 0;
    for (int i = 0; i < turns; ++i)
        count += i % 3 == 1;
    return conversations * count;
}

// The GGUF `source` with `extra` metadata written after its own, tensors unchanged: a model that
// carries Sinkscope's hints. Handles the value types the synthetic writer uses.
std::vector<uint8_t> withMetadata(const std::vector<uint8_t>& source,
                                  const std::function<void(sinkscope::GgufWriter&)>& extra) {
    using sinkscope::GgufValueType;
    std::string error;
    const auto file = sinkscope::GgufFile::fromBytes(source, error);
    if (!file) qFatal("synthetic model: %s", error.c_str());
    sinkscope::GgufWriter writer;
    for (const sinkscope::GgufKeyValue& kv : file->metadata()) {
        const sinkscope::GgufValue& v = kv.value;
        switch (v.type()) {
        case GgufValueType::Uint32:
            writer.setUint32(kv.key, static_cast<uint32_t>(*v.asInt()));
            break;
        case GgufValueType::Float32:
            writer.setFloat32(kv.key, static_cast<float>(*v.asFloat()));
            break;
        case GgufValueType::String:
            writer.setString(kv.key, *v.asString());
            break;
        case GgufValueType::Array:
            if (const auto* strings = v.asStringArray()) {
                writer.setStringArray(kv.key, *strings);
            } else if (const auto* floats = v.asFloatArray()) {
                writer.setFloat32Array(kv.key, {floats->begin(), floats->end()});
            } else {
                const std::vector<int64_t>& ints = *v.asIntArray();
                writer.setInt32Array(kv.key, {ints.begin(), ints.end()});
            }
            break;
        default:
            qFatal("withMetadata: unexpected type of %s", kv.key.c_str());
        }
    }
    extra(writer);
    for (const sinkscope::GgufTensorInfo& t : file->tensors())
        writer.addTensor(t.name, t.type, t.dims, {t.data, t.data + t.byteSize});
    return writer.bytes();
}

std::vector<uint8_t> hintedModelBytes(int window, const std::string& positions) {
    return withMetadata(sinkscope::syntheticModelBytes(sinkscope::test::smallSpec(true)),
                        [&](sinkscope::GgufWriter& w) {
                            w.setUint32("sinkscope.kv_window", static_cast<uint32_t>(window));
                            w.setString("sinkscope.position_mode", positions);
                        });
}

const QStringList kRateFields = {"exact_match",      "exact_match_first", "exact_match_late",
                                 "call_exact_match", "call_names_match",  "no_call_accuracy"};

} // namespace

class TestEvalTools : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_model;       // synthetic with Needle's markers, no hints
    QString m_hintedModel; // the same with sinkscope.kv_window 48 and streaming positions
    QString m_mixedSuite;  // 2 conversations of 32 turns: calls and off-topic turns
    QString m_noCallSuite; // 1 conversation of 32 turns, none expecting a call

    QString writeFile(const QString& name, const QByteArray& bytes) {
        QFile file(m_dir.filePath(name));
        if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size())
            qFatal("cannot write %s", qPrintable(name));
        return file.fileName();
    }

    QJsonObject runJson(const QStringList& args) {
        const CliRun run = runCli(args);
        if (run.exitCode != 0 || run.crashed) {
            qWarning("exit %d: %s", run.exitCode, run.err.constData());
            return {};
        }
        return QJsonDocument::fromJson(run.out).object();
    }

    // eval-tools on the synthetic model, window 32, turns capped short (random weights).
    QJsonObject evalJson(const QString& suite, const QStringList& extra) {
        return runJson(QStringList{"eval-tools", "--model", m_model, "--suite", suite,
                                   "--kv-window", "32", "--n-predict", "6", "--json"} +
                       extra);
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        m_model = m_dir.filePath("needle-markers.gguf");
        std::string error;
        QVERIFY2(sinkscope::writeSyntheticModel(sinkscope::test::smallSpec(true),
                                                m_model.toStdString(), error),
                 error.c_str());
        const std::vector<uint8_t> hinted = hintedModelBytes(48, "streaming");
        m_hintedModel =
            writeFile("hinted.gguf", QByteArray(reinterpret_cast<const char*>(hinted.data()),
                                                qsizetype(hinted.size())));
        m_mixedSuite = writeFile("mixed.jsonl", suiteText(2, kTurns, false));
        m_noCallSuite = writeFile("no-calls.jsonl", suiteText(1, kTurns, true));
    }

    void sameJsonNormalises_data() {
        QTest::addColumn<QString>("a");
        QTest::addColumn<QString>("b");
        QTest::addColumn<bool>("same");
        QTest::newRow("1 vs 1.0") << "1"
                                  << "1.0" << true;
        QTest::newRow("-3 vs -3.0") << "-3"
                                    << "-3.0" << true;
        QTest::newRow("100 vs 1e2") << "100"
                                    << "1e2" << true;
        QTest::newRow("1 vs 2") << "1"
                                << "2" << false;
        QTest::newRow("1.5 vs 1.25") << "1.5"
                                     << "1.25" << false;
        QTest::newRow("unsigned vs negative") << "18446744073709551615"
                                              << "-1" << false;
        QTest::newRow("0 vs -0.0") << "0"
                                   << "-0.0" << true;
        QTest::newRow("key order") << R"({"a":1,"b":"x"})"
                                   << R"({"b":"x","a":1})" << true;
        QTest::newRow("nested, numbers normalised")
            << R"({"a":{"x":1,"y":[1,{"z":2}]}})"
            << R"({"a":{"y":[1.0,{"z":2.0}],"x":1}})" << true;
        QTest::newRow("nested value differs") << R"({"a":{"x":1,"y":[1,2]}})"
                                              << R"({"a":{"x":1,"y":[1,3]}})" << false;
        QTest::newRow("array order") << "[1,2]"
                                     << "[2,1]" << false;
        QTest::newRow("array length") << "[1,2]"
                                      << "[1,2,2]" << false;
        QTest::newRow("string vs number") << R"("1")"
                                          << "1" << false;
        QTest::newRow("bool vs number") << "true"
                                        << "1" << false;
        QTest::newRow("null vs 0") << "null"
                                   << "0" << false;
        QTest::newRow("null vs null") << "null"
                                      << "null" << true;
        QTest::newRow("strings are exact") << R"("Hall")"
                                           << R"("hall")" << false;
        QTest::newRow("extra key") << R"({"a":1})"
                                   << R"({"a":1,"b":2})" << false;
        QTest::newRow("missing key") << R"({"a":1,"b":2})"
                                     << R"({"a":1})" << false;
        QTest::newRow("same size, other key") << R"({"a":1})"
                                              << R"({"b":1})" << false;
        QTest::newRow("empty object vs array") << "{}"
                                               << "[]" << false;
    }
    void sameJsonNormalises() {
        QFETCH(QString, a);
        QFETCH(QString, b);
        QFETCH(bool, same);
        const Json left = Json::parse(a.toStdString());
        const Json right = Json::parse(b.toStdString());
        QCOMPARE(sinkscope::sameJson(left, right), same);
        QCOMPARE(sinkscope::sameJson(right, left), same); // symmetric
    }

    void sameCallsIsOrderedByCall() {
        const FunctionCall light{"set_light", Json{{"room", "hall"}, {"level", 3}}};
        const FunctionCall lightFloat{"set_light", Json{{"level", 3.0}, {"room", "hall"}}};
        const FunctionCall items{"add_items", Json{{"list", "todo"}, {"items", {"a"}}}};
        const std::vector<FunctionCall> expected = {light, items};
        QVERIFY(sinkscope::sameCalls(expected, std::vector{lightFloat, items}));
        QVERIFY(!sinkscope::sameCalls(expected, std::vector{items, light}));
        QVERIFY(!sinkscope::sameCalls(expected, std::vector{light}));
        QVERIFY(!sinkscope::sameCalls(expected, std::vector{light, items, items}));
        QVERIFY(!sinkscope::sameCalls(std::vector{light},
                                      std::vector{FunctionCall{"set_lights", light.arguments}}));
        QVERIFY(sinkscope::sameCalls({}, {}));
        QVERIFY(!sinkscope::sameCalls({}, std::vector{light}));
    }

    void readsASuite() {
        const std::string text =
            "\n" + suiteText(2, 3, false).toStdString() + "   \n" +
            R"({"tools":[{"name":"ping"}],"turns":[{"query":"ping","answers":[{"name":"ping"}],"result":null}]})" +
            "\n";
        const sinkscope::EvalSuite suite = sinkscope::parseEvalSuite(text);
        QVERIFY2(suite.ok(), suite.errors.empty() ? "" : suite.errors.front().c_str());
        QCOMPARE(suite.conversations.size(), size_t(3));
        QCOMPARE(suite.conversations[0].line, 2); // blank lines count
        QCOMPARE(suite.conversations[2].line, 5);
        const sinkscope::EvalConversation& first = suite.conversations[0];
        QCOMPARE(first.tools.tools.size(), size_t(2));
        QVERIFY(first.facts.empty());
        QCOMPARE(suite.conversations[1].facts, std::string("The hall is upstairs."));
        QCOMPARE(first.turns.size(), size_t(3));
        QCOMPARE(first.turns[0].answers.size(), size_t(1));
        QCOMPARE(first.turns[0].answers[0].arguments.dump(),
                 std::string(R"({"room":"hall","level":0})"));
        QCOMPARE(first.turns[0].result.dump(), std::string(R"({"status":"ok"})")); // the default
        QVERIFY(first.turns[1].answers.empty());
        QCOMPARE(first.turns[2].answers.size(), size_t(2));
        QCOMPARE(first.turns[2].result.dump(), std::string(R"({"added":1})"));
        const sinkscope::EvalTurn& ping = suite.conversations[2].turns[0];
        QCOMPARE(ping.answers[0].arguments.dump(), std::string("{}"));   // arguments left out
        QCOMPARE(ping.result.dump(), std::string(R"({"status":"ok"})")); // null result
    }

    void reportsBadLines_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("error");
        const QString tools = QString("\"tools\":") + kTools;
        const auto line = [&](const QString& rest) { return "{" + tools + "," + rest + "}"; };
        QTest::newRow("not an object") << "[1]"
                                       << "line 1: expected a conversation object, got an array";
        QTest::newRow("no tools") << R"({"turns":[]})"
                                  << R"(line 1: missing "tools")";
        QTest::newRow("missing turns") << "{" + tools + "}"
                                       << R"(line 1: missing "turns")";
        QTest::newRow("no turns") << line(R"("turns":[])") << "line 1: /turns: no turns";
        QTest::newRow("system not a string")
            << line(R"("system":3,"turns":[{"query":"hi","answers":[]}])")
            << "line 1: /system: expected a string, got a number";
        QTest::newRow("query not a string")
            << line(R"("turns":[{"query":5,"answers":[]}])")
            << "line 1: /turns/0/query: expected a string, got a number";
        QTest::newRow("answers missing")
            << line(R"("turns":[{"query":"hi","answers":[]},{"query":"hi"}])")
            << R"(line 1: /turns/1: missing "answers")";
        QTest::newRow("answer not an object")
            << line(R"("turns":[{"query":"hi","answers":["set_light"]}])")
            << "line 1: /turns/0/answers/0: expected a call object, got a string";
        QTest::newRow("undeclared tool")
            << line(R"("turns":[{"query":"hi","answers":[{"name":"dim","arguments":{}}]}])")
            << R"(line 1: /turns/0/answers/0/name: "dim" is not one of the tools)";
        QTest::newRow("arguments not an object")
            << line(R"("turns":[{"query":"hi","answers":[{"name":"set_light","arguments":[]}]}])")
            << "line 1: /turns/0/answers/0/arguments: expected an object, got an array";
        QTest::newRow("bad tools")
            << R"({"tools":[{"name":"a b"}],"turns":[{"query":"hi","answers":[]}]})"
            << R"(line 1: /tools/0/name: "a b" is not an identifier (letters, digits and _, not starting with a digit))";
        QTest::newRow("blank lines count")
            << "\n\n" + line(R"("turns":[{"query":"hi","answers":[]}])") + "\n\n[]"
            << "line 5: expected a conversation object, got an array";
        QTest::newRow("empty") << "\n  \n"
                               << "the suite has no conversations";
    }
    void reportsBadLines() {
        QFETCH(QString, text);
        QFETCH(QString, error);
        const sinkscope::EvalSuite suite = sinkscope::parseEvalSuite(text.toStdString());
        QVERIFY(!suite.ok());
        QCOMPARE(QString::fromStdString(suite.errors.front()), error);
    }

    void argumentsAreValidatedAgainstTheTool() {
        const std::string text =
            std::string(R"({"tools":)") + kTools +
            R"(,"turns":[{"query":"hi","answers":[{"name":"set_light","arguments":{"room":"hall","level":"high"}}]}]})";
        const sinkscope::EvalSuite suite = sinkscope::parseEvalSuite(text);
        QVERIFY(!suite.ok());
        const QString error = QString::fromStdString(suite.errors.front());
        QVERIFY2(error.startsWith("line 1: /turns/0/answers/0/arguments/level: "),
                 qPrintable(error));
    }

    void invalidJsonNamesLineAndColumn() {
        const std::string good = suiteText(1, 2, false).toStdString();
        const sinkscope::EvalSuite suite =
            sinkscope::parseEvalSuite(good + R"({"tools": [}, "turns": [])" + "\n" + good + "{");
        QCOMPARE(suite.errors.size(), size_t(2));
        QVERIFY2(QString::fromStdString(suite.errors[0])
                     .startsWith("line 2, column 12: invalid JSON: syntax error"),
                 suite.errors[0].c_str());
        QVERIFY2(QString::fromStdString(suite.errors[1]).startsWith("line 4, column "),
                 suite.errors[1].c_str());
        QCOMPARE(suite.conversations.size(), size_t(2)); // the good lines are still read
    }

    void cliCountsAndRates() {
        const QJsonObject r = evalJson(m_mixedSuite, {});
        QVERIFY(!r.isEmpty());
        QCOMPARE(r["conversations"].toInt(), 2);
        QCOMPARE(r["turns"].toInt(), 2 * kTurns);
        QCOMPARE(r["late_turns"].toInt(), 2 * (kTurns - 29)); // turns 30, 31 and 32
        QCOMPARE(r["no_call_turns"].toInt(), noCallTurns(2, kTurns));
        QCOMPARE(r["call_turns"].toInt() + r["no_call_turns"].toInt(), r["turns"].toInt());
        for (const QString& field : kRateFields) {
            const double value = r[field].toDouble(-1);
            QVERIFY2(value >= 0 && value <= 1, qPrintable(field));
        }
        QVERIFY(r["late_mean_position"].toDouble() > 29 * 10); // every turn has 10+ tokens
        QVERIFY(r["decode_tokens_per_s"].toDouble() > 0);
        QVERIFY(r["generated_tokens"].toInt() > 0);
        QCOMPARE(r["sinks"].toString(), QString("on"));
        QCOMPARE(r["constrained"].toBool(), true);
        QCOMPARE(r["effective_window"].toInt(), 32);
        QCOMPARE(r["positions"].toString(), QString("absolute")); // no hints in this model
    }

    void cliKnownOutcomes() {
        // A model that cannot call: every no-call turn is right, every call turn wrong.
        const QJsonObject none = evalJson(m_mixedSuite, {"--call", "none"});
        QVERIFY(!none.isEmpty());
        const int turns = 2 * kTurns;
        const int noCalls = noCallTurns(2, kTurns);
        QCOMPARE(none["exact_match"].toDouble(), double(noCalls) / turns);
        QCOMPARE(none["exact_match_first"].toDouble(), 0.0);    // turn 1 expects a call
        QCOMPARE(none["exact_match_late"].toDouble(), 2.0 / 6); // turn 32 of each (index 31)
        QCOMPARE(none["call_exact_match"].toDouble(), 0.0);
        QCOMPARE(none["call_names_match"].toDouble(), 0.0);
        QCOMPARE(none["no_call_accuracy"].toDouble(), 1.0);
        // Nothing expects a call: all right without calls, all wrong when every turn calls.
        const QJsonObject silent = evalJson(m_noCallSuite, {"--call", "none"});
        for (const char* field :
             {"exact_match", "exact_match_first", "exact_match_late", "no_call_accuracy"})
            QCOMPARE(silent[field].toDouble(), 1.0);
        QVERIFY(silent["call_exact_match"].isNull()); // no turn qualifies
        QCOMPARE(silent["call_turns"].toInt(), 0);
        const QJsonObject eager = evalJson(m_noCallSuite, {"--call", "required"});
        QCOMPARE(eager["exact_match"].toDouble(), 0.0);
        QCOMPARE(eager["no_call_accuracy"].toDouble(), 0.0);
        QVERIFY(eager["generated_tokens"].toInt() > silent["generated_tokens"].toInt());
    }

    void cliSinksOffLetsTheBlockSlideOut() {
        const QJsonObject on = evalJson(m_noCallSuite, {"--call", "none"});
        const QJsonObject off = evalJson(m_noCallSuite, {"--call", "none", "--sinks", "off"});
        QVERIFY(!on.isEmpty() && !off.isEmpty());
        QCOMPARE(off["sinks"].toString(), QString("off"));
        QVERIFY(on["sink_slots"].toInt() > 100); // BOS and the two tools' schemas
        QCOMPARE(off["sink_slots"].toInt(), 0);
        QCOMPARE(on["tool_block_resident"].toDouble(), 1.0);
        QCOMPARE(off["tool_block_resident"].toDouble(), 0.0); // 32 turns >> a window of 32
        QCOMPARE(off["effective_window"].toInt(), on["effective_window"].toInt());
        QCOMPARE(off["turns"].toInt(), on["turns"].toInt());
    }

    void cliRejectsBadSuites() {
        const QString path =
            writeFile("bad.jsonl", suiteText(1, 2, false) + "\n{\"tools\": [}\n[]\n");
        const CliRun run = runCli({"eval-tools", "--model", m_model, "--suite", path, "--json"});
        QCOMPARE(run.exitCode, 3);
        QVERIFY(!run.crashed);
        QVERIFY(run.out.isEmpty());
        const QString err = QString::fromUtf8(run.err);
        QVERIFY2(err.startsWith("sinkscope-cli: error: suite '" + path +
                                "': line 3, column 12: invalid JSON"),
                 qPrintable(err));
        QVERIFY2(err.endsWith(" (and 1 more)\n"), qPrintable(err));
        const CliRun missing =
            runCli({"eval-tools", "--model", m_model, "--suite", m_dir.filePath("missing.jsonl")});
        QCOMPARE(missing.exitCode, 3);
        QVERIFY(missing.err.contains("does not exist"));
    }

    void cliUsageErrors_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("sinks value")
            << QStringList{"--sinks", "bos"} << "option '--sinks': 'bos' is not one of on, off";
        QTest::newRow("constrained value")
            << QStringList{"--constrained", "maybe"}
            << "option '--constrained': 'maybe' is not one of on, off";
        QTest::newRow("kv-bits") << QStringList{"--kv-bits", "4"}
                                 << "option '--kv-bits': 4 is not 8, 16 or 32";
        QTest::newRow("limit") << QStringList{"--limit", "-1"}
                               << "option '--limit': '-1' is out of range";
    }
    void cliUsageErrors() {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        // a missing model: usage errors come before any file is read
        const CliRun run = runCli(
            QStringList{"eval-tools", "--model", "missing.gguf", "--suite", m_mixedSuite} + args);
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.contains(message.toUtf8()), run.err.constData());
    }

    void cliLimitAndText() {
        const CliRun run =
            runCli({"eval-tools", "--model", m_model, "--suite", m_mixedSuite, "--limit", "1",
                    "--kv-window", "32", "--n-predict", "4", "--call", "none"});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        const QString out = QString::fromUtf8(run.out);
        QVERIFY2(out.startsWith("1 conversations, 32 turns, sinks on, window 32"), qPrintable(out));
        QVERIFY2(out.contains("no call right      100.0%  (11 turns)"), qPrintable(out));
    }

    void modelHintsSetTheDefaults() {
        std::string error;
        auto hinted = sinkscope::Model::fromGguf(
            sinkscope::GgufFile::fromBytes(hintedModelBytes(48, "streaming"), error), error);
        QVERIFY2(hinted, error.c_str());
        const sinkscope::SessionOptions options =
            sinkscope::defaultSessionOptions(hinted->config());
        QCOMPARE(options.kvWindow, 48);
        QCOMPARE(options.positions, sinkscope::PositionMode::Streaming);
        // without hints: SessionOptions' defaults, as stories260K has always run
        const auto plain = sinkscope::test::modelFromSpec(sinkscope::test::smallSpec(true));
        const sinkscope::SessionOptions defaults =
            sinkscope::defaultSessionOptions(plain->config());
        QCOMPARE(defaults.kvWindow, sinkscope::SessionOptions{}.kvWindow);
        QCOMPARE(defaults.positions, sinkscope::SessionOptions{}.positions);
    }

    void badHintsAreRejected_data() {
        QTest::addColumn<int>("window");
        QTest::addColumn<QString>("positions");
        QTest::addColumn<QString>("error");
        QTest::newRow("window 0") << 0 << "streaming"
                                  << "key 'sinkscope.kv_window' = 0 is out of range [1, 1048576]";
        QTest::newRow("mode sideways")
            << 64 << "sideways"
            << R"(key 'sinkscope.position_mode' must be the string "absolute" or "streaming")";
    }
    void badHintsAreRejected() {
        QFETCH(int, window);
        QFETCH(QString, positions);
        QFETCH(QString, error);
        std::string message;
        auto file = sinkscope::GgufFile::fromBytes(
            hintedModelBytes(window, positions.toStdString()), message);
        QVERIFY(file);
        QVERIFY(!sinkscope::Model::fromGguf(std::move(file), message));
        QCOMPARE(QString::fromStdString(message), "<memory>: " + error);
    }

    void budgetRunAndEvalUseTheModelsHints() {
        const QJsonObject budget = runJson({"budget", "--model", m_hintedModel});
        QCOMPARE(budget["kv_window"].toInt(), 48);
        QCOMPARE(budget["effective_window"].toInt(), 48);
        QCOMPARE(budget["positions"].toString(), QString("streaming"));
        const QJsonObject budgetOwn =
            runJson({"budget", "--model", m_hintedModel, "--kv-window", "20"});
        QCOMPARE(budgetOwn["effective_window"].toInt(), 20); // the option wins
        const QJsonObject budgetPlain = runJson({"budget", "--model", m_model});
        QCOMPARE(budgetPlain["kv_window"].toInt(), 0); // no hint: the budget window, as before
        QCOMPARE(budgetPlain["positions"].toString(), QString("absolute"));

        const QStringList run = {"run", "--model", m_hintedModel, "--prompt", "hi", "--json"};
        const QJsonObject hinted = runJson(run);
        QCOMPARE(hinted["effective_window"].toInt(), 48);
        QCOMPARE(hinted["positions"].toString(), QString("streaming"));
        const QJsonObject own =
            runJson(run + QStringList{"--kv-window", "24", "--positions", "absolute"});
        QCOMPARE(own["effective_window"].toInt(), 24);
        QCOMPARE(own["positions"].toString(), QString("absolute"));
        const QJsonObject tools = runJson({"run", "--model", m_hintedModel, "--tools",
                                           QFINDTESTDATA("../resources/presets/smart_home.json"),
                                           "--n-predict", "4", "--json"});
        QCOMPARE(tools["effective_window"].toInt(), 48);
        QCOMPARE(tools["positions"].toString(), QString("streaming"));

        const QJsonObject eval =
            runJson({"eval-tools", "--model", m_hintedModel, "--suite", m_noCallSuite,
                     "--n-predict", "4", "--call", "none", "--json"});
        QCOMPARE(eval["effective_window"].toInt(), 48);
        QCOMPARE(eval["positions"].toString(), QString("streaming"));
        const QJsonObject evalOwn =
            runJson({"eval-tools", "--model", m_hintedModel, "--suite", m_noCallSuite,
                     "--n-predict", "4", "--call", "none", "--kv-window", "40", "--json"});
        QCOMPARE(evalOwn["effective_window"].toInt(), 40);
    }
};

QTEST_GUILESS_MAIN(TestEvalTools)
#include "test_eval_tools.moc"
