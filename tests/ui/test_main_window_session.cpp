// Sessions in the playground window, driven with the keyboard: Ctrl+S saves the chat with its
// call and result, another window opens it with Ctrl+Shift+O and holds the same turns, tools,
// settings and KV cache as a rebuild of those turns; the chat kept at quit comes back at the next
// start unless the setting is off; a session whose model is missing or changed says so and
// opens with a model the user picks; a bad file changes nothing.
#include <QtTest>

#include "chat_panel/chat_panel.h"
#include "chat_panel/chat_view.h"
#include "chat_panel/token_text_view.h"
#include "chat_panel/tool_result_box.h"
#include "main_window_fixture.h"
#include "panels/settings_panel.h"
#include "session/session_actions.h"
#include "session/session_file.h"
#include "tool_test_support.h"
#include "views/kv_cache_model.h"
#include "views/kv_cache_view.h"
#include "views/tools_editor.h"
#include "views/tools_validation.h"
#include "worker/engine_client.h"

#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QStatusBar>
#include <QTableView>

using namespace sinkscope;
using namespace sinkscope::ui;
using namespace sinkscope::test;

namespace {

const QString kSentiment = QStringLiteral("Review sentiment");
const QString kReview = QStringLiteral("The blender is loud but it works great");
const QString kRestored = QStringLiteral("Session restored");

SessionInfo waitForSession(QSignalSpy& sessions, const QString& reason) {
    while (true) {
        if (sessions.isEmpty() && !sessions.wait(kWaitMs)) return {};
        const auto info = sessions.takeFirst().at(0).value<SessionInfo>();
        if (info.reason == reason) return info;
    }
}

// Every file chooser answers `path` at once.
void chooseAlways(MainWindow& window, const QString& path) {
    window.sessionActions()->setFileChooser(
        [path](SessionActions::Choice, const QString&,
               const std::function<void(const QString&)>& chosen) { chosen(path); });
}

void pressShortcut(MainWindow& window, Qt::Key key, Qt::KeyboardModifiers modifiers) {
    window.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&window));
    QTest::keyClick(&window, key, modifiers);
}

// The cache as the KV view holds it: each slot's token, position, kind, kept flag and piece, and
// the table's text.
QStringList kvContents(const MainWindow& window) {
    QStringList rows;
    const QAbstractItemModel* model = window.kvCacheView()->slotTable()->model();
    const auto* kvModel = qobject_cast<const views::KvCacheModel*>(model);
    if (!kvModel) return rows;
    for (const SlotView& slot : kvModel->snapshot().cacheSlots)
        rows << QStringLiteral("%1 %2 %3 %4 %5")
                    .arg(slot.token)
                    .arg(slot.position)
                    .arg(int(slot.kind))
                    .arg(slot.kept)
                    .arg(QString::fromStdString(slot.piece));
    for (int row = 0; row < model->rowCount(); ++row) {
        QStringList cells;
        for (int column = 0; column < model->columnCount(); ++column)
            cells << model->index(row, column).data().toString();
        rows << cells.join(QLatin1Char('|'));
    }
    return rows;
}

QStringList turnsText(const QList<TurnView>& turns) {
    QStringList lines;
    for (const TurnView& turn : turns) {
        QString line = QStringLiteral("%1: %2").arg(turnRoleName(turn.role), turn.text);
        for (const ToolCallView& call : turn.calls)
            line += QStringLiteral(" [%1 %2]").arg(call.name, call.argumentsJson);
        lines << line;
    }
    return lines;
}

// The message box named `name`, once it shows; nullptr when it does not.
QMessageBox* waitForBox(MainWindow& window, const QString& name) {
    QMessageBox* box = nullptr;
    const auto shown = [&] { return (box = window.findChild<QMessageBox*>(name)) != nullptr; };
    return QTest::qWaitFor(shown, kWaitMs) ? box : nullptr;
}

} // namespace

class TestMainWindowSession : public QObject, public MainWindowFixture {
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void savedSessionOpensInAnotherWindow();
    void chatComesBackAtTheNextStart();
    void missingOrChangedModelSaysSoAndOffersAnother_data();
    void missingOrChangedModelSaysSoAndOffersAnother();
    void badFileChangesNothing_data();
    void badFileChangesNothing();

private:
    // A window that answered one message (and saved nothing yet).
    WindowPtr windowWithAChat();

    QString m_needleModel;
};

void TestMainWindowSession::initTestCase() {
    setUpFolders();
    m_needleModel = m_dir.filePath(QStringLiteral("needle.gguf"));
    std::string error;
    QVERIFY2(
        writeSyntheticModel(smallSpec(true), QFile::encodeName(m_needleModel).toStdString(), error),
        error.c_str());
}

void TestMainWindowSession::init() {
    saveSettings();
}

WindowPtr TestMainWindowSession::windowWithAChat() {
    WindowPtr window = openWindow();
    if (!window) return nullptr;
    QSignalSpy replies(window.get(), &MainWindow::replyFinished);
    typeMessage(*window, QStringLiteral("Hello there"));
    if (waitForReply(replies).reason == StopReason::Failed) return nullptr;
    return window;
}

void TestMainWindowSession::savedSessionOpensInAnotherWindow() {
    saveSettings([this](AppSettings& s) {
        s.modelPath = m_needleModel;
        s.engine.kvWindow = 24;
        s.engine.sampler.topK = 7;
        s.limits.maxNewTokens = 24;
        s.limits.ignoreEos = false;
        s.limits.calls = CallPolicy::Required;
        s.restoreLastSession = false;
    });
    const QString path = m_dir.filePath(QStringLiteral("chat.json"));
    QStringList turns;
    QStringList expectedKv;
    QString toolsJson;
    {
        WindowPtr window = openWindow();
        QVERIFY(window);
        QSignalSpy sessions(window.get(), &MainWindow::sessionRebuilt);
        QVERIFY(window->toolsEditor()->choosePreset(kSentiment));
        window->toolsEditor()->apply();
        QVERIFY(waitForSession(sessions, QStringLiteral("Tools applied")).toolSpans.size() == 1);

        // A call, its canned result, and the reply to it.
        QSignalSpy replies(window.get(), &MainWindow::replyFinished);
        typeMessage(*window, kReview);
        QCOMPARE(waitForReply(replies).reason, StopReason::ToolCall);
        ToolResultBox* box = window->chatPanel()->toolResultBox();
        QTest::mouseClick(box->cannedButton(), Qt::LeftButton);
        QTest::mouseClick(box->sendButton(), Qt::LeftButton);
        QVERIFY(waitForReply(replies).reason != StopReason::Failed);
        QTRY_VERIFY_WITH_TIMEOUT(!window->engine()->isBusy(), kWaitMs);

        chooseAlways(*window, path);
        QVERIFY(waitForModelHash(*window, kWaitMs));
        pressShortcut(*window, Qt::Key_S, Qt::ControlModifier);
        QVERIFY2(window->statusBar()->currentMessage().startsWith("Session saved to"),
                 qPrintable(window->statusBar()->currentMessage()));
        QString error;
        const std::optional<SessionFile> saved = readSessionFile(path, error);
        QVERIFY2(saved, qPrintable(error));
        QCOMPARE(saved->turns.size(), 4); // user, call, result, reply
        QCOMPARE(saved->turns[1].calls.size(), 1);
        QCOMPARE(saved->turns[2].role, TurnRole::ToolResult);
        turns = turnsText(saved->turns);
        toolsJson = views::validateTools(window->toolsEditor()->toolsText()).compactJson;
        QCOMPARE(saved->toolsJson, toolsJson);

        // The reference: the same turns rendered anew and re-prefilled, as a model switch does.
        window->openModelFile(m_needleModel);
        const SessionInfo reference = waitForSession(sessions, QStringLiteral("Model loaded"));
        QVERIFY(reference.retokenized);
        QCOMPARE(turnsText(reference.conversation), turns);
        expectedKv = kvContents(*window);
        QVERIFY(expectedKv.size() > 2 * 24);
    }

    saveSettings([](AppSettings& s) { s.restoreLastSession = false; });
    WindowPtr window = openWindow();
    QVERIFY(window);
    QCOMPARE(window->modelInfo()->path, m_modelPath);
    chooseAlways(*window, path);
    QSignalSpy sessions(window.get(), &MainWindow::sessionRebuilt);
    pressShortcut(*window, Qt::Key_O, Qt::ControlModifier | Qt::ShiftModifier);
    const SessionInfo restored = waitForSession(sessions, kRestored);
    QVERIFY(restored.restored);
    QCOMPARE(window->modelInfo()->path, m_needleModel);
    QCOMPARE(turnsText(restored.conversation), turns);
    QCOMPARE(kvContents(*window), expectedKv);
    QCOMPARE(restored.reprefilledTokens, qMin<qint64>(24, restored.transcriptTokens));

    // The chat shows the turns, token by token, with the call's card.
    TokenTextView* transcript = window->chatPanel()->transcript();
    QCOMPARE(transcript->tokenCount(), restored.transcriptTokens);
    const QString chat = transcript->toPlainText();
    QVERIFY2(chat.contains(kReview) && chat.contains(QStringLiteral("Call classify_sentiment")) &&
                 chat.contains(QStringLiteral("<tool_result>")),
             qPrintable(chat));
    // The readable chat shows the same turns, markers hidden.
    const ChatView* chatView = window->chatPanel()->chatView();
    QCOMPARE(chatView->messages().size(), restored.conversation.size());
    for (qsizetype i = 0; i < restored.conversation.size(); ++i) {
        QCOMPARE(chatView->messages()[i].role, restored.conversation[i].role);
        QCOMPARE(chatView->messages()[i].text, restored.conversation[i].text);
    }
    const QString readable = chatText(*chatView);
    QVERIFY2(readable.contains(kReview) && readable.contains(QStringLiteral("Tool result")) &&
                 readable.contains(QStringLiteral("Call classify_sentiment")) &&
                 !readable.contains(QStringLiteral("<tool_result>")) &&
                 !readable.contains(QStringLiteral("<|im_start|>")),
             qPrintable(readable));
    const QString status = window->statusBar()->currentMessage();
    QVERIFY2(status.contains(QStringLiteral("Session restored from")) &&
                 status.contains(QStringLiteral("re-prefilled")),
             qPrintable(status));

    // The settings and tools in force, shown and kept.
    const EngineSettings settings = window->settingsPanel()->engineSettings();
    QCOMPARE(settings.kvWindow, 24);
    QCOMPARE(settings.sampler.topK, 7);
    QCOMPARE(window->settingsPanel()->generationLimits().calls, CallPolicy::Required);
    QCOMPARE(window->settingsPanel()->generationLimits().maxNewTokens, 24);
    QCOMPARE(views::validateTools(window->toolsEditor()->toolsText()).compactJson, toolsJson);
    QCOMPARE(restored.toolSpans.size(), 1);
    QCOMPARE(restored.toolSpans[0].name, QStringLiteral("classify_sentiment"));
    QVERIFY(window->toolsPreviewText().isEmpty());
    QCOMPARE(AppSettings::load().engine.kvWindow, 24);

    // The chat goes on from there.
    QSignalSpy replies(window.get(), &MainWindow::replyFinished);
    typeMessage(*window, QStringLiteral("And the toaster?"));
    QVERIFY(waitForReply(replies).reason != StopReason::Failed);
    QTRY_VERIFY_WITH_TIMEOUT(!window->engine()->isBusy(), kWaitMs);
    QVERIFY(waitForModelHash(*window, kWaitMs));
    pressShortcut(*window, Qt::Key_S, Qt::ControlModifier);
    QString error;
    const std::optional<SessionFile> saved = readSessionFile(path, error);
    QVERIFY2(saved, qPrintable(error));
    QCOMPARE(saved->turns.size(), 6);
    QCOMPARE(saved->turns[4].text, QStringLiteral("And the toaster?"));
}

void TestMainWindowSession::chatComesBackAtTheNextStart() {
    {
        WindowPtr window = windowWithAChat();
        QVERIFY(window);
        QVERIFY(window->close());
        QVERIFY(QFile::exists(SessionActions::lastSessionPath()));
    }
    {
        auto window = std::make_unique<MainWindow>();
        QSignalSpy sessions(window.get(), &MainWindow::sessionRebuilt);
        window->show();
        const SessionInfo restored = waitForSession(sessions, kRestored);
        QCOMPARE(restored.conversation.size(), 2);
        QCOMPARE(restored.conversation[0].text, QStringLiteral("Hello there"));
        QVERIFY(window->chatPanel()->transcript()->toPlainText().contains("Hello there"));

        // Turned off in the File menu: the next start opens an empty chat.
        QAction* restoreAtStart = nullptr;
        for (QAction* action : window->menuBar()->actions().constFirst()->menu()->actions())
            if (action->text() == QStringLiteral("&Restore Last Session at Start"))
                restoreAtStart = action;
        QVERIFY(restoreAtStart);
        QVERIFY(restoreAtStart->isCheckable() && restoreAtStart->isChecked());
        restoreAtStart->trigger();
        QVERIFY(!AppSettings::load().restoreLastSession);
        QVERIFY(window->close());
    }
    WindowPtr window = openWindow();
    QVERIFY(window);
    QTRY_VERIFY_WITH_TIMEOUT(!window->engine()->isBusy(), kWaitMs);
    QTest::qWait(200);
    QCOMPARE(window->sessionInfo().reason, QStringLiteral("Model loaded"));
    QVERIFY(window->sessionInfo().conversation.isEmpty());
    QCOMPARE(window->chatPanel()->transcript()->tokenCount(), 0);
}

void TestMainWindowSession::missingOrChangedModelSaysSoAndOffersAnother_data() {
    QTest::addColumn<bool>("missing");
    QTest::addColumn<QString>("message");
    QTest::newRow("missing") << true << "is missing.";
    QTest::newRow("changed") << false << "is not the file the session was saved with";
}

void TestMainWindowSession::missingOrChangedModelSaysSoAndOffersAnother() {
    QFETCH(bool, missing);
    QFETCH(QString, message);
    WindowPtr window = windowWithAChat();
    QVERIFY(window);
    const QString path = m_dir.filePath(QStringLiteral("elsewhere.json"));
    chooseAlways(*window, path);
    QTRY_VERIFY_WITH_TIMEOUT(!window->engine()->isBusy(), kWaitMs);
    QVERIFY(waitForModelHash(*window, kWaitMs));
    pressShortcut(*window, Qt::Key_S, Qt::ControlModifier);
    QString error;
    std::optional<SessionFile> session = readSessionFile(path, error);
    QVERIFY2(session, qPrintable(error));
    if (missing)
        session->modelPath = m_dir.filePath(QStringLiteral("gone.gguf"));
    else
        session->modelSha256 = QString(64, QLatin1Char('0'));
    QVERIFY(writeSessionFile(path, *session, error));

    // A chat that differs from the file's: the message comes, and it stays.
    QSignalSpy replies(window.get(), &MainWindow::replyFinished);
    typeMessage(*window, QStringLiteral("Second line"));
    QVERIFY(waitForReply(replies).reason != StopReason::Failed);
    QTRY_VERIFY_WITH_TIMEOUT(!window->engine()->isBusy(), kWaitMs);
    const QString chat = window->chatPanel()->transcript()->toPlainText();
    const QStringList turns = turnsText(window->sessionInfo().conversation);
    QSignalSpy sessions(window.get(), &MainWindow::sessionRebuilt);
    pressShortcut(*window, Qt::Key_O, Qt::ControlModifier | Qt::ShiftModifier);
    QMessageBox* box = waitForBox(*window, QStringLiteral("sessionModelProblem"));
    QVERIFY(box);
    QVERIFY2(box->text().contains(message) && box->text().contains("Nothing was changed"),
             qPrintable(box->text()));
    QVERIFY(sessions.isEmpty());
    QCOMPARE(window->chatPanel()->transcript()->toPlainText(), chat);
    QCOMPARE(turnsText(window->sessionInfo().conversation), turns);
    QCOMPARE(window->modelInfo()->path, m_modelPath);

    // "Choose Model…": the session opens on the file picked.
    chooseAlways(*window, m_modelPath);
    QPushButton* choose = nullptr;
    for (QAbstractButton* button : box->buttons())
        if (button->text() == QStringLiteral("Choose Model…"))
            choose = qobject_cast<QPushButton*>(button);
    QVERIFY(choose);
    QTest::mouseClick(choose, Qt::LeftButton);
    const SessionInfo restored = waitForSession(sessions, kRestored);
    QCOMPARE(restored.conversation.size(), 2);
    QCOMPARE(restored.conversation[0].text, QStringLiteral("Hello there"));
    QVERIFY(!window->chatPanel()->transcript()->toPlainText().contains("Second line"));
}

void TestMainWindowSession::badFileChangesNothing_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("message");
    const QByteArray valid = R"({"format": "sinkscope-session", "version": 1, "model": )";
    QTest::newRow("not JSON") << QByteArray("hello") << "it is not valid JSON";
    QTest::newRow("truncated") << valid << "it is not valid JSON";
    QTest::newRow("newer version") << QByteArray(R"({"format": "sinkscope-session", "version": 7})")
                                   << "version: 7 is newer than this Sinkscope reads (1)";
    QTest::newRow("wrong type")
        << QByteArray(R"({"format": "sinkscope-session", "version": 1, "model": []})")
        << "model: not an object";
    QTest::newRow("huge string")
        << QByteArray("[\"").append(QByteArray(kMaxSessionStringBytes + 1, 'x')).append("\"]")
        << "it holds a string longer than 8 MiB";
    QTest::newRow("deep nesting") << QByteArray(10000, '[') << "it is nested deeper than 64";
    QByteArray turns = R"({"format": "sinkscope-session", "version": 1, "turns": [)";
    for (int i = 0; i < 1000000; ++i)
        turns += "{},";
    QTest::newRow("too many turns") << turns.append("{}]}") << "it holds more than 1000000 values";
}

void TestMainWindowSession::badFileChangesNothing() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, message);
    WindowPtr window = windowWithAChat();
    QVERIFY(window);
    QTRY_VERIFY_WITH_TIMEOUT(!window->engine()->isBusy(), kWaitMs);
    const QString path = m_dir.filePath(QStringLiteral("bad.json"));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
    file.write(bytes);
    file.close();
    const QString chat = window->chatPanel()->transcript()->toPlainText();
    const QString tools = window->toolsEditor()->toolsText();
    const int kvWindow = window->settingsPanel()->engineSettings().kvWindow;
    const QStringList kv = kvContents(*window);

    chooseAlways(*window, path);
    pressShortcut(*window, Qt::Key_O, Qt::ControlModifier | Qt::ShiftModifier);
    QMessageBox* box = window->findChild<QMessageBox*>(QStringLiteral("sessionError"));
    QVERIFY(box);
    QVERIFY2(box->text().contains(QStringLiteral("Could not open the session")) &&
                 box->text().contains(message) &&
                 box->text().endsWith(QStringLiteral("Nothing was changed.")),
             qPrintable(box->text()));
    QVERIFY(!window->engine()->isBusy()); // nothing was asked of the engine
    QCOMPARE(window->chatPanel()->transcript()->toPlainText(), chat);
    QCOMPARE(window->toolsEditor()->toolsText(), tools);
    QCOMPARE(window->settingsPanel()->engineSettings().kvWindow, kvWindow);
    QCOMPARE(kvContents(*window), kv);
}

QTEST_MAIN(TestMainWindowSession)
#include "test_main_window_session.moc"
