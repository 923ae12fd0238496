// Loading with progress and Cancel in the playground window: a model load reports its stages in
// order (mapping, checking, building, the sinks' prefill chunk by chunk, the chat's replay); Cancel
// clicked while the sinks are prefilled keeps the model, its name in the status bar and the chat
// as they were, and the chat goes on; Cancel during an Apply's prefill keeps the old tools in
// force and the edit waiting; Cancel during a session restore keeps the chat in the window;
// closing the window mid-load keeps the old chat for the next start.
// A test hook holds the engine thread at a chosen report, so the click always lands mid-load.
#include <QtTest>

#include "chat_panel/chat_panel.h"
#include "main_window_fixture.h"
#include "model_files/load_progress.h"
#include "session/session_actions.h"
#include "session/session_file.h"
#include "views/tools_editor.h"
#include "window/tools_page.h"
#include "worker/engine_client.h"

#include <QPushButton>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QSemaphore>
#include <QStatusBar>

#include <atomic>

using namespace sinkscope;
using namespace sinkscope::ui;
using namespace sinkscope::test;

namespace {

// Several tools with descriptions: a block of a few prefill chunks (64 tokens each).
const QString kLargeTools = QStringLiteral(
    R"([{"name":"set_light","description":"Turn a light on or off, or dim it to a level","parameters":{"type":"object","properties":{"room":{"type":"string"},"level":{"type":"integer"}},"required":["room"]}},)"
    R"({"name":"set_thermostat","description":"Set the temperature of a room in degrees","parameters":{"type":"object","properties":{"room":{"type":"string"},"degrees":{"type":"number"}}}},)"
    R"({"name":"lock_door","description":"Lock or unlock a door of the house","parameters":{"type":"object","properties":{"door":{"type":"string"},"locked":{"type":"boolean"}}}}])");
const QString kOtherTools = QStringLiteral(
    R"([{"name":"play_music","description":"Play a playlist in a room of the house","parameters":{"type":"object","properties":{"playlist":{"type":"string"},"room":{"type":"string"}}}},)"
    R"({"name":"stop_music","description":"Stop the music playing in a room"}])");

// Holds the engine thread at the first report of `kind` prefilling the sinks with some tokens
// done, until release(): the GUI thread sees that report and clicks while the load waits.
class LoadHold {
public:
    explicit LoadHold(LoadKind kind) : m_kind(kind) {}
    std::function<void(const LoadProgress&)> hook() {
        return [this](const LoadProgress& progress) {
            if (progress.kind != m_kind || progress.stage != LoadStage::PrefillingSinks ||
                progress.done == 0 || m_held.exchange(true))
                return;
            m_reached.release();
            m_proceed.acquire();
        };
    }
    bool waitUntilHeld() { return m_reached.tryAcquire(1, kWaitMs); }
    void release() {
        if (!m_released.exchange(true)) m_proceed.release();
    }

private:
    LoadKind m_kind;
    std::atomic<bool> m_held{false};
    std::atomic<bool> m_released{false};
    QSemaphore m_reached;
    QSemaphore m_proceed;
};

// The reports of `spy` (EngineClient::loadProgress) until the load ends; empty on a timeout.
QList<LoadProgress> reportsUntilEnd(QSignalSpy& spy) {
    QList<LoadProgress> reports;
    for (int taken = 0;; ++taken) {
        if (spy.size() <= taken && !spy.wait(kWaitMs)) return {};
        reports << spy.at(taken).at(0).value<LoadProgress>();
        if (reports.constLast().ended()) return reports;
    }
}

QPushButton* applyButton(const views::ToolsEditor& editor) {
    for (QPushButton* button : editor.findChildren<QPushButton*>())
        if (button->text() == QLatin1String("Apply")) return button;
    return nullptr;
}

QStringList toolNames(const SessionInfo& info) {
    QStringList names;
    for (const ToolSpan& span : info.toolSpans)
        names << span.name;
    return names;
}

} // namespace

class TestMainWindowLoading : public QObject, public MainWindowFixture {
    Q_OBJECT
    QString m_otherModelPath;

    // A window with large tools, after one exchange: a chat to keep and a block to prefill.
    WindowPtr windowWithChat() {
        WindowPtr window = openWindow();
        if (!window) return nullptr;
        QSignalSpy replies(window.get(), &MainWindow::replyFinished);
        typeMessage(*window, QStringLiteral("Hello there"));
        if (waitForReply(replies).reason != StopReason::MaxTokens) return nullptr;
        return window;
    }

private slots:
    void initTestCase() {
        setUpFolders();
        SyntheticSpec other;
        other.seed = 7;
        other.name = "other synthetic";
        m_otherModelPath = m_dir.filePath(QStringLiteral("other.gguf"));
        std::string error;
        QVERIFY2(
            writeSyntheticModel(other, QFile::encodeName(m_otherModelPath).toStdString(), error),
            error.c_str());
    }
    void init() {
        saveSettings([](AppSettings& settings) { settings.toolsText = kLargeTools; });
    }

    void aLoadReportsItsStagesInOrder() {
        WindowPtr window = windowWithChat();
        QVERIFY(window);
        QSignalSpy progress(window->engine(), &EngineClient::loadProgress);
        QSignalSpy rebuilt(window.get(), &MainWindow::sessionRebuilt);
        window->openModelFile(m_otherModelPath);
        const QList<LoadProgress> reports = reportsUntilEnd(progress);
        QVERIFY(!reports.isEmpty());

        QList<LoadStage> stages;
        for (const LoadProgress& report : reports) {
            QCOMPARE(report.kind, LoadKind::Model);
            QCOMPARE(report.name, QStringLiteral("other.gguf"));
            if (stages.isEmpty() || stages.constLast() != report.stage) stages << report.stage;
        }
        const QList<LoadStage> expected = {LoadStage::Mapping,   LoadStage::Checking,
                                           LoadStage::Building,  LoadStage::PrefillingSinks,
                                           LoadStage::Replaying, LoadStage::Finished};
        QCOMPARE(stages, expected);

        QVERIFY(!rebuilt.isEmpty() || rebuilt.wait(kWaitMs));
        const SessionInfo info = rebuilt.constLast().at(0).value<SessionInfo>();
        // The prefill counts up to the block's tokens (the prefix), the replay to its tail.
        int lastDone = -1;
        for (const LoadProgress& report : reports) {
            if (report.stage != LoadStage::PrefillingSinks) continue;
            QCOMPARE(qint64(report.total), info.layout.prefixLength);
            QVERIFY(report.done > lastDone);
            lastDone = report.done;
        }
        QCOMPARE(qint64(lastDone), info.layout.prefixLength);
        QVERIFY(info.layout.prefixLength > 64); // more than one chunk
        const LoadProgress& replay = reports.at(reports.size() - 2);
        QCOMPARE(replay.stage, LoadStage::Replaying);
        QCOMPARE(replay.done, info.reprefilledTokens);
        QCOMPARE(replay.total, info.reprefilledTokens);
        QTRY_VERIFY(!window->loadProgress()->isVisible());
        QCOMPARE(window->modelInfo()->path, m_otherModelPath);
    }

    // The built-in model at the first start: installed from the executable first.
    void theBuiltInModelAtStartIsInstalledFirst() {
        saveSettings([](AppSettings& settings) { settings.modelPath.clear(); });
        QFile::remove(defaultModelPath());
        auto window = std::make_unique<MainWindow>();
        QSignalSpy progress(window->engine(), &EngineClient::loadProgress);
        window->show();
        QList<LoadProgress> reports;
        // The tools are applied first (no model yet: nothing to build), then the model opens.
        while (reports.isEmpty() || reports.constLast().kind != LoadKind::Model) {
            reports = reportsUntilEnd(progress);
            QVERIFY(!reports.isEmpty());
            progress.remove(0, reports.size());
        }
        QList<LoadStage> stages;
        for (const LoadProgress& report : reports)
            if (stages.isEmpty() || stages.constLast() != report.stage) stages << report.stage;
        const QList<LoadStage> expected = {LoadStage::Installing,      LoadStage::Mapping,
                                           LoadStage::Checking,        LoadStage::Building,
                                           LoadStage::PrefillingSinks, LoadStage::Finished};
        QCOMPARE(stages, expected);
        QCOMPARE(reports.constFirst().name, QStringLiteral("needle-nano.gguf"));
        QVERIFY(QFileInfo(defaultModelPath()).isFile());
        QTRY_VERIFY(window->hasModel());
    }

    void cancelDuringTheSinkPrefillKeepsTheModelAndChat() {
        WindowPtr window = windowWithChat();
        QVERIFY(window);
        const QString label = window->modelLabelText();
        const QString path = window->modelInfo()->path;
        const QString chat = window->chatPanel()->chatMarkdown();
        QVERIFY(chat.contains(QStringLiteral("Hello there")));

        LoadHold hold(LoadKind::Model);
        window->engine()->setLoadHook(hold.hook());
        const auto released = qScopeGuard([&] { hold.release(); });
        QSignalSpy progress(window->engine(), &EngineClient::loadProgress);
        QSignalSpy loaded(window.get(), &MainWindow::modelReady);
        window->openModelFile(m_otherModelPath);
        QVERIFY(hold.waitUntilHeld());

        LoadProgressWidget* widget = window->loadProgress();
        QTRY_VERIFY(widget->isVisible() &&
                    widget->text().contains(QStringLiteral("Prefilling the sinks")));
        QVERIFY2(widget->text().contains(QStringLiteral("Loading other.gguf")),
                 qPrintable(widget->text()));
        QVERIFY2(widget->text().contains(QRegularExpression(QStringLiteral(" \\d+ / \\d+$"))),
                 qPrintable(widget->text()));
        QTest::mouseClick(widget->cancelButton(), Qt::LeftButton);
        QVERIFY(!widget->cancelButton()->isEnabled());
        hold.release();

        const QList<LoadProgress> reports = reportsUntilEnd(progress);
        QVERIFY(!reports.isEmpty());
        QCOMPARE(reports.constLast().stage, LoadStage::Cancelled);
        QTRY_VERIFY(!widget->isVisible());
        QCOMPARE(loaded.size(), 0);
        QCOMPARE(window->modelInfo()->path, path);
        QCOMPARE(window->modelLabelText(), label);
        QCOMPARE(window->chatPanel()->chatMarkdown(), chat);
        QVERIFY2(window->statusBar()->currentMessage().contains(
                     QStringLiteral("Loading other.gguf was cancelled; still using")),
                 qPrintable(window->statusBar()->currentMessage()));

        // Nothing was lost: the chat goes on with the same model and its earlier turns.
        QSignalSpy replies(window.get(), &MainWindow::replyFinished);
        typeMessage(*window, QStringLiteral("Still there?"));
        const GenerationReport report = waitForReply(replies);
        QCOMPARE(report.reason, StopReason::MaxTokens);
        QCOMPARE(report.conversation.size(), 4); // the first exchange, then this one
        QCOMPARE(report.conversation.constFirst().text, QStringLiteral("Hello there"));
        QCOMPARE(window->modelInfo()->path, path);
    }

    void cancelDuringAnApplyKeepsTheOldTools() {
        WindowPtr window = windowWithChat();
        QVERIFY(window);
        const QStringList toolsBefore = toolNames(window->sessionInfo());
        QCOMPARE(toolsBefore, QStringList({"set_light", "set_thermostat", "lock_door"}));
        const QString statusBefore = window->toolsStatusText();

        LoadHold hold(LoadKind::Tools);
        window->engine()->setLoadHook(hold.hook());
        const auto released = qScopeGuard([&] { hold.release(); });
        QSignalSpy progress(window->engine(), &EngineClient::loadProgress);
        QSignalSpy rebuilt(window.get(), &MainWindow::sessionRebuilt);
        views::ToolsEditor* editor = window->toolsEditor();
        editor->setToolsText(kOtherTools);
        QPushButton* apply = applyButton(*editor);
        QVERIFY(apply);
        window->tabs()->setCurrentWidget(window->toolsPage());
        QTest::mouseClick(apply, Qt::LeftButton);
        QVERIFY(hold.waitUntilHeld());

        LoadProgressWidget* widget = window->loadProgress();
        QTRY_VERIFY(widget->isVisible() &&
                    widget->text().startsWith(QStringLiteral("Pinning the tools: Prefilling")));
        QTest::mouseClick(widget->cancelButton(), Qt::LeftButton);
        hold.release();
        const QList<LoadProgress> reports = reportsUntilEnd(progress);
        QVERIFY(!reports.isEmpty());
        QCOMPARE(reports.constLast().stage, LoadStage::Cancelled);
        QCOMPARE(reports.constLast().kind, LoadKind::Tools);

        QCoreApplication::processEvents();
        QCOMPARE(rebuilt.size(), 0);
        QCOMPARE(toolNames(window->sessionInfo()), toolsBefore);
        QCOMPARE(window->toolsStatusText(), statusBefore);
        QVERIFY2(window->statusBar()->currentMessage().contains(
                     QStringLiteral("Applying the tools was cancelled")),
                 qPrintable(window->statusBar()->currentMessage()));
        // The edit is kept, waiting to be applied again; the settings keep the tools in force.
        QCOMPARE(editor->toolsText(), kOtherTools);
        QTRY_VERIFY(!window->toolsPreviewText().isEmpty());
        QCOMPARE(AppSettings::load().toolsText, kLargeTools);

        // The next turn still runs under the old tools; Apply again pins the new ones.
        QSignalSpy replies(window.get(), &MainWindow::replyFinished);
        typeMessage(*window, QStringLiteral("Lights?"));
        QCOMPARE(waitForReply(replies).reason, StopReason::MaxTokens);
        QCOMPARE(toolNames(window->sessionInfo()), toolsBefore);
        QTest::mouseClick(apply, Qt::LeftButton);
        QVERIFY(rebuilt.wait(kWaitMs));
        QCOMPARE(toolNames(window->sessionInfo()), QStringList({"play_music", "stop_music"}));
    }

    // File > Open Session… of a shorter chat, cancelled while its sinks are prefilled: the
    // longer chat in the window stays, and the status bar says nothing was changed.
    void cancelDuringASessionRestoreKeepsTheChat() {
        WindowPtr window = windowWithChat();
        QVERIFY(window);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(QStringLiteral("short.json"));
        window->sessionActions()->setFileChooser(
            [path](SessionActions::Choice, const QString&,
                   const std::function<void(const QString&)>& chosen) { chosen(path); });
        QVERIFY(waitForModelHash(*window, kWaitMs));
        window->sessionActions()->saveWithDialog();
        QVERIFY(QFileInfo::exists(path));
        QSignalSpy replies(window.get(), &MainWindow::replyFinished);
        typeMessage(*window, QStringLiteral("Second message"));
        QCOMPARE(waitForReply(replies).reason, StopReason::MaxTokens);
        const QString chat = window->chatPanel()->chatMarkdown();

        LoadHold hold(LoadKind::Session);
        window->engine()->setLoadHook(hold.hook());
        const auto released = qScopeGuard([&] { hold.release(); });
        QSignalSpy progress(window->engine(), &EngineClient::loadProgress);
        QSignalSpy rebuilt(window.get(), &MainWindow::sessionRebuilt);
        window->sessionActions()->openWithDialog();
        QVERIFY(hold.waitUntilHeld());
        LoadProgressWidget* widget = window->loadProgress();
        QTRY_VERIFY(widget->isVisible() &&
                    widget->text().startsWith(QStringLiteral("Restoring the session")));
        QTest::mouseClick(widget->cancelButton(), Qt::LeftButton);
        hold.release();
        const QList<LoadProgress> reports = reportsUntilEnd(progress);
        QVERIFY(!reports.isEmpty());
        QCOMPARE(reports.constLast().stage, LoadStage::Cancelled);

        QCoreApplication::processEvents();
        QCOMPARE(rebuilt.size(), 0);
        QCOMPARE(window->chatPanel()->chatMarkdown(), chat);
        QVERIFY2(window->statusBar()->currentMessage().contains(
                     QStringLiteral("Restoring the session from %1 was cancelled; nothing was "
                                    "changed.")
                         .arg(path)),
                 qPrintable(window->statusBar()->currentMessage()));
    }

    void closingTheWindowMidLoadKeepsTheOldChat() {
        WindowPtr window = windowWithChat();
        QVERIFY(window);
        const QString path = window->modelInfo()->path;
        LoadHold hold(LoadKind::Model);
        window->engine()->setLoadHook(hold.hook());
        const auto released = qScopeGuard([&] { hold.release(); });
        window->openModelFile(m_otherModelPath);
        QVERIFY(hold.waitUntilHeld());
        window->close();
        hold.release();
        window.reset(); // stops the engine thread: the held load ends there, cancelled

        QString error;
        const std::optional<SessionFile> kept =
            readSessionFile(SessionActions::lastSessionPath(), error);
        QVERIFY2(kept, qPrintable(error));
        QCOMPARE(kept->modelPath, QFileInfo(path).absoluteFilePath());
        QCOMPARE(kept->turns.size(), 2);
        QCOMPARE(kept->turns.constFirst().text, QStringLiteral("Hello there"));
    }
};

QTEST_MAIN(TestMainWindowLoading)
#include "test_main_window_loading.moc"
