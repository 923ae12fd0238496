// The playground window's setup driven like a user: bad models, settings, tools, needle-nano.
#include <QtTest>

#include "chat_panel/chat_panel.h"
#include "chat_panel/token_text_view.h"
#include "main_window_fixture.h"
#include "model/synthetic.h"
#include "panels/settings_panel.h"
#include "views/mask_heatmap.h"
#include "views/tools_editor.h"
#include "window/app_settings.h"
#include "window/main_window.h"
#include "window/status_banner.h"
#include "worker/default_model.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QStatusBar>
#include <QTabWidget>

#include <memory>

using namespace sinkscope;
using namespace sinkscope::ui;
using namespace sinkscope::test;

namespace {

// Types into a spin box like a user and commits with Enter.
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

} // namespace

class TestMainWindowConfig : public QObject, public MainWindowFixture {
    Q_OBJECT

private slots:
    void initTestCase() { setUpFolders(); }
    void init() { saveSettings(); }
    void corruptModelShowsErrorAndKeepsModel();
    void settingsSurviveARestart();
    void cacheSettingRebuildsAndSaysSo();
    void threadCountKeepsTheSession();
    void invalidToolsKeepTheSinks();
    void firstRunInstallsNeedleNano();
    void damagedDefaultModelIsReinstalled_data();
    void damagedDefaultModelIsReinstalled();
    void missingConfiguredModelFallsBackToNeedleNano();
};

void TestMainWindowConfig::corruptModelShowsErrorAndKeepsModel() {
    const QString badPath = m_dir.filePath(QStringLiteral("corrupt.gguf"));
    QFile bad(badPath);
    QVERIFY(bad.open(QIODevice::WriteOnly | QIODevice::Truncate));
    bad.write(QByteArray("GGUF").append(16, '\xff')); // a header whose counts are absurd
    bad.close();

    WindowPtr window = openWindow();
    QVERIFY(window);
    const QString label = window->modelLabelText();
    const QString title = window->windowTitle();
    QSignalSpy failed(window.get(), &MainWindow::modelLoadFailed);
    window->openModelFile(badPath);
    QVERIFY(failed.wait(kWaitMs));

    const StatusBanner* banner = window->banner();
    QVERIFY(banner->isVisible());
    QVERIFY(banner->isError());
    QVERIFY2(banner->message().contains(QStringLiteral("corrupt.gguf")),
             qPrintable(banner->message()));
    QVERIFY(banner->message().contains(QStringLiteral("Still using synthetic (random weights)")));
    QCOMPARE(window->modelLabelText(), label);
    QCOMPARE(window->windowTitle(), title);
    QCOMPARE(AppSettings::load().modelPath, m_modelPath);

    // The previous model still answers.
    QSignalSpy replies(window.get(), &MainWindow::replyFinished);
    typeMessage(*window, QStringLiteral("Are you there"));
    const GenerationReport report = waitForReply(replies);
    QVERIFY(report.reason != StopReason::Failed);
    QVERIFY(report.generatedTokens > 0);
}

// Edits made in the Settings tab are written to QSettings and come back in a new window.
void TestMainWindowConfig::settingsSurviveARestart() {
    {
        WindowPtr window = openWindow();
        QVERIFY(window);
        window->tabs()->setCurrentWidget(window->tabs()->widget(3));
        SettingsPanel* panel = window->settingsPanel();
        QSignalSpy sessions(window.get(), &MainWindow::sessionRebuilt);

        typeValue(panel->findChild<QSpinBox*>("kvWindow"), QStringLiteral("48"));
        auto* kvBits = panel->findChild<QComboBox*>("kvBits");
        kvBits->setFocus();
        QTest::keyClick(kvBits, Qt::Key_Down); // 8 -> 16 bits
        auto* positions = panel->findChild<QComboBox*>("positionMode");
        QTest::keyClick(positions, Qt::Key_Down); // absolute -> streaming
        typeValue(panel->findChild<QDoubleSpinBox*>("temperature"), QStringLiteral("0.5"));
        typeValue(panel->findChild<QSpinBox*>("topK"), QStringLiteral("12"));
        typeValue(panel->findChild<QSpinBox*>("seed"), QStringLiteral("1234"));
        typeValue(panel->findChild<QSpinBox*>("maxNewTokens"), QStringLiteral("77"));
        typeValue(panel->findChild<QSpinBox*>("threads"), QStringLiteral("3"));
        auto* stopAtNewline = panel->findChild<QCheckBox*>("stopAtNewline");
        // On the box itself: the widget spans the form's row, wider than its clickable text.
        QTest::mouseClick(stopAtNewline, Qt::LeftButton, {},
                          QPoint(6, stopAtNewline->height() / 2));
        auto* ignoreEos = panel->findChild<QCheckBox*>("ignoreEos");
        QTest::mouseClick(ignoreEos, Qt::LeftButton, {}, QPoint(6, ignoreEos->height() / 2));
        auto* copied = panel->findChild<QCheckBox*>("argumentsFromMessage");
        QTest::mouseClick(copied, Qt::LeftButton, {}, QPoint(6, copied->height() / 2));

        QTRY_VERIFY_WITH_TIMEOUT(window->sessionInfo().effectiveWindow == 48 &&
                                     window->sessionInfo().settings.kvBits == 16 &&
                                     window->sessionInfo().settings.positions ==
                                         PositionMode::Streaming,
                                 kWaitMs);
    }

    const AppSettings stored = AppSettings::load();
    QCOMPARE(stored.engine.kvWindow, 48);
    QCOMPARE(stored.engine.kvBits, 16);
    QCOMPARE(stored.engine.positions, PositionMode::Streaming);
    QCOMPARE(stored.engine.sampler.temperature, 0.5f);
    QCOMPARE(stored.engine.sampler.topK, 12);
    QCOMPARE(stored.engine.sampler.seed, quint64(1234));
    QCOMPARE(stored.limits.maxNewTokens, 77);
    QCOMPARE(stored.engine.threads, 3);
    QCOMPARE(stored.limits.stopAtNewline, true); // the baseline had it off; the click turned it on
    QCOMPARE(stored.limits.ignoreEos, false);
    QCOMPARE(stored.limits.argumentsFromMessage, true);

    WindowPtr restarted = openWindow();
    QVERIFY(restarted);
    SettingsPanel* panel = restarted->settingsPanel();
    QCOMPARE(panel->findChild<QSpinBox*>("kvWindow")->value(), 48);
    QCOMPARE(panel->findChild<QComboBox*>("kvBits")->currentData().toInt(), 16);
    QCOMPARE(panel->findChild<QDoubleSpinBox*>("temperature")->value(), 0.5);
    QCOMPARE(panel->findChild<QSpinBox*>("topK")->value(), 12);
    QCOMPARE(panel->findChild<QSpinBox*>("seed")->value(), 1234);
    QCOMPARE(panel->findChild<QSpinBox*>("maxNewTokens")->value(), 77);
    QCOMPARE(panel->findChild<QSpinBox*>("threads")->value(), 3);
    QCOMPARE(restarted->sessionInfo().settings.threads, 3);
    QVERIFY(panel->findChild<QCheckBox*>("stopAtNewline")->isChecked());
    QVERIFY(!panel->findChild<QCheckBox*>("ignoreEos")->isChecked());
    QVERIFY(panel->findChild<QCheckBox*>("argumentsFromMessage")->isChecked());
    // And the engine runs with them.
    QCOMPARE(restarted->sessionInfo().effectiveWindow, 48);
    QCOMPARE(restarted->sessionInfo().settings.kvBits, 16);
    QCOMPARE(restarted->sessionInfo().settings.positions, PositionMode::Streaming);
}

// A cache setting rebuilds the session, re-prefills the conversation and says so.
void TestMainWindowConfig::cacheSettingRebuildsAndSaysSo() {
    WindowPtr window = openWindow();
    QVERIFY(window);
    QSignalSpy replies(window.get(), &MainWindow::replyFinished);
    typeMessage(*window, QStringLiteral("Before the change"));
    waitForReply(replies);
    const qint64 transcriptTokens = window->chatPanel()->transcript()->tokenCount();

    QSignalSpy sessions(window.get(), &MainWindow::sessionRebuilt);
    typeValue(window->settingsPanel()->findChild<QSpinBox*>("kvWindow"), QStringLiteral("8"));
    QVERIFY(sessions.wait(kWaitMs));
    const SessionInfo info = sessions.takeFirst().at(0).value<SessionInfo>();
    QCOMPARE(info.reason, QStringLiteral("Settings changed"));
    QCOMPARE(info.reprefilledTokens, 8);
    const QString message = window->statusBar()->currentMessage();
    QVERIFY2(message.contains(QStringLiteral("Settings changed")) &&
                 message.contains(QStringLiteral("window 8")) &&
                 message.contains(QStringLiteral("re-prefilled 8")),
             qPrintable(message));
    QTRY_COMPARE_WITH_TIMEOUT(window->heatmap()->positionCount(), info.layout.prefixLength + 8,
                              kWaitMs);
    QCOMPARE(window->chatPanel()->transcript()->tokenCount(), transcriptTokens);
    QCOMPARE(window->chatPanel()->transcript()->fadedBefore(), transcriptTokens - 8);
}

// The thread count changes at once without rebuilding the session: the chat goes on where it was.
void TestMainWindowConfig::threadCountKeepsTheSession() {
    WindowPtr window = openWindow();
    QVERIFY(window);
    QCOMPARE(window->settingsPanel()->findChild<QSpinBox*>("threads")->value(),
             defaultThreadCount());
    QSignalSpy replies(window.get(), &MainWindow::replyFinished);
    typeMessage(*window, QStringLiteral("Before the change"));
    waitForReply(replies);
    const qint64 positions = window->heatmap()->positionCount();

    QSignalSpy sessions(window.get(), &MainWindow::sessionRebuilt);
    typeValue(window->settingsPanel()->findChild<QSpinBox*>("threads"), QStringLiteral("2"));
    typeMessage(*window, QStringLiteral("After the change"));
    waitForReply(replies);
    QCOMPARE(sessions.count(), 0);
    QVERIFY(window->heatmap()->positionCount() > positions); // the same session, grown
    QCOMPARE(AppSettings::load().engine.threads, 2);
}

// Apply with invalid JSON shows the editor's error and changes nothing; valid tools are pinned.
void TestMainWindowConfig::invalidToolsKeepTheSinks() {
    WindowPtr window = openWindow();
    QVERIFY(window);
    const int sinksBefore = window->sessionInfo().sinksUsed;
    QVERIFY(sinksBefore > 1);
    window->tabs()->setCurrentIndex(2); // Tools
    QSignalSpy sessions(window.get(), &MainWindow::sessionRebuilt);

    QPlainTextEdit* editor = window->toolsEditor()->textEdit();
    editor->selectAll();
    QTest::keyClicks(editor, QStringLiteral("[{\"name\": }"));
    QPushButton* apply = buttonWithText(window->toolsEditor(), QStringLiteral("Apply"));
    QVERIFY(apply);
    QTest::mouseClick(apply, Qt::LeftButton);
    QVERIFY(!window->toolsEditor()->errorMessage().isEmpty());

    // A reply is queued behind anything the click could have queued: the session is unchanged.
    QSignalSpy replies(window.get(), &MainWindow::replyFinished);
    typeMessage(*window, QStringLiteral("Which tools"));
    waitForReply(replies);
    QCOMPARE(sessions.size(), 0);
    QCOMPARE(window->sessionInfo().sinksUsed, sinksBefore);
    QCOMPARE(window->latestSnapshot()->sinksUsed, sinksBefore);
    QCOMPARE(AppSettings::load().toolsText, kSmallTools);

    editor->selectAll();
    QTest::keyClicks(editor,
                     QStringLiteral("[{\"name\": \"get_weather\", \"description\": \"rain\"}]"));
    QTest::mouseClick(apply, Qt::LeftButton);
    QVERIFY(window->toolsEditor()->errorMessage().isEmpty());
    QVERIFY(sessions.wait(kWaitMs));
    const SessionInfo info = sessions.takeFirst().at(0).value<SessionInfo>();
    QCOMPARE(info.reason, QStringLiteral("Tools applied"));
    QVERIFY(info.sinksUsed > sinksBefore);
    QVERIFY(
        window->chatPanel()->sinkBlock()->toPlainText().contains(QStringLiteral("get_weather")));
    QVERIFY(window->statusBar()->currentMessage().contains(QStringLiteral("Tools applied")));
    QVERIFY2(
        window->toolsStatusText().contains(QStringLiteral("%1 tokens pinned").arg(info.sinksUsed)),
        qPrintable(window->toolsStatusText()));

    // An edit at the block's end: Apply takes over the pinned tokens before it from the cache.
    editor->selectAll();
    QTest::keyClicks(
        editor, QStringLiteral("[{\"name\": \"get_weather\", \"description\": \"rain or snow\"}]"));
    QTest::mouseClick(apply, Qt::LeftButton);
    QVERIFY(sessions.wait(kWaitMs));
    const SessionInfo edited = sessions.takeFirst().at(0).value<SessionInfo>();
    QVERIFY2(edited.reusedSinkTokens > 1 && edited.reusedSinkTokens < edited.sinksUsed,
             qPrintable(QString::number(edited.reusedSinkTokens)));
    QVERIFY(window->chatPanel()->sinkBlock()->toPlainText().contains(QStringLiteral("or snow")));
    QVERIFY2(window->toolsStatusText().contains(
                 QStringLiteral("%1 tokens of the block taken over").arg(edited.reusedSinkTokens)),
             qPrintable(window->toolsStatusText()));
}

void TestMainWindowConfig::firstRunInstallsNeedleNano() {
    saveSettings([](AppSettings& s) { s.modelPath.clear(); });
    QFile::remove(defaultModelPath());
    WindowPtr window = openWindow();
    QVERIFY(window);
    QCOMPARE(window->modelInfo()->path, defaultModelPath());
    QVERIFY(window->modelLabelText().contains(QStringLiteral("needle-nano")));
    QVERIFY(window->windowTitle().contains(QStringLiteral("needle-nano")));
    QVERIFY(!window->windowTitle().contains(QStringLiteral("random weights")));
    QVERIFY(!window->banner()->isVisible());
    QFile embedded(QStringLiteral(":/models/needle-nano.gguf"));
    QVERIFY(embedded.open(QIODevice::ReadOnly));
    QFile installed(defaultModelPath());
    QVERIFY(installed.open(QIODevice::ReadOnly));
    QVERIFY(installed.readAll() == embedded.readAll());

    // needle-nano names its training window and streaming positions; they are in force over the
    // baseline's window 16 and absolute positions until the user unticks the box.
    const ModelInfo model = *window->modelInfo();
    QVERIFY(model.suggestedKvWindow > 16);
    QCOMPARE(model.suggestedPositions, QStringLiteral("streaming"));
    QCOMPARE(window->sessionInfo().effectiveWindow, qint64(model.suggestedKvWindow));
    QCOMPARE(window->sessionInfo().positions, PositionMode::Streaming);
    window->tabs()->setCurrentWidget(window->tabs()->widget(3));
    SettingsPanel* panel = window->settingsPanel();
    auto* useHints = panel->findChild<QCheckBox*>("useModelHints");
    QVERIFY(useHints->isChecked());
    QVERIFY(useHints->text().contains(QStringLiteral("window %1").arg(model.suggestedKvWindow)));
    QVERIFY(!panel->findChild<QSpinBox*>("kvWindow")->isEnabled());
    QVERIFY(!panel->findChild<QComboBox*>("positionMode")->isEnabled());
    QTest::mouseClick(useHints, Qt::LeftButton, {}, QPoint(6, useHints->height() / 2));
    QTRY_VERIFY_WITH_TIMEOUT(window->sessionInfo().effectiveWindow == 16 &&
                                 window->sessionInfo().positions == PositionMode::Absolute,
                             kWaitMs);
    QVERIFY(panel->findChild<QSpinBox*>("kvWindow")->isEnabled());
    QCOMPARE(AppSettings::load().engine.useModelHints, false);
}

void TestMainWindowConfig::damagedDefaultModelIsReinstalled_data() {
    QTest::addColumn<QString>("configured");
    QTest::newRow("no model configured") << QString();
    QTest::newRow("the default configured") << defaultModelPath();
    QTest::newRow("an earlier release's default configured")
        << QFileInfo(defaultModelPath())
               .absoluteDir()
               .filePath(QStringLiteral("synthetic-random.gguf"));
}

// A damaged copy of the built-in model (here cut short), as an older release's would be, is
// replaced by the embedded one; settings that name the default (this release's or an earlier
// one's) open this release's.
void TestMainWindowConfig::damagedDefaultModelIsReinstalled() {
    QFETCH(QString, configured);
    saveSettings([&](AppSettings& s) { s.modelPath = configured; });
    QFile embedded(QStringLiteral(":/models/needle-nano.gguf"));
    QVERIFY(embedded.open(QIODevice::ReadOnly));
    const QByteArray bytes = embedded.readAll();
    QVERIFY(QDir().mkpath(QFileInfo(defaultModelPath()).absolutePath()));
    QFile damaged(defaultModelPath());
    QVERIFY(damaged.open(QIODevice::WriteOnly | QIODevice::Truncate));
    QCOMPARE(damaged.write(bytes.left(bytes.size() / 2)), bytes.size() / 2);
    damaged.close();
    if (!configured.isEmpty() && configured != defaultModelPath()) {
        std::string error;
        QVERIFY2(writeSyntheticModel(SyntheticSpec{}, QFile::encodeName(configured).toStdString(),
                                     error),
                 error.c_str());
    }
    WindowPtr window = openWindow();
    QVERIFY(window);
    QCOMPARE(window->modelInfo()->path, defaultModelPath());
    QVERIFY(window->modelLabelText().contains(QStringLiteral("needle-nano")));
    QCOMPARE(QFileInfo(defaultModelPath()).size(), bytes.size());
    QVERIFY(!window->banner()->isVisible());
}

void TestMainWindowConfig::missingConfiguredModelFallsBackToNeedleNano() {
    const QString missing = m_dir.filePath(QStringLiteral("gone.gguf"));
    saveSettings([&](AppSettings& s) { s.modelPath = missing; });
    auto window = std::make_unique<MainWindow>();
    // The notice is shown at once; the model loads behind it.
    QVERIFY(window->banner()->message().contains(QStringLiteral("gone.gguf")));
    QVERIFY(window->banner()->message().contains(QStringLiteral("needle-nano")));
    QVERIFY(!window->banner()->isError());
    QSignalSpy ready(window.get(), &MainWindow::modelReady);
    QVERIFY(ready.wait(kWaitMs));
    QCOMPARE(window->modelInfo()->path, defaultModelPath());
    QVERIFY(window->banner()->message().contains(QStringLiteral("gone.gguf")));
}

QTEST_MAIN(TestMainWindowConfig)
#include "test_main_window_config.moc"
