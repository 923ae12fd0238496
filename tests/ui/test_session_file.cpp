// The session file's format without widgets: written then read gives the same session (keys in
// their order), and every kind of bad file is refused with a message that names the field or the
// limit, hostile ones before they are parsed.
#include <QtTest>

#include "session/session_file.h"

#include <QTemporaryDir>

#include <nlohmann/json.hpp>

#include <functional>
#include <string>

using namespace sinkscope;
using namespace sinkscope::ui;

namespace {

using Json = nlohmann::ordered_json;
using Edit = std::function<void(Json&)>;

// Keys out of alphabetical order, in the tools and in the arguments: they must stay so.
const QString kTools =
    QStringLiteral(R"([{"name":"set_light","description":"Lights","parameters":{"type":"object",)"
                   R"("properties":{"room":{"type":"string"},"brightness":{"type":"integer"}}}}])");

SessionFile sampleSession() {
    SessionFile session;
    session.modelPath = QStringLiteral("/models/needle.gguf");
    session.modelSha256 = QString(64, QLatin1Char('a'));
    session.settings.kvWindow = 48;
    session.settings.kvBits = 16;
    session.settings.positions = PositionMode::Streaming;
    session.settings.sinks = SinkMode::FirstN;
    session.settings.firstN = 7;
    session.settings.useModelHints = false;
    session.settings.probe = {false, 1, 0};
    session.settings.threads = 3;
    session.settings.sampler.temperature = 0.25f;
    session.settings.sampler.topK = 12;
    session.settings.sampler.topP = 0.5f;
    session.settings.sampler.seed = 18446744073709551615ULL;
    session.limits.maxNewTokens = 77;
    session.limits.stopAtNewline = false;
    session.limits.ignoreEos = true;
    session.limits.calls = CallPolicy::Required;
    session.toolsJson = kTools;
    session.toolsInSystemTurn = true;
    TurnView user{TurnRole::User, QStringLiteral("Lights on in the hall, «please»"), {}, 0};
    TurnView assistant{TurnRole::Assistant, QString(), {}, 0};
    assistant.calls.append({QStringLiteral("set_light"),
                            QStringLiteral(R"({"room":"hall","brightness":80})"),
                            {},
                            0,
                            false});
    TurnView result{TurnRole::ToolResult, QStringLiteral(R"({"ok":true})"), {}, 0};
    session.turns = {user, assistant, result};
    return session;
}

Json sampleJson() {
    const QByteArray bytes = sessionFileBytes(sampleSession());
    return Json::parse(bytes.toStdString());
}

QByteArray bytesOf(const Json& json) {
    return QByteArray::fromStdString(json.dump());
}

QString errorOf(QByteArrayView bytes) {
    QString error;
    if (parseSessionFile(bytes, error)) return QStringLiteral("(read without an error)");
    return error;
}

} // namespace

class TestSessionFile : public QObject {
    Q_OBJECT

private slots:
    void writeThenReadGivesTheSame();
    void fileOnDiskRoundTrips();
    void badFieldsAreNamed_data();
    void badFieldsAreNamed();
    void hostileFilesAreRefusedBeforeParsing_data();
    void hostileFilesAreRefusedBeforeParsing();
    void oversizedFileIsNotRead();
};

void TestSessionFile::writeThenReadGivesTheSame() {
    const SessionFile written = sampleSession();
    QString error;
    const std::optional<SessionFile> read = parseSessionFile(sessionFileBytes(written), error);
    QVERIFY2(read, qPrintable(error));
    QCOMPARE(read->modelPath, written.modelPath);
    QCOMPARE(read->modelSha256, written.modelSha256);
    const EngineSettings& a = read->settings;
    const EngineSettings& b = written.settings;
    QCOMPARE(a.kvWindow, b.kvWindow);
    QCOMPARE(a.kvBits, b.kvBits);
    QCOMPARE(a.positions, b.positions);
    QCOMPARE(a.sinks, b.sinks);
    QCOMPARE(a.firstN, b.firstN);
    QCOMPARE(a.useModelHints, b.useModelHints);
    QCOMPARE(a.probe.enabled, b.probe.enabled);
    QCOMPARE(a.probe.layer, b.probe.layer);
    QCOMPARE(a.probe.head, b.probe.head);
    QCOMPARE(a.threads, b.threads);
    QCOMPARE(a.sampler.temperature, b.sampler.temperature);
    QCOMPARE(a.sampler.greedy, false);
    QCOMPARE(a.sampler.topK, b.sampler.topK);
    QCOMPARE(a.sampler.topP, b.sampler.topP);
    QCOMPARE(a.sampler.seed, b.sampler.seed);
    QCOMPARE(read->limits.maxNewTokens, written.limits.maxNewTokens);
    QCOMPARE(read->limits.stopAtNewline, written.limits.stopAtNewline);
    QCOMPARE(read->limits.ignoreEos, written.limits.ignoreEos);
    QCOMPARE(read->limits.calls, written.limits.calls);
    QCOMPARE(read->toolsJson, kTools); // compact, keys as written
    QCOMPARE(read->toolsInSystemTurn, true);
    QCOMPARE(read->turns.size(), written.turns.size());
    for (qsizetype i = 0; i < written.turns.size(); ++i) {
        QCOMPARE(read->turns[i].role, written.turns[i].role);
        QCOMPARE(read->turns[i].text, written.turns[i].text);
        QCOMPARE(read->turns[i].calls.size(), written.turns[i].calls.size());
    }
    QCOMPARE(read->turns[1].calls[0].name, QStringLiteral("set_light"));
    QCOMPARE(read->turns[1].calls[0].argumentsJson,
             QStringLiteral(R"({"room":"hall","brightness":80})"));

    // Temperature 0 is greedy sampling.
    Json greedy = sampleJson();
    greedy["settings"]["sampler"]["temperature"] = 0;
    const std::optional<SessionFile> zero = parseSessionFile(bytesOf(greedy), error);
    QVERIFY2(zero, qPrintable(error));
    QVERIFY(zero->settings.sampler.greedy);
}

void TestSessionFile::fileOnDiskRoundTrips() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("chat.json"));
    QString error;
    QVERIFY2(writeSessionFile(path, sampleSession(), error), qPrintable(error));
    const std::optional<SessionFile> read = readSessionFile(path, error);
    QVERIFY2(read, qPrintable(error));
    QCOMPARE(read->turns.size(), 3);
    QVERIFY(!readSessionFile(dir.filePath(QStringLiteral("absent.json")), error));
    QVERIFY(!writeSessionFile(dir.filePath(QStringLiteral("no/such/folder/x.json")),
                              sampleSession(), error));
}

void TestSessionFile::badFieldsAreNamed_data() {
    QTest::addColumn<Edit>("edit");
    QTest::addColumn<QString>("message");
    QTest::newRow("not an object")
        << Edit([](Json& j) { j = Json::array(); }) << "the file: not a JSON object";
    QTest::newRow("other format") << Edit([](Json& j) { j["format"] = "gguf"; })
                                  << "format: not a Sinkscope session";
    QTest::newRow("newer version") << Edit([](Json& j) { j["version"] = 2; })
                                   << "version: 2 is newer than this Sinkscope reads (1)";
    QTest::newRow("version zero") << Edit([](Json& j) { j["version"] = 0; })
                                  << "version: outside 1 to";
    QTest::newRow("version as text")
        << Edit([](Json& j) { j["version"] = "1"; }) << "version: not an integer";
    QTest::newRow("missing model") << Edit([](Json& j) { j.erase("model"); }) << "model: missing";
    QTest::newRow("short hash") << Edit([](Json& j) { j["model"]["sha256"] = "abc"; })
                                << "model.sha256: not 64 lowercase hex digits";
    QTest::newRow("window as text") << Edit([](Json& j) { j["settings"]["kv_window"] = "64"; })
                                    << "settings.kv_window: not an integer";
    QTest::newRow("negative window")
        << Edit([](Json& j) { j["settings"]["kv_window"] = -1; }) << "settings.kv_window: outside";
    QTest::newRow("kv bits 12") << Edit([](Json& j) { j["settings"]["kv_bits"] = 12; })
                                << "settings.kv_bits: not 8, 16 or 32";
    QTest::newRow("unknown sinks") << Edit([](Json& j) { j["settings"]["sinks"] = "all"; })
                                   << "settings.sinks: unknown value \"all\"";
    QTest::newRow("threads 0") << Edit([](Json& j) { j["settings"]["threads"] = 0; })
                               << "settings.threads: outside 1 to";
    QTest::newRow("top_p 2") << Edit([](Json& j) { j["settings"]["sampler"]["top_p"] = 2.0; })
                             << "settings.sampler.top_p: outside";
    QTest::newRow("negative seed") << Edit([](Json& j) { j["settings"]["sampler"]["seed"] = -5; })
                                   << "settings.sampler.seed: not an unsigned integer";
    QTest::newRow("probe as bool")
        << Edit([](Json& j) { j["settings"]["probe"] = true; }) << "settings.probe: not an object";
    QTest::newRow("unknown calls") << Edit([](Json& j) { j["limits"]["calls"] = "often"; })
                                   << "limits.calls: unknown value \"often\"";
    QTest::newRow("tools not an array")
        << Edit([](Json& j) { j["tools"]["definitions"] = "set_light"; })
        << "tools.definitions: not an array";
    QTest::newRow("tool without a name")
        << Edit([](Json& j) { j["tools"]["definitions"] = Json::parse(R"([{"nam": 1}])"); })
        << "tools.definitions: ";
    QTest::newRow("turns not an array")
        << Edit([](Json& j) { j["turns"] = Json::object(); }) << "turns: not an array";
    QTest::newRow("turn as text") << Edit([](Json& j) { j["turns"][2] = "hello"; })
                                  << "turns[2]: not an object";
    QTest::newRow("unknown role") << Edit([](Json& j) { j["turns"][0]["role"] = "system"; })
                                  << "turns[0].role: unknown value \"system\"";
    QTest::newRow("text as number")
        << Edit([](Json& j) { j["turns"][0]["text"] = 3; }) << "turns[0].text: not a string";
    QTest::newRow("user calls") << Edit([](Json& j) { j["turns"][0]["calls"] = Json::array(); })
                                << "turns[0].calls: only assistant turns call";
    QTest::newRow("arguments as text")
        << Edit([](Json& j) { j["turns"][1]["calls"][0]["arguments"] = "{}"; })
        << "turns[1].calls[0].arguments: not an object";
    QTest::newRow("call without name")
        << Edit([](Json& j) { j["turns"][1]["calls"][0].erase("name"); })
        << "turns[1].calls[0].name: missing";
}

void TestSessionFile::badFieldsAreNamed() {
    QFETCH(Edit, edit);
    QFETCH(QString, message);
    Json json = sampleJson();
    edit(json);
    const QString error = errorOf(bytesOf(json));
    QVERIFY2(error.startsWith(message), qPrintable(error));
}

void TestSessionFile::hostileFilesAreRefusedBeforeParsing_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("message");
    const QByteArray valid = bytesOf(sampleJson());
    QTest::newRow("not JSON") << QByteArray("not a session") << "it is not valid JSON";
    QTest::newRow("truncated") << valid.left(valid.size() / 2) << "it is not valid JSON";
    QTest::newRow("empty") << QByteArray() << "it is not valid JSON";
    QTest::newRow("invalid UTF-8")
        << QByteArray(R"({"format": "sinkscope-session)").append('\xff').append("\"}")
        << "it is not valid JSON";

    Json hugeText = sampleJson();
    hugeText["turns"][0]["text"] = std::string(size_t(kMaxSessionStringBytes) + 1, 'x');
    QTest::newRow("huge string") << bytesOf(hugeText) << "it holds a string longer than 8 MiB";
    QTest::newRow("huge unterminated string")
        << QByteArray("[\"").append(QByteArray(kMaxSessionStringBytes + 10, 'y'))
        << "it holds a string longer than 8 MiB";
    QTest::newRow("nesting 10,000 deep")
        << QByteArray(10000, '[').append(QByteArray(10000, ']')) << "it is nested deeper than 64";

    Json manyTurns = sampleJson();
    manyTurns["turns"] = Json::array();
    for (int i = 0; i <= kMaxSessionTurns; ++i)
        manyTurns["turns"].push_back({{"role", "user"}, {"text", "a"}});
    QTest::newRow("too many turns")
        << bytesOf(manyTurns) << "turns: 100001 turns, more than 100000";
    QByteArray millionTurns = valid.left(valid.lastIndexOf("\"turns\"")) + "\"turns\": [";
    for (int i = 0; i < 1000000; ++i)
        millionTurns += "{},";
    millionTurns += "{}]}";
    QTest::newRow("a million turns") << millionTurns << "it holds more than 1000000 values";
    QTest::newRow("over 64 MiB")
        << QByteArray("[\"").append(QByteArray(kMaxSessionFileBytes, 'z')).append("\"]")
        << "it is larger than 64 MiB";
}

void TestSessionFile::hostileFilesAreRefusedBeforeParsing() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, message);
    const QString error = errorOf(bytes);
    QVERIFY2(error.startsWith(message), qPrintable(error));
}

// The size is checked on the file, before its bytes are read.
void TestSessionFile::oversizedFileIsNotRead() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("huge.json"));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    QVERIFY(file.resize(kMaxSessionFileBytes + 1)); // sparse: nothing is written
    file.close();
    QString error;
    QVERIFY(!readSessionFile(path, error));
    QCOMPARE(error, QStringLiteral("it is larger than 64 MiB"));
}

QTEST_MAIN(TestSessionFile)
#include "test_session_file.moc"
