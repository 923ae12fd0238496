// The engine worker behind EngineClient: the window and eviction counts it reports, coalesced
// snapshots, Stop within one token, corrupt models that leave the previous one usable, rebuilds
// that keep the conversation, destruction in the middle of a reply, and a model file truncated,
// rewritten or deleted in the middle of one.
#include <QtTest>

#include "memory/mask.h"
#include "model/synthetic.h"
#include "test_support.h"
#include "tool_test_support.h"
#include "worker/engine_client.h"
#include "worker/engine_types.h"

#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>

#include <functional>
#include <memory>
#include <optional>
#include <set>

using namespace sinkscope;
using namespace sinkscope::ui;

namespace {

constexpr int kWaitMs = 60000;
constexpr int kEndlessReply = 1000000; // stopped by the test long before it ends
const QString kSmallTools = QStringLiteral(R"([{"name":"get_time"}])");
const QString kLargerTools =
    QStringLiteral(R"([{"name":"get_time","description":"The current time in a city"}])");

QString writeSynthetic(const QTemporaryDir& dir, const QString& name) {
    const QString path = dir.filePath(name);
    std::string error;
    if (!writeSyntheticModel(SyntheticSpec{}, QFile::encodeName(path).toStdString(), error))
        qFatal("cannot write the synthetic model: %s", error.c_str());
    return path;
}

EngineSettings settingsWith(int window, SinkMode sinks = SinkMode::ToolsAndBos) {
    EngineSettings settings;
    settings.kvWindow = window;
    settings.sinks = sinks;
    settings.firstN = 4;
    return settings;
}

// Random weights may sample EOS or a newline at any step: these limits make the length exact.
GenerationLimits exactly(int tokens) {
    GenerationLimits limits;
    limits.maxNewTokens = tokens;
    limits.stopAtNewline = false;
    limits.ignoreEos = true;
    return limits;
}

// What the client hands to the GUI, as the GUI would keep it.
struct Received {
    explicit Received(EngineClient& client) {
        QObject::connect(
            &client, &EngineClient::batchReady, &client, [this](const EngineBatch& batch) {
                ++batches;
                maxSnapshotsInBatch = std::max(maxSnapshotsInBatch, batch.snapshots.size());
                if (!batch.snapshots.isEmpty()) latest = batch.snapshots.constLast();
                pieces += batch.pieces;
            });
    }
    int batches = 0;
    qsizetype maxSnapshotsInBatch = 0;
    std::optional<StepSnapshot> latest;
    QList<StreamPiece> pieces;
};

SessionInfo waitForSession(QSignalSpy& sessions) {
    if (sessions.isEmpty() && !sessions.wait(kWaitMs)) return {};
    return sessions.takeFirst().at(0).value<SessionInfo>();
}

GenerationReport waitForReply(QSignalSpy& finished) {
    if (finished.isEmpty() && !finished.wait(kWaitMs)) return {};
    return finished.takeFirst().at(0).value<GenerationReport>();
}

// Loads `path` with the given settings and tools; returns the session it built.
SessionInfo loadModel(EngineClient& client, const QString& path, const EngineSettings& settings,
                      const QString& tools = kSmallTools) {
    QSignalSpy sessions(&client, &EngineClient::sessionReady);
    client.applySettings(settings);
    client.applyTools(tools);
    client.openModel(path);
    return waitForSession(sessions);
}

int countSlots(const StepSnapshot& snapshot, SlotKind kind) {
    return int(std::count_if(snapshot.cacheSlots.begin(), snapshot.cacheSlots.end(),
                             [kind](const SlotView& slot) { return slot.kind == kind; }));
}

} // namespace

class TestWorker : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void windowAndEvictions_data();
    void windowAndEvictions();
    void snapshotsAreCoalesced();
    void refreshesSpaceOutWhenDrawingIsSlow_data();
    void refreshesSpaceOutWhenDrawingIsSlow();
    void stopEndsWithinOneToken();
    void corruptModelKeepsThePreviousOne_data();
    void corruptModelKeepsThePreviousOne();
    void rebuildReprefillsTheConversation();
    void newChatForgetsTheConversation();
    void invalidSettingsKeepTheSession();
    void emptyMessageIsRejected();
    void toolResultContinuesAfterACall();
    void destroyingMidReplyDoesNotHang();
    void modelFileChangedMidReply_data();
    void modelFileChangedMidReply();

private:
    QTemporaryDir m_dir;
    QString m_modelPath;
};

void TestWorker::initTestCase() {
    QVERIFY(m_dir.isValid());
    m_modelPath = writeSynthetic(m_dir, QStringLiteral("synthetic.gguf"));
}

void TestWorker::windowAndEvictions_data() {
    QTest::addColumn<int>("window");
    QTest::addColumn<int>("sinkMode");
    QTest::addColumn<int>("newTokens");
    QTest::addColumn<int>("expectedSinks"); // -1: BOS + every tool token
    QTest::newRow("tools+bos, W=16") << 16 << int(SinkMode::ToolsAndBos) << 40 << -1;
    QTest::newRow("first 4, W=16") << 16 << int(SinkMode::FirstN) << 40 << 4;
    QTest::newRow("no sinks, W=16") << 16 << int(SinkMode::None) << 40 << 0;
    QTest::newRow("tools+bos, W=32") << 32 << int(SinkMode::ToolsAndBos) << 60 << -1;
}

// After the reply the ring is full, and every token that is neither a sink nor among the last W
// was evicted exactly once: evictions = tokens_seen - sinks - W.
void TestWorker::windowAndEvictions() {
    QFETCH(int, window);
    QFETCH(int, sinkMode);
    QFETCH(int, newTokens);
    QFETCH(int, expectedSinks);

    EngineClient client;
    Received received(client);
    const SessionInfo session =
        loadModel(client, m_modelPath, settingsWith(window, SinkMode(sinkMode)));
    QCOMPARE(session.reason, QStringLiteral("Model loaded"));
    QCOMPARE(session.effectiveWindow, window);
    const int sinks = expectedSinks >= 0 ? expectedSinks : int(session.layout.prefixLength);
    QCOMPARE(session.sinksUsed, sinks);

    QSignalSpy finished(&client, &EngineClient::generationFinished);
    client.send(QStringLiteral("hello there"), exactly(newTokens));
    const GenerationReport report = waitForReply(finished);
    QCOMPARE(report.reason, StopReason::MaxTokens);
    QCOMPARE(report.generatedTokens, newTokens);

    QVERIFY(received.latest);
    const StepSnapshot& last = *received.latest;
    QVERIFY(last.tokensSeen >= 40);
    QCOMPARE(last.tokensSeen, report.tokensSeen);
    QCOMPARE(last.queryPosition, last.tokensSeen - 1);
    QVERIFY(last.generated);
    QCOMPARE(last.sinksUsed, sinks);
    QCOMPARE(countSlots(last, SlotKind::Ring), window);
    QCOMPARE(countSlots(last, SlotKind::Sink), sinks);
    QCOMPARE(last.evictions, last.tokensSeen - sinks - window);
    QCOMPARE(report.evictions, last.evictions);

    // The sinks are a prefix, so the occupied slots are exactly {k : keep(q, k)}.
    std::set<int64_t> ringPositions;
    for (const SlotView& slot : last.cacheSlots) {
        QVERIFY(slot.kind != SlotKind::Empty);
        QCOMPARE(slot.kept,
                 keep(last.queryPosition, slot.position, window, slot.kind == SlotKind::Sink));
        QVERIFY(slot.kept);
        if (slot.kind == SlotKind::Ring)
            ringPositions.insert(slot.position);
        else
            QVERIFY(slot.position < sinks);
    }
    QCOMPARE(*ringPositions.begin(), last.queryPosition - window + 1);
    QCOMPARE(*ringPositions.rbegin(), last.queryPosition);

    // One piece per conversation token, numbered without gaps; the reply's pieces are generated.
    QCOMPARE(received.pieces.size(), last.tokensSeen - session.layout.prefixLength);
    int generated = 0;
    for (qsizetype i = 0; i < received.pieces.size(); ++i) {
        QCOMPARE(received.pieces[i].transcriptIndex, i);
        generated += received.pieces[i].generated ? 1 : 0;
    }
    QCOMPARE(generated, newTokens);
}

// Hundreds of tokens arrive in a few dozen batches: at most one per refresh interval (plus the
// takes that precede each report), never one per token, and never more snapshots than the cap.
void TestWorker::snapshotsAreCoalesced() {
    EngineClient client;
    Received received(client);
    const SessionInfo session = loadModel(client, m_modelPath, settingsWith(16));
    const int batchesBefore = received.batches;

    const int newTokens = 2000;
    QSignalSpy finished(&client, &EngineClient::generationFinished);
    QElapsedTimer clock;
    clock.start();
    client.send(QStringLiteral("count"), exactly(newTokens));
    QCOMPARE(waitForReply(finished).generatedTokens, newTokens);
    const qint64 elapsedMs = clock.elapsed();

    const int batches = received.batches - batchesBefore;
    const int reportTakes = 2;            // requestDone and generationFinished each take once
    const int maxRefreshesPerSecond = 33; // ~30 Hz, with room for timer jitter
    QVERIFY2(batches <= elapsedMs * maxRefreshesPerSecond / 1000 + 1 + reportTakes,
             qPrintable(QStringLiteral("%1 batches in %2 ms").arg(batches).arg(elapsedMs)));
    QVERIFY2(batches < newTokens / 4, qPrintable(QStringLiteral("%1 batches").arg(batches)));
    QVERIFY(received.maxSnapshotsInBatch <= SnapshotMailbox::kDefaultSnapshotCap);
    // The newest snapshot always arrives, and every piece does.
    QVERIFY(received.latest);
    QCOMPARE(received.latest->queryPosition, received.latest->tokensSeen - 1);
    QCOMPARE(received.pieces.size(), received.latest->tokensSeen - session.layout.prefixLength);
    QCOMPARE(received.pieces.constLast().transcriptIndex, received.pieces.size() - 1);
}

void TestWorker::refreshesSpaceOutWhenDrawingIsSlow_data() {
    QTest::addColumn<int>("drawingMs");
    QTest::addColumn<int>("expectedSlowestMs");
    QTest::newRow("light") << 0 << EngineClient::kRefreshIntervalMs;
    QTest::newRow("heavy") << 20 << EngineClient::kSlowestRefreshMs;
}

// While a reply decodes, a GUI whose handling of each batch costs 20 ms of CPU (far more than
// kDrawingShare of the refresh period) is handed batches at the slowest rate, one that costs
// nothing at the full rate; after the reply the full rate is back.
void TestWorker::refreshesSpaceOutWhenDrawingIsSlow() {
    QFETCH(int, drawingMs);
    QFETCH(int, expectedSlowestMs);
    EngineClient client;
    loadModel(client, m_modelPath, settingsWith(16));
    int slowestMs = 0;
    QObject::connect(&client, &EngineClient::batchReady, &client, [&](const EngineBatch&) {
        QElapsedTimer drawing; // busy on the CPU, as drawing is
        drawing.start();
        while (drawing.elapsed() < drawingMs) {
        }
        slowestMs = std::max(slowestMs, client.refreshIntervalMs());
    });
    QSignalSpy finished(&client, &EngineClient::generationFinished);
    const int newTokens = 20000; // several refreshes long even on a fast machine
    client.send(QStringLiteral("count"), exactly(newTokens));
    QCOMPARE(waitForReply(finished).generatedTokens, newTokens);
    QCOMPARE(slowestMs, expectedSlowestMs);
    QCOMPARE(client.refreshIntervalMs(), EngineClient::kRefreshIntervalMs);
}

void TestWorker::stopEndsWithinOneToken() {
    EngineClient client;
    loadModel(client, m_modelPath, settingsWith(16));
    QSignalSpy finished(&client, &EngineClient::generationFinished);
    QSignalSpy generating(&client, &EngineClient::generatingChanged);
    client.send(QStringLiteral("go on"), exactly(kEndlessReply));
    QTRY_VERIFY_WITH_TIMEOUT(client.generatedTokenCount() >= 5, kWaitMs);

    client.stop();
    const qint64 atStop = client.generatedTokenCount();
    const GenerationReport report = waitForReply(finished);
    QCOMPARE(report.reason, StopReason::Stopped);
    // The token being computed when the flag was set may complete; no other.
    QVERIFY2(client.generatedTokenCount() <= atStop + 1,
             qPrintable(QStringLiteral("%1 tokens after stop at %2")
                            .arg(client.generatedTokenCount())
                            .arg(atStop)));
    QVERIFY(report.generatedTokens < kEndlessReply);
    QCOMPARE(generating.size(), 2);
    QCOMPARE(generating.at(1).at(0).toBool(), false);

    // Stop does not poison later turns.
    client.send(QStringLiteral("again"), exactly(7));
    const GenerationReport next = waitForReply(finished);
    QCOMPARE(next.reason, StopReason::MaxTokens);
    QCOMPARE(next.generatedTokens, 7);
}

void TestWorker::corruptModelKeepsThePreviousOne_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<bool>("createFile");
    QFile good(m_modelPath);
    QVERIFY(good.open(QIODevice::ReadOnly));
    const QByteArray model = good.readAll();
    QByteArray wrongVersion = model;
    wrongVersion[4] = char(99); // u32 version right after the magic

    QTest::newRow("empty file") << QByteArray() << true;
    QTest::newRow("wrong magic") << QByteArray("NOTAGGUF").append(64, '\0') << true;
    QTest::newRow("unknown version") << wrongVersion << true;
    QTest::newRow("truncated") << model.left(model.size() / 2) << true;
    QTest::newRow("missing file") << QByteArray() << false;
}

void TestWorker::corruptModelKeepsThePreviousOne() {
    QFETCH(QByteArray, bytes);
    QFETCH(bool, createFile);
    const QString badPath = m_dir.filePath(
        QStringLiteral("bad-%1.gguf").arg(QTest::currentDataTag()).replace(' ', '-'));
    if (createFile) {
        QFile bad(badPath);
        QVERIFY(bad.open(QIODevice::WriteOnly | QIODevice::Truncate));
        QCOMPARE(bad.write(bytes), bytes.size());
    }

    EngineClient client;
    QSignalSpy loaded(&client, &EngineClient::modelLoaded);
    loadModel(client, m_modelPath, settingsWith(16));
    QCOMPARE(loaded.size(), 1);

    QSignalSpy failed(&client, &EngineClient::loadFailed);
    client.openModel(badPath);
    QVERIFY(failed.wait(kWaitMs));
    const QString message = failed.at(0).at(0).toString();
    QVERIFY2(message.contains(QFileInfo(badPath).fileName()), qPrintable(message));
    QVERIFY2(message.size() > QFileInfo(badPath).fileName().size() + 20, qPrintable(message));
    QCOMPARE(loaded.size(), 1);

    // The previous model and session still answer.
    QSignalSpy finished(&client, &EngineClient::generationFinished);
    client.send(QStringLiteral("still there?"), exactly(8));
    const GenerationReport report = waitForReply(finished);
    QCOMPARE(report.reason, StopReason::MaxTokens);
    QCOMPARE(report.generatedTokens, 8);
}

// New settings or tools rebuild the session and re-prefill the transcript's last W tokens; the
// conversation goes on where it was.
void TestWorker::rebuildReprefillsTheConversation() {
    EngineClient client;
    Received received(client);
    const SessionInfo first = loadModel(client, m_modelPath, settingsWith(16));
    QSignalSpy finished(&client, &EngineClient::generationFinished);
    client.send(QStringLiteral("first turn"), exactly(30));
    QCOMPARE(waitForReply(finished).generatedTokens, 30);
    const qint64 transcript = received.pieces.size();
    QCOMPARE(transcript, received.latest->tokensSeen - first.layout.prefixLength);

    QSignalSpy sessions(&client, &EngineClient::sessionReady);
    client.applySettings(settingsWith(8));
    const SessionInfo narrower = waitForSession(sessions);
    QCOMPARE(narrower.reason, QStringLiteral("Settings changed"));
    QCOMPARE(narrower.effectiveWindow, 8);
    QCOMPARE(narrower.reprefilledTokens, 8);
    QCOMPARE(narrower.layout.prefixLength, first.layout.prefixLength);
    QCOMPARE(narrower.layout.transcriptBase, transcript - 8);
    QCOMPARE(narrower.sinksUsed, first.sinksUsed);
    QCOMPARE(received.latest->tokensSeen, first.layout.prefixLength + 8);
    QCOMPARE(countSlots(*received.latest, SlotKind::Ring), 8);
    QCOMPARE(received.latest->evictions, 0);

    client.applyTools(kLargerTools);
    const SessionInfo retooled = waitForSession(sessions);
    QCOMPARE(retooled.reason, QStringLiteral("Tools applied"));
    QVERIFY(retooled.sinksUsed > first.sinksUsed);
    QCOMPARE(retooled.sinksUsed, int(retooled.layout.prefixLength));
    QCOMPARE(retooled.reprefilledTokens, 8);
    QCOMPARE(retooled.prefixPieces.size(), retooled.layout.prefixLength);
    QVERIFY(retooled.prefixPieces.join(QString()).contains(QStringLiteral("current time")));

    // The next turn continues the transcript's numbering: no turn was lost.
    client.send(QStringLiteral("second turn"), exactly(5));
    QCOMPARE(waitForReply(finished).generatedTokens, 5);
    QCOMPARE(received.pieces.at(transcript).transcriptIndex, transcript);
    QCOMPARE(received.latest->tokensSeen,
             retooled.layout.prefixLength + 8 + (received.pieces.size() - transcript));
}

void TestWorker::newChatForgetsTheConversation() {
    EngineClient client;
    Received received(client);
    const SessionInfo first = loadModel(client, m_modelPath, settingsWith(16));
    QSignalSpy finished(&client, &EngineClient::generationFinished);
    client.send(QStringLiteral("remember me"), exactly(10));
    waitForReply(finished);

    QSignalSpy sessions(&client, &EngineClient::sessionReady);
    client.newChat();
    const SessionInfo fresh = waitForSession(sessions);
    QCOMPARE(fresh.reason, QStringLiteral("New chat"));
    QCOMPARE(fresh.reprefilledTokens, 0);
    QCOMPARE(fresh.chatEpoch, 1);
    QCOMPARE(fresh.layout.transcriptBase, 0);
    QCOMPARE(received.latest->tokensSeen, first.layout.prefixLength);

    received.pieces.clear();
    client.send(QStringLiteral("hello again"), exactly(3));
    waitForReply(finished);
    QVERIFY(!received.pieces.isEmpty());
    QCOMPARE(received.pieces.constFirst().transcriptIndex, 0);
    QCOMPARE(received.pieces.constFirst().chatEpoch, 1);
}

// An engine exception (an impossible kv_bits) becomes errorOccurred; the session stays.
void TestWorker::invalidSettingsKeepTheSession() {
    EngineClient client;
    Received received(client);
    loadModel(client, m_modelPath, settingsWith(16));
    QSignalSpy errors(&client, &EngineClient::errorOccurred);
    EngineSettings impossible = settingsWith(16);
    impossible.kvBits = 12;
    client.applySettings(impossible);
    QVERIFY(errors.wait(kWaitMs));
    QVERIFY2(errors.at(0).at(0).toString().contains(QStringLiteral("kvBits")),
             qPrintable(errors.at(0).at(0).toString()));

    QSignalSpy finished(&client, &EngineClient::generationFinished);
    client.send(QStringLiteral("still fine"), exactly(20));
    QCOMPARE(waitForReply(finished).generatedTokens, 20);
    QCOMPARE(received.latest->kvBits, 8);
    QCOMPARE(received.latest->effectiveWindow, 16);
}

void TestWorker::emptyMessageIsRejected() {
    EngineClient client;
    QSignalSpy errors(&client, &EngineClient::errorOccurred);
    QSignalSpy finished(&client, &EngineClient::generationFinished);
    client.send(QStringLiteral("before any model"), exactly(4));
    GenerationReport report = waitForReply(finished);
    QCOMPARE(report.reason, StopReason::Failed);
    QCOMPARE(errors.size(), 1);

    loadModel(client, m_modelPath, settingsWith(16));
    client.send(QStringLiteral("  \n "), exactly(4));
    report = waitForReply(finished);
    QCOMPARE(report.reason, StopReason::Failed);
    QCOMPARE(report.generatedTokens, 0);
    QCOMPARE(errors.size(), 2);
    QVERIFY(errors.at(1).at(0).toString().contains(QStringLiteral("empty")));
}

// Calls required: the reply is a call to a declared tool with its attribution; a result that is
// not JSON feeds nothing; a JSON result is fed after the call and the assistant answers it.
void TestWorker::toolResultContinuesAfterACall() {
    const QString needlePath = m_dir.filePath(QStringLiteral("needle.gguf"));
    std::string error;
    QVERIFY2(writeSyntheticModel(test::smallSpec(true), QFile::encodeName(needlePath).toStdString(),
                                 error),
             error.c_str());
    EngineClient client;
    Received received(client);
    const SessionInfo session = loadModel(client, needlePath, settingsWith(64), kLargerTools);
    QCOMPARE(session.chatLayout, QStringLiteral("needle"));
    QCOMPARE(session.toolSpans.size(), 1);
    QVERIFY(session.toolSpans[0].begin > 0 && session.toolSpans[0].end < session.sinksUsed);

    GenerationLimits limits;
    limits.maxNewTokens = 48;
    limits.calls = CallPolicy::Required;
    QSignalSpy finished(&client, &EngineClient::generationFinished);
    client.send(QStringLiteral("What time is it in Oslo?"), limits);
    const GenerationReport call = waitForReply(finished);
    QCOMPARE(call.reason, StopReason::ToolCall);
    QVERIFY(!call.calls.isEmpty()); // one array may hold several calls
    for (const ToolCallView& made : call.calls) {
        QCOMPARE(made.name, QStringLiteral("get_time")); // the only tool declared
        QVERIFY(made.attributed);
        QCOMPARE(made.toolShares.size(), 1);
        QVERIFY(qAbs(made.toolShares[0].second + made.otherShare - 1.0) < 1e-6);
    }
    const qint64 fedAfterCall = received.latest->tokensSeen;
    QCOMPARE(received.pieces.size(), fedAfterCall - session.layout.prefixLength);

    QSignalSpy errors(&client, &EngineClient::errorOccurred);
    client.sendToolResult(QStringLiteral("{\"time\": "), limits);
    const GenerationReport rejected = waitForReply(finished);
    QCOMPARE(rejected.reason, StopReason::Failed);
    QCOMPARE(rejected.generatedTokens, 0);
    QCOMPARE(errors.size(), 1);
    QVERIFY2(errors.at(0).at(0).toString().contains(QStringLiteral("not JSON")),
             qPrintable(errors.at(0).at(0).toString()));
    QCOMPARE(received.latest->tokensSeen, fedAfterCall);

    limits.calls = CallPolicy::None;
    client.sendToolResult(QStringLiteral("{\"time\": \"12:30\"}"), limits);
    const GenerationReport answer = waitForReply(finished);
    QVERIFY(answer.toolResultTurn);
    QVERIFY(answer.calls.isEmpty());
    QVERIFY(answer.reason == StopReason::EndOfText || answer.reason == StopReason::MaxTokens);
    QVERIFY(answer.generatedTokens > 0);
    QString fed;
    for (qsizetype i = fedAfterCall - session.layout.prefixLength; i < received.pieces.size(); ++i)
        fed += received.pieces[i].text;
    QVERIFY2(fed.contains(QStringLiteral("<tool_result>")) && fed.contains(QStringLiteral("12:30")),
             qPrintable(fed));
    QCOMPARE(received.pieces.constLast().transcriptIndex, received.pieces.size() - 1);
}

// The destructor stops the reply, quits and joins the engine thread, even with a load queued
// behind the reply.
void TestWorker::destroyingMidReplyDoesNotHang() {
    auto client = std::make_unique<EngineClient>();
    loadModel(*client, m_modelPath, settingsWith(16));
    client->send(QStringLiteral("talk forever"), exactly(kEndlessReply));
    QTRY_VERIFY_WITH_TIMEOUT(client->generatedTokenCount() >= 3, kWaitMs);
    QVERIFY(client->isGenerating());
    client->applyTools(kLargerTools);

    QElapsedTimer clock;
    clock.start();
    client.reset();
    QVERIFY2(clock.elapsed() < 5000, qPrintable(QString::number(clock.elapsed())));
}

QTEST_GUILESS_MAIN(TestWorker)
#include "test_worker.moc"

void TestWorker::modelFileChangedMidReply_data() {
    QTest::addColumn<QString>("change");
    QTest::newRow("truncated") << "truncate";
    QTest::newRow("rewritten in place") << "rewrite";
    QTest::newRow("deleted") << "delete";
}

// What `cp other.gguf model.gguf` or re-quantizing to the same path does to an open model: the
// reply goes on with the weights it started with (the model detached from its file at load), the
// same tokens as a reply on a file nobody touched.
void TestWorker::modelFileChangedMidReply() {
    QFETCH(QString, change);
    constexpr int kReply = 4000; // long enough to be under way when the file changes
    // The reply's report and generated token ids, `whileGenerating` run once it has begun.
    const auto reply = [](const QString& path, const std::function<void()>& whileGenerating,
                          GenerationReport& report, QList<qint32>& tokens) {
        EngineClient client;
        Received received(client);
        loadModel(client, path, settingsWith(16));
        QSignalSpy finished(&client, &EngineClient::generationFinished);
        client.send(QStringLiteral("go on"), exactly(kReply));
        if (whileGenerating) {
            QTRY_VERIFY_WITH_TIMEOUT(client.generatedTokenCount() >= 5, kWaitMs);
            QVERIFY(client.generatedTokenCount() < kReply);
            whileGenerating();
        }
        report = waitForReply(finished);
        for (const StreamPiece& piece : received.pieces)
            if (piece.generated) tokens.append(piece.tokenId);
    };
    GenerationReport expected;
    QList<qint32> expectedTokens;
    reply(m_modelPath, {}, expected, expectedTokens);
    QCOMPARE(expected.generatedTokens, kReply);

    const QString path = m_dir.filePath(QStringLiteral("changed-%1.gguf").arg(change));
    QVERIFY(QFile::copy(m_modelPath, path));
    const auto changeFile = [&] {
        if (change == "truncate") {
            QVERIFY(QFile::resize(path, 0));
        } else if (change == "rewrite") { // fopen "wb": truncated, then written, as cp does
            SyntheticSpec other;
            other.seed = 7;
            std::string error;
            QVERIFY2(writeSyntheticModel(other, QFile::encodeName(path).toStdString(), error),
                     error.c_str());
        } else {
            QVERIFY(QFile::remove(path));
        }
    };
    GenerationReport report;
    QList<qint32> tokens;
    reply(path, changeFile, report, tokens);
    QCOMPARE(report.reason, StopReason::MaxTokens);
    QCOMPARE(report.generatedTokens, kReply);
    QCOMPARE(tokens, expectedTokens);
}
