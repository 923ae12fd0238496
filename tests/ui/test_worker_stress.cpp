// The worker under stress, through the real window: a few hundred iterations that each start a
// reply (typed, Enter), wait for its first token, then at random stop it, change a cache setting
// in the Settings tab, switch the model (two small synthetic ones, sometimes a corrupt file),
// apply another tools preset, start a New chat, close the window (and open a fresh one), or let
// the reply finish. Every iteration checks that nothing hangs (every wait is bounded and fails the
// test), that the chat still shows every message sent since the last New chat or new window, in
// order, and that the worker has answered and is idle again.
//
// The RNG's seed is printed; SINKSCOPE_STRESS_SEED=<n> replays a run.
#include <QtTest>

#include "chat_panel/chat_panel.h"
#include "chat_panel/message_input.h"
#include "chat_panel/token_text_view.h"
#include "panels/settings_panel.h"
#include "tool_test_support.h"
#include "views/tools_editor.h"
#include "window/app_settings.h"
#include "window/main_window.h"
#include "window_test_support.h"
#include "worker/engine_client.h"

#include <QComboBox>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QTemporaryDir>

#include <memory>
#include <random>

using namespace sinkscope;
using namespace sinkscope::ui;

namespace {

using test::typeMessage;
using test::useTemporaryAppFolders;

constexpr int kWaitMs = 60000; // generous: a wait that runs out is a deadlock
#ifdef SINKSCOPE_SANITIZED
constexpr int kIterations = 40; // ASan and UBSan make every step several times slower
#else
constexpr int kIterations = 300;
#endif
constexpr int kReplyTokens = 12;
constexpr std::uint64_t kDefaultSeed = 20250611;

using WindowPtr = std::unique_ptr<MainWindow>;

enum class Action { Stop, CacheSetting, SwitchModel, ApplyPreset, NewChat, CloseWindow, Finish };
constexpr int kActionCount = 7;

const char* actionName(Action action) {
    switch (action) {
    case Action::Stop:
        return "stop";
    case Action::CacheSetting:
        return "cache setting";
    case Action::SwitchModel:
        return "switch model";
    case Action::ApplyPreset:
        return "apply preset";
    case Action::NewChat:
        return "new chat";
    case Action::CloseWindow:
        return "close window";
    case Action::Finish:
        break;
    }
    return "finish";
}

std::uint64_t stressSeed() {
    bool ok = false;
    const qulonglong seed = qEnvironmentVariable("SINKSCOPE_STRESS_SEED").toULongLong(&ok);
    return ok ? seed : kDefaultSeed;
}

void typeValue(QAbstractSpinBox* spin, const QString& text) {
    spin->setFocus();
    QTest::keyClick(spin, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClicks(spin, text);
    QTest::keyClick(spin, Qt::Key_Return);
}

QPushButton* buttonWithText(QWidget* parent, const QString& text) {
    for (QPushButton* button : parent->findChildren<QPushButton*>())
        if (button->text() == text) return button;
    return nullptr;
}

// Waits until `spy` has recorded at least `count` signals; false when the wait runs out.
bool waitForCount(QSignalSpy& spy, qsizetype count) {
    while (spy.size() < count)
        if (!spy.wait(kWaitMs)) return false;
    return true;
}

// Waits for a session rebuilt for `reason`; false when the wait runs out.
bool waitForSession(QSignalSpy& sessions, const QString& reason) {
    for (qsizetype seen = 0;; ++seen) {
        if (!waitForCount(sessions, seen + 1)) return false;
        if (sessions.at(seen).at(0).value<SessionInfo>().reason == reason) return true;
    }
}

// The index of the first message the chat does not show after the ones before it; -1: all shown,
// in order. (Messages are unique and no prefix of another: "msg-0007".)
qsizetype firstMissing(const QString& chat, const QStringList& messages) {
    qsizetype from = 0;
    for (qsizetype i = 0; i < messages.size(); ++i) {
        const qsizetype at = chat.indexOf(messages[i], from);
        if (at < 0) return i;
        from = at + 1;
    }
    return -1;
}

} // namespace

class TestWorkerStress : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void randomActionsKeepTheChat();

private:
    WindowPtr openWindow();
    bool startReply(MainWindow& window, const QString& text);
    bool changeCacheSetting(MainWindow& window);
    bool switchModel(MainWindow& window);
    bool applyOtherPreset(MainWindow& window);

    QTemporaryDir m_dir;
    QStringList m_models; // [needle markers, plain]
    QString m_corruptModel;
    QString m_currentModel;
    std::mt19937_64 m_rng;
};

void TestWorkerStress::initTestCase() {
    QVERIFY(m_dir.isValid());
    useTemporaryAppFolders(m_dir);

    for (const bool needle : {true, false}) {
        const QString path = m_dir.filePath(needle ? "needle.gguf" : "plain.gguf");
        std::string error;
        QVERIFY2(writeSyntheticModel(test::smallSpec(needle), QFile::encodeName(path).toStdString(),
                                     error),
                 error.c_str());
        m_models << path;
    }
    m_corruptModel = m_dir.filePath(QStringLiteral("corrupt.gguf"));
    QFile corrupt(m_corruptModel);
    QVERIFY(corrupt.open(QIODevice::WriteOnly | QIODevice::Truncate));
    corrupt.write(QByteArray("GGUF").append(16, '\xff')); // a header whose counts are absurd
    corrupt.close();

    QSettings(QStringLiteral("Sinkscope"), QStringLiteral("sinkscope")).clear();
    AppSettings settings;
    settings.modelPath = m_models.front();
    settings.toolsText = QStringLiteral(R"([{"name":"get_time"}])");
    settings.engine.kvWindow = 16;
    settings.limits.maxNewTokens = kReplyTokens;
    // Random weights may end a reply anywhere: every reply runs to its limit unless stopped.
    settings.limits.stopAtNewline = false;
    settings.limits.ignoreEos = true;
    // A closed window's chat is forgotten here; the chat kept at quit is
    // test_main_window_session's.
    settings.restoreLastSession = false;
    settings.save();
    m_currentModel = settings.modelPath;

    const std::uint64_t seed = stressSeed();
    qInfo("stress seed: %llu (SINKSCOPE_STRESS_SEED=%llu replays this run), %d iterations",
          static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed),
          kIterations);
    m_rng.seed(seed);
}

WindowPtr TestWorkerStress::openWindow() {
    auto window = std::make_unique<MainWindow>();
    QSignalSpy sessions(window.get(), &MainWindow::sessionRebuilt);
    window->show();
    if (!QTest::qWaitForWindowExposed(window.get())) return nullptr;
    if (!waitForSession(sessions, QStringLiteral("Model loaded"))) return nullptr;
    return window;
}

// Types `text` and waits for the reply's first token in a batch.
bool TestWorkerStress::startReply(MainWindow& window, const QString& text) {
    QSignalSpy batches(window.engine(), &EngineClient::batchReady);
    typeMessage(window, text);
    for (qsizetype seen = 0;; ++seen) {
        if (!waitForCount(batches, seen + 1)) return false;
        const auto batch = batches.at(seen).at(0).value<EngineBatch>();
        for (const StreamPiece& piece : batch.pieces)
            if (piece.generated) return true;
    }
}

// Window, KV precision or sink mode, changed to another value in the Settings tab.
bool TestWorkerStress::changeCacheSetting(MainWindow& window) {
    window.tabs()->setCurrentIndex(3); // Settings
    SettingsPanel* panel = window.settingsPanel();
    QSignalSpy sessions(&window, &MainWindow::sessionRebuilt);
    const int which = std::uniform_int_distribution<int>(0, 2)(m_rng);
    if (which == 0) {
        auto* spin = panel->findChild<QSpinBox*>(QStringLiteral("kvWindow"));
        const int windows[] = {8, 12, 16, 24, 40};
        int next = spin->value();
        while (next == spin->value())
            next = windows[std::uniform_int_distribution<int>(0, 4)(m_rng)];
        typeValue(spin, QString::number(next));
    } else {
        auto* combo = panel->findChild<QComboBox*>(which == 1 ? QStringLiteral("kvBits")
                                                              : QStringLiteral("sinkMode"));
        const int offset = std::uniform_int_distribution<int>(1, combo->count() - 1)(m_rng);
        combo->setCurrentIndex((combo->currentIndex() + offset) % combo->count());
    }
    return waitForSession(sessions, QStringLiteral("Settings changed"));
}

// The other synthetic model, or (one time in five) the corrupt file, which keeps the current one.
bool TestWorkerStress::switchModel(MainWindow& window) {
    QSignalSpy sessions(&window, &MainWindow::sessionRebuilt);
    QSignalSpy failed(&window, &MainWindow::modelLoadFailed);
    if (std::uniform_int_distribution<int>(0, 4)(m_rng) == 0) {
        window.openModelFile(m_corruptModel);
        return waitForCount(failed, 1) && window.modelInfo()->path == m_currentModel;
    }
    const QString other = m_currentModel == m_models[0] ? m_models[1] : m_models[0];
    window.openModelFile(other);
    if (!waitForSession(sessions, QStringLiteral("Model loaded"))) return false;
    m_currentModel = other;
    return failed.isEmpty() && window.modelInfo()->path == other;
}

bool TestWorkerStress::applyOtherPreset(MainWindow& window) {
    views::ToolsEditor* editor = window.toolsEditor();
    window.tabs()->setCurrentIndex(2); // Tools
    const QList<views::ToolsPreset> presets = editor->presets();
    if (presets.size() < 2) return false;
    QString name = editor->currentPresetName();
    while (name == editor->currentPresetName())
        name = presets[std::uniform_int_distribution<qsizetype>(0, presets.size() - 1)(m_rng)].name;
    QSignalSpy sessions(&window, &MainWindow::sessionRebuilt);
    if (!editor->choosePreset(name)) return false;
    QTest::mouseClick(buttonWithText(editor, QStringLiteral("Apply")), Qt::LeftButton);
    return waitForSession(sessions, QStringLiteral("Tools applied"));
}

void TestWorkerStress::randomActionsKeepTheChat() {
    WindowPtr window = openWindow();
    QVERIFY(window);
    QStringList shown; // the messages sent since the last New chat or new window
    QString forgotten; // one message the chat must no longer show
    int counts[kActionCount] = {};
    for (int i = 0; i < kIterations; ++i) {
        const QString message = QStringLiteral("msg-%1").arg(i, 4, 10, QLatin1Char('0'));
        auto replies = std::make_unique<QSignalSpy>(window.get(), &MainWindow::replyFinished);
        QVERIFY2(startReply(*window, message),
                 qPrintable(QStringLiteral("no first token: ") + message));
        shown << message;

        const auto action =
            static_cast<Action>(std::uniform_int_distribution<int>(0, kActionCount - 1)(m_rng));
        ++counts[int(action)];
        const QString where = QStringLiteral("iteration %1, %2").arg(i).arg(actionName(action));
        switch (action) {
        case Action::Stop:
            QTest::mouseClick(window->chatPanel()->stopButton(), Qt::LeftButton);
            break;
        case Action::CacheSetting:
            QVERIFY2(changeCacheSetting(*window), qPrintable(where));
            break;
        case Action::SwitchModel:
            QVERIFY2(switchModel(*window), qPrintable(where));
            break;
        case Action::ApplyPreset:
            QVERIFY2(applyOtherPreset(*window), qPrintable(where));
            break;
        case Action::NewChat: {
            QSignalSpy sessions(window.get(), &MainWindow::sessionRebuilt);
            QTest::mouseClick(window->chatPanel()->newChatButton(), Qt::LeftButton);
            QVERIFY2(waitForSession(sessions, QStringLiteral("New chat")), qPrintable(where));
            forgotten = shown.constLast();
            shown.clear();
            break;
        }
        case Action::CloseWindow:
            QVERIFY2(window->close(), qPrintable(where));
            replies.reset();
            window.reset();
            window = openWindow();
            QVERIFY2(window, qPrintable(where));
            QCOMPARE(window->modelInfo()->path, m_currentModel); // the last model that loaded
            forgotten = shown.constLast();
            shown.clear();
            break;
        case Action::Finish:
            break;
        }
        // The reply ended (stopped, or at its limit), and the worker is idle again.
        if (replies) QVERIFY2(waitForCount(*replies, 1), qPrintable(where));
        QTRY_VERIFY2_WITH_TIMEOUT(!window->engine()->isBusy(), qPrintable(where), kWaitMs);
        if (replies) {
            const auto report = replies->constFirst().at(0).value<GenerationReport>();
            QVERIFY2(report.reason != StopReason::Failed, qPrintable(where));
            if (action == Action::Finish) QCOMPARE(report.reason, StopReason::MaxTokens);
        }

        const QString chat = window->chatPanel()->transcript()->toPlainText();
        const qsizetype missing = firstMissing(chat, shown);
        QVERIFY2(missing < 0, qPrintable(where + QStringLiteral(": lost ") +
                                         (missing < 0 ? QString() : shown[missing])));
        if (!forgotten.isEmpty() && shown.size() <= 1)
            QVERIFY2(!chat.contains(forgotten),
                     qPrintable(where + QStringLiteral(": still shows ") + forgotten));
    }

    // The worker still answers in full after the last action.
    QSignalSpy replies(window.get(), &MainWindow::replyFinished);
    QVERIFY(startReply(*window, QStringLiteral("last")));
    QVERIFY(waitForCount(replies, 1));
    QCOMPARE(replies.constFirst().at(0).value<GenerationReport>().reason, StopReason::MaxTokens);
    for (int action = 0; action < kActionCount; ++action) {
        qInfo("%s: %d", actionName(static_cast<Action>(action)), counts[action]);
        QVERIFY(counts[action] > 0);
    }
}

QTEST_MAIN(TestWorkerStress)
#include "test_worker_stress.moc"
