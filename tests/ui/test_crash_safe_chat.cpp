// A chat survives a killed playground. This suite starts itself again as a child process that
// opens the playground window, chats two turns, edits its tools and reply limits between them,
// starts a third reply and is killed with SIGKILL while that reply streams. The next window then
// offers the chat back: Restore gives every completed turn, the edited tools and limits; New Chat
// sets the chat aside as a session file that File > Open Session opens, and nothing is lost. A
// window that quit offers nothing; a folder the chat cannot be written to is said in the status
// line and the window goes on.
#include <QtTest>

#include "main_window_fixture.h"
#include "panels/settings_panel.h"
#include "session/session_actions.h"
#include "session/session_file.h"
#include "views/tools_editor.h"
#include "views/tools_validation.h"
#include "worker/engine_client.h"

#include <QApplication>
#include <QDirIterator>
#include <QMessageBox>
#include <QProcess>
#include <QPushButton>
#include <QSpinBox>
#include <QStatusBar>

#include <cstdio>
#include <cstring>

using namespace sinkscope;
using namespace sinkscope::ui;
using namespace sinkscope::test;

namespace {

const char* const kChildFlag = "--chat-until-killed";
const QString kEditedTools = QStringLiteral(
    R"([{"name":"get_weather","description":"Weather in a city","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}])");
constexpr int kLongReply = 1 << 20; // the third reply's limit: it streams until the kill

// The child's report: one line per completed turn, "turn <role> <text in hex>", then "streaming"
// once the third reply has begun; its exit code says which step failed, were it to end at all.
void report(const QByteArray& line) {
    std::fputs((line + '\n').constData(), stdout);
    std::fflush(stdout);
}

bool keptChatHas(int turns, int maxNewTokens) {
    QString error;
    const std::optional<SessionFile> kept =
        readSessionFile(SessionActions::lastSessionPath(), error);
    return kept && kept->turns.size() == turns && kept->limits.maxNewTokens == maxNewTokens &&
           kept->toolsJson == views::validateTools(kEditedTools).compactJson;
}

int chatUntilKilled(const QString& folder) {
    useAppFolders(QDir(folder));
    WindowPtr window = openLoadedWindow(kWaitMs);
    if (!window || !waitForModelHash(*window, kWaitMs)) return 2;
    QSignalSpy replies(window.get(), &MainWindow::replyFinished);
    QSignalSpy sessions(window.get(), &MainWindow::sessionRebuilt);
    window->sendMessage(QStringLiteral("What time is it?"));
    if (waitForReply(replies).reason == StopReason::Failed) return 3;

    window->toolsEditor()->setToolsText(kEditedTools);
    if (!window->toolsEditor()->apply() || !sessions.wait(kWaitMs)) return 4;
    window->sendMessage(QStringLiteral("And in Paris?"));
    const GenerationReport second = waitForReply(replies);
    if (second.reason == StopReason::Failed) return 5;
    auto* maxNewTokens = window->settingsPanel()->findChild<QSpinBox*>("maxNewTokens");
    if (!maxNewTokens) return 6;
    maxNewTokens->setValue(kLongReply);
    // Kept within moments of each change; the suite checks that nothing else was needed.
    if (!QTest::qWaitFor([] { return keptChatHas(4, kLongReply); }, kWaitMs)) return 7;
    for (const TurnView& turn : second.conversation)
        report(QByteArray("turn ") + turnRoleName(turn.role) + ' ' + turn.text.toUtf8().toHex());

    QObject::connect(window->engine(), &EngineClient::batchReady, [](const EngineBatch& batch) {
        static bool said = false;
        if (!batch.pieces.isEmpty() && !std::exchange(said, true)) report("streaming");
    });
    window->sendMessage(QStringLiteral("And in Tokyo?"));
    waitForReply(replies);
    return 8; // the reply ended before the kill: the suite fails
}

struct KeptTurn {
    QString role;
    QString text;
    bool operator==(const KeptTurn&) const = default;
};

QList<KeptTurn> turnsOf(const QList<TurnView>& conversation) {
    QList<KeptTurn> turns;
    for (const TurnView& turn : conversation)
        turns.append({QString::fromLatin1(turnRoleName(turn.role)), turn.text});
    return turns;
}

// The session restored, once the window has rebuilt it; an empty one when none comes.
SessionInfo waitForRestored(QSignalSpy& sessions) {
    SessionInfo restored;
    (void)QTest::qWaitFor(
        [&] {
            while (!sessions.isEmpty()) {
                const auto info = sessions.takeFirst().at(0).value<SessionInfo>();
                if (info.restored) restored = info;
            }
            return restored.restored;
        },
        kWaitMs);
    return restored;
}

// The message box of `name` the window shows, once it shows it.
QMessageBox* waitForBox(const QString& name) {
    QMessageBox* found = nullptr;
    (void)QTest::qWaitFor(
        [&] {
            for (QWidget* widget : QApplication::topLevelWidgets())
                if (auto* box = widget->findChild<QMessageBox*>(name); box && box->isVisible())
                    found = box;
            return found != nullptr;
        },
        kWaitMs);
    return found;
}

QPushButton* buttonNamed(QMessageBox* box, const QString& text) {
    for (QAbstractButton* button : box->buttons())
        if (button->text() == text) return qobject_cast<QPushButton*>(button);
    return nullptr;
}

} // namespace

class TestCrashSafeChat : public QObject, MainWindowFixture {
    Q_OBJECT

    QList<KeptTurn> m_childTurns; // the completed turns as the killed child had them

    // Runs the child until it streams its third reply, then kills it.
    void killChildMidReply() {
        QProcess child;
        child.setProgram(QCoreApplication::applicationFilePath());
        child.setArguments({QString::fromLatin1(kChildFlag), m_dir.path()});
        child.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        child.start();
        QVERIFY(child.waitForStarted());
        m_childTurns.clear();
        bool streaming = false;
        while (!streaming && child.state() == QProcess::Running) {
            if (!child.canReadLine() && !child.waitForReadyRead(kWaitMs)) break;
            while (child.canReadLine()) {
                const QList<QByteArray> words = child.readLine().trimmed().split(' ');
                if (words.value(0) == "streaming") streaming = true;
                if (words.value(0) == "turn")
                    m_childTurns.append({QString::fromUtf8(words.value(1)),
                                         QString::fromUtf8(QByteArray::fromHex(words.value(2)))});
            }
        }
        QVERIFY2(streaming,
                 child.state() == QProcess::Running
                     ? "the child's third reply did not begin in time"
                     : qPrintable(QStringLiteral("the child ended with %1 (a failed step)")
                                      .arg(child.exitCode())));
        child.kill(); // SIGKILL: no quit, no destructor, no lock released
        QVERIFY(child.waitForFinished(kWaitMs));
        QCOMPARE(child.exitStatus(), QProcess::CrashExit);
        QCOMPARE(m_childTurns.size(), 4);
    }

private slots:
    void initTestCase() { setUpFolders(); }
    void init() { saveSettings(); }

    void restoreGivesBackEveryCompletedTurnAndTheEditedTools() {
        killChildMidReply();
        if (QTest::currentTestFailed()) return;
        auto window = std::make_unique<MainWindow>();
        QSignalSpy sessions(window.get(), &MainWindow::sessionRebuilt);
        window->show();
        QMessageBox* offer = waitForBox(QStringLiteral("restoreEndedRun"));
        QVERIFY(offer);
        QVERIFY2(offer->text().contains(QStringLiteral("did not quit")), qPrintable(offer->text()));
        QVERIFY2(offer->text().contains(QStringLiteral("4 turn")), qPrintable(offer->text()));
        QPushButton* restore = buttonNamed(offer, QStringLiteral("Restore"));
        QVERIFY(restore);
        QTest::mouseClick(restore, Qt::LeftButton);

        const SessionInfo restored = waitForRestored(sessions);
        QVERIFY(restored.restored);
        QCOMPARE(turnsOf(restored.conversation), m_childTurns);
        QCOMPARE(views::validateTools(window->toolsEditor()->toolsText()).compactJson,
                 views::validateTools(kEditedTools).compactJson);
        auto* maxNewTokens = window->settingsPanel()->findChild<QSpinBox*>("maxNewTokens");
        QVERIFY(maxNewTokens);
        QCOMPARE(maxNewTokens->value(), kLongReply);
        QVERIFY(chatText(*window->chatPanel()->chatView()).contains(m_childTurns[2].text));
        QVERIFY(window->close());
    }

    void newChatSetsTheChatAsideAsASessionFile() {
        killChildMidReply();
        if (QTest::currentTestFailed()) return;
        const QString kept = SessionActions::lastSessionPath();
        QString error;
        const std::optional<SessionFile> before = readSessionFile(kept, error);
        QVERIFY2(before, qPrintable(error));
        auto window = std::make_unique<MainWindow>();
        window->show();
        QMessageBox* offer = waitForBox(QStringLiteral("restoreEndedRun"));
        QVERIFY(offer);
        QPushButton* newChat = buttonNamed(offer, QStringLiteral("New Chat"));
        QVERIFY(newChat);
        QTest::mouseClick(newChat, Qt::LeftButton);

        QVERIFY(!QFile::exists(kept));
        const QString message = window->statusBar()->currentMessage();
        const qsizetype at = message.indexOf(QStringLiteral("kept in "));
        QVERIFY2(at >= 0, qPrintable(message));
        const QString aside = message.mid(at + 8).section(QStringLiteral(";"), 0, 0);
        const std::optional<SessionFile> setAside = readSessionFile(aside, error);
        QVERIFY2(setAside, qPrintable(error));
        QCOMPARE(sessionFileBytes(*setAside), sessionFileBytes(*before));
        QTRY_VERIFY_WITH_TIMEOUT(!window->engine()->isBusy(), kWaitMs);
        QVERIFY(window->sessionInfo().conversation.isEmpty());
        QVERIFY(window->close());
        QFile::remove(aside);
    }

    void aWindowThatQuitOffersNothing() {
        {
            WindowPtr window = openWindow();
            QVERIFY(window);
            QSignalSpy replies(window.get(), &MainWindow::replyFinished);
            window->sendMessage(QStringLiteral("Hello there"));
            QVERIFY(waitForReply(replies).reason != StopReason::Failed);
            QVERIFY(window->close());
        }
        QVERIFY(QFile::exists(SessionActions::lastSessionPath()));
        QVERIFY(!QFile::exists(SessionActions::lockPath()));
        auto window = std::make_unique<MainWindow>(); // restores the chat, without asking
        QSignalSpy sessions(window.get(), &MainWindow::sessionRebuilt);
        window->show();
        QCOMPARE(waitForRestored(sessions).conversation.size(), 2);
        for (QWidget* widget : QApplication::topLevelWidgets())
            QVERIFY(!widget->findChild<QMessageBox*>(QStringLiteral("restoreEndedRun")));
        QVERIFY(window->close());
    }

    // A folder where the kept chat should be stands for a file that cannot be replaced (the
    // suites may run as root, whom permissions do not stop): the status line says which file and
    // why, and the chat goes on.
    void aChatThatCannotBeKeptIsSaid() {
        WindowPtr window = openWindow();
        QVERIFY(window);
        QVERIFY(waitForModelHash(*window, kWaitMs));
        const QString kept = SessionActions::lastSessionPath();
        QVERIFY(QDir().mkpath(kept));
        const auto unblock = qScopeGuard([&] { QDir().rmdir(kept); });

        QSignalSpy replies(window.get(), &MainWindow::replyFinished);
        window->sendMessage(QStringLiteral("Hello there"));
        QVERIFY(waitForReply(replies).reason != StopReason::Failed);
        const QString said = QStringLiteral("The chat could not be kept in %1: ")
                                 .arg(QDir::toNativeSeparators(kept));
        QTRY_VERIFY_WITH_TIMEOUT(window->statusBar()->currentMessage().startsWith(said), kWaitMs);
        window->sendMessage(QStringLiteral("Still there?"));
        QCOMPARE(waitForReply(replies).conversation.size(), 4);
    }
};

int main(int argc, char** argv) {
    if (argc == 3 && std::strcmp(argv[1], kChildFlag) == 0) {
        QApplication app(argc, argv);
        return chatUntilKilled(QString::fromLocal8Bit(argv[2]));
    }
    QApplication app(argc, argv);
    TestCrashSafeChat suite;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&suite, argc, argv);
}

#include "test_crash_safe_chat.moc"
