// The playground window driven like a user: typed messages, Enter, Stop and Esc, clicks on KV
// slots, settings edits that survive a restart, corrupt models and invalid tools. Settings and the
// first-run model live in temporary folders.
#include <QtTest>

#include "window/app_settings.h"
#include "chat_panel/chat_panel.h"
#include "worker/default_model.h"
#include "worker/engine_client.h"
#include "views/kv_cache_model.h"
#include "views/kv_cache_view.h"
#include "window/main_window.h"
#include "memory/mask.h"
#include "views/mask_heatmap.h"
#include "chat_panel/message_input.h"
#include "panels/settings_panel.h"
#include "panels/stats_panel.h"
#include "window/status_banner.h"
#include "model/synthetic.h"
#include "test_support.h"
#include "chat_panel/token_text_view.h"
#include "views/tools_editor.h"
#include "window_test_support.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>

#include <memory>

using namespace sinkscope;
using namespace sinkscope::ui;

namespace {

using test::typeMessage;
using test::useTemporaryAppFolders;

constexpr int kWaitMs = 60000;
const QString kSmallTools = QStringLiteral(R"([{"name":"get_time"}])");

using WindowPtr = std::unique_ptr<MainWindow>;

// Types into a spin box like a user and commits with Enter.
void typeValue(QAbstractSpinBox* spin, const QString& text) {
    spin->setFocus();
    QTest::keyClick(spin, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClicks(spin, text);
    QTest::keyClick(spin, Qt::Key_Return);
}

GenerationReport waitForReply(QSignalSpy& replies) {
    if (replies.isEmpty() && !replies.wait(kWaitMs)) return {};
    return replies.takeFirst().at(0).value<GenerationReport>();
}

QPushButton* buttonWithText(QWidget* parent, const QString& text) {
    for (QPushButton* button : parent->findChildren<QPushButton*>())
        if (button->text() == text) return button;
    return nullptr;
}

bool isPrintableAscii(const std::string& text) {
    return !text.empty() &&
           std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x21 && c <= 0x7e; });
}

} // namespace

class TestMainWindow : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void typingAndEnterStreamsAReply();
    void emptyPromptIsNotSent();
    void turnsShareOneSessionUntilNewChat();
    void stopMidReply_data();
    void stopMidReply();
    void closingMidReplyDoesNotHang();
    void corruptModelShowsErrorAndKeepsModel();
    void settingsSurviveARestart();
    void cacheSettingRebuildsAndSaysSo();
    void invalidToolsKeepTheSinks();
    void kvSlotClickHighlightsColumnAndText();
    void firstRunInstallsNeedleNano();
    void damagedDefaultModelIsReinstalled_data();
    void damagedDefaultModelIsReinstalled();
    void missingConfiguredModelFallsBackToNeedleNano();

private:
    // Saves the baseline settings (synthetic model, window 16, small tools) changed by `edit`.
    template <typename Edit> void saveSettings(Edit edit);
    void saveSettings() {
        saveSettings([](AppSettings&) {});
    }
    // A shown window with its model loaded and its first session built.
    WindowPtr openWindow();

    QTemporaryDir m_dir;
    QString m_modelPath;
};

void TestMainWindow::initTestCase() {
    QVERIFY(m_dir.isValid());
    useTemporaryAppFolders(m_dir);
    QVERIFY(defaultModelPath().startsWith(m_dir.path()));

    m_modelPath = m_dir.filePath(QStringLiteral("synthetic.gguf"));
    std::string error;
    QVERIFY2(
        writeSyntheticModel(SyntheticSpec{}, QFile::encodeName(m_modelPath).toStdString(), error),
        error.c_str());
}

void TestMainWindow::init() {
    saveSettings();
}

template <typename Edit> void TestMainWindow::saveSettings(Edit edit) {
    QSettings(QStringLiteral("Sinkscope"), QStringLiteral("sinkscope")).clear();
    AppSettings settings;
    settings.modelPath = m_modelPath;
    settings.toolsText = kSmallTools;
    settings.engine.kvWindow = 16;
    settings.limits.maxNewTokens = 40;
    // Random weights may sample end-of-text or a newline anywhere: replies run to their limit.
    settings.limits.stopAtNewline = false;
    settings.limits.ignoreEos = true;
    edit(settings);
    settings.save();
}

WindowPtr TestMainWindow::openWindow() {
    return test::openLoadedWindow(kWaitMs);
}

// Window 16: after the reply, the KV view shows the 16 newest positions in the ring and the
// eviction count the engine reported; the heatmap's cells are keep(); the chat shows the turn.
void TestMainWindow::typingAndEnterStreamsAReply() {
    WindowPtr window = openWindow();
    QVERIFY(window);
    TokenTextView* transcript = window->chatPanel()->transcript();

    QSignalSpy replies(window.get(), &MainWindow::replyFinished);
    typeMessage(*window, QStringLiteral("Hello there"));
    QVERIFY(window->chatPanel()->stopButton()->isEnabled());
    const GenerationReport report = waitForReply(replies);
    QCOMPARE(report.reason, StopReason::MaxTokens);
    QCOMPARE(report.generatedTokens, 40);
    QVERIFY(window->chatPanel()->input()->toPlainText().isEmpty());
    QVERIFY(!window->chatPanel()->stopButton()->isEnabled());

    QVERIFY(window->latestSnapshot());
    const StepSnapshot& last = *window->latestSnapshot();
    const SessionInfo& session = window->sessionInfo();
    const int window16 = 16;
    QVERIFY(last.tokensSeen >= 40);
    QCOMPARE(last.tokensSeen, report.tokensSeen);
    QCOMPARE(transcript->tokenCount(), last.tokensSeen - session.layout.prefixLength);
    const QString chat = transcript->toPlainText();
    QVERIFY2(chat.contains(QStringLiteral("User: Hello there\nAssistant:")), qPrintable(chat));
    QVERIFY(chat.contains(QStringLiteral("tok/s")));
    QVERIFY(window->chatPanel()->statusText().contains(QStringLiteral("tok/s")));
    QVERIFY(window->chatPanel()->sinkBlock()->toPlainText().contains(QStringLiteral("get_time")));

    // KV cache view: sinks, then a full ring holding exactly the window.
    const QAbstractItemModel* slotModel = window->kvCacheView()->slotTable()->model();
    QCOMPARE(slotModel->rowCount(), last.sinkSlots + window16);
    QList<qint64> ringPositions;
    for (int row = last.sinkSlots; row < slotModel->rowCount(); ++row)
        ringPositions
            << slotModel->index(row, 0).data(views::KvCacheModel::PositionRole).toLongLong();
    std::sort(ringPositions.begin(), ringPositions.end());
    QCOMPARE(ringPositions.size(), window16);
    QCOMPARE(ringPositions.constFirst(), last.queryPosition - window16 + 1);
    QCOMPARE(ringPositions.constLast(), last.queryPosition);
    QCOMPARE(last.evictions, last.tokensSeen - last.sinksUsed - window16);
    const QString counters = window->kvCacheView()->countersText();
    QVERIFY2(
        counters.contains(QStringLiteral("evictions %1").arg(QLocale().toString(last.evictions))),
        qPrintable(counters));
    QCOMPARE(window->statsPanel()->evictionsText(), QLocale().toString(last.evictions));

    // Heatmap: every recorded row's cells are classify(), i.e. coloured exactly where keep() holds.
    const views::MaskHeatmap* heatmap = window->heatmap();
    QCOMPARE(heatmap->positionCount(), last.tokensSeen);
    int rowsChecked = 0;
    for (qint64 q = last.queryPosition; q >= 0 && rowsChecked < 24; --q) {
        if (!heatmap->isRowRecorded(q)) continue;
        ++rowsChecked;
        for (qint64 k = 0; k <= q; ++k) {
            const bool sink = k < last.sinksUsed;
            const std::optional<MaskCell> cell = heatmap->cellKind(q, k);
            QVERIFY(cell);
            QCOMPARE(*cell, classify(q, k, window16, sink));
            const bool attended =
                *cell == MaskCell::AttendedRecent || *cell == MaskCell::AttendedSink;
            QCOMPARE(attended, keep(q, k, window16, sink));
        }
    }
    QVERIFY(rowsChecked >= 10);
    QVERIFY(heatmap->isRowRecorded(last.queryPosition));

    // Text that left the window is faded in the chat.
    const qint64 firstInWindow = last.queryPosition - window16 + 1;
    QCOMPARE(transcript->fadedBefore(), firstInWindow - session.layout.prefixLength);
}

void TestMainWindow::emptyPromptIsNotSent() {
    WindowPtr window = openWindow();
    QVERIFY(window);
    ChatPanel* chat = window->chatPanel();
    QSignalSpy replies(window.get(), &MainWindow::replyFinished);
    QVERIFY(!chat->sendButton()->isEnabled());
    QTest::keyClick(chat->input(), Qt::Key_Return);
    QCOMPARE(chat->statusText(), QStringLiteral("Type a message first."));
    QTest::keyClicks(chat->input(), QStringLiteral("   "));
    QVERIFY(!chat->sendButton()->isEnabled());
    QTest::keyClick(chat->input(), Qt::Key_Return);
    QVERIFY(!window->engine()->isGenerating());
    QCOMPARE(chat->transcript()->tokenCount(), 0);

    // Shift+Enter adds a line instead of sending.
    chat->input()->clear();
    QTest::keyClicks(chat->input(), QStringLiteral("two"));
    QTest::keyClick(chat->input(), Qt::Key_Return, Qt::ShiftModifier);
    QTest::keyClicks(chat->input(), QStringLiteral("lines"));
    QCOMPARE(chat->input()->toPlainText(), QStringLiteral("two\nlines"));
    QVERIFY(chat->sendButton()->isEnabled());
    QVERIFY(!window->engine()->isGenerating());
    QCOMPARE(replies.size(), 0);
}

// Turns continue one session (positions go on, nothing resets); New chat starts over with the
// same sinks.
void TestMainWindow::turnsShareOneSessionUntilNewChat() {
    WindowPtr window = openWindow();
    QVERIFY(window);
    TokenTextView* transcript = window->chatPanel()->transcript();
    const qint64 prefix = window->sessionInfo().layout.prefixLength;
    QSignalSpy replies(window.get(), &MainWindow::replyFinished);
    QSignalSpy sessions(window.get(), &MainWindow::sessionRebuilt);

    typeMessage(*window, QStringLiteral("first"));
    waitForReply(replies);
    const qint64 afterFirst = window->latestSnapshot()->tokensSeen;
    typeMessage(*window, QStringLiteral("second"));
    waitForReply(replies);
    const StepSnapshot& second = *window->latestSnapshot();
    QVERIFY(second.tokensSeen > afterFirst + 3);
    QCOMPARE(second.evictions, second.tokensSeen - second.sinksUsed - 16);
    QCOMPARE(transcript->tokenCount(), second.tokensSeen - prefix);
    QVERIFY(transcript->toPlainText().contains(QStringLiteral("User: first")));
    QVERIFY(transcript->toPlainText().contains(QStringLiteral("User: second")));
    QCOMPARE(sessions.size(), 0);

    QTest::mouseClick(window->chatPanel()->newChatButton(), Qt::LeftButton);
    QCOMPARE(transcript->tokenCount(), 0);
    QVERIFY(sessions.wait(kWaitMs));
    QCOMPARE(sessions.at(0).at(0).value<SessionInfo>().reason, QStringLiteral("New chat"));
    QCOMPARE(window->sessionInfo().layout.prefixLength, prefix);
    QCOMPARE(window->heatmap()->positionCount(), prefix);
    QCOMPARE(window->latestSnapshot()->tokensSeen, prefix);

    typeMessage(*window, QStringLiteral("third"));
    waitForReply(replies);
    QVERIFY(transcript->toPlainText().startsWith(QStringLiteral("User: third")));
    QVERIFY(!transcript->toPlainText().contains(QStringLiteral("second")));
}

void TestMainWindow::stopMidReply_data() {
    QTest::addColumn<bool>("useEscape");
    QTest::newRow("Stop button") << false;
    QTest::newRow("Esc key") << true;
}

void TestMainWindow::stopMidReply() {
    QFETCH(bool, useEscape);
    saveSettings([](AppSettings& s) { s.limits.maxNewTokens = 1000000; });
    WindowPtr window = openWindow();
    QVERIFY(window);
    window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(window.get()));
    EngineClient* engine = window->engine();

    QSignalSpy replies(window.get(), &MainWindow::replyFinished);
    typeMessage(*window, QStringLiteral("Tell me everything"));
    QTRY_VERIFY_WITH_TIMEOUT(engine->generatedTokenCount() >= 5, kWaitMs);
    // Streaming: the chat grows while the reply is still being generated.
    TokenTextView* transcript = window->chatPanel()->transcript();
    const qint64 shown = transcript->tokenCount();
    QTRY_VERIFY_WITH_TIMEOUT(transcript->tokenCount() > shown, kWaitMs);
    QVERIFY(engine->isGenerating());
    QVERIFY(replies.isEmpty());

    if (useEscape)
        QTest::keyClick(window.get(), Qt::Key_Escape);
    else
        QTest::mouseClick(window->chatPanel()->stopButton(), Qt::LeftButton);
    const qint64 atStop = engine->generatedTokenCount();
    const GenerationReport report = waitForReply(replies);
    QCOMPARE(report.reason, StopReason::Stopped);
    QVERIFY(engine->generatedTokenCount() <= atStop + 1);
    QVERIFY(!window->chatPanel()->stopButton()->isEnabled());
    QVERIFY(window->chatPanel()->transcript()->toPlainText().contains(QStringLiteral("stopped")));
}

void TestMainWindow::closingMidReplyDoesNotHang() {
    saveSettings([](AppSettings& s) { s.limits.maxNewTokens = 1000000; });
    WindowPtr window = openWindow();
    QVERIFY(window);
    typeMessage(*window, QStringLiteral("Never stop"));
    QTRY_VERIFY_WITH_TIMEOUT(window->engine()->generatedTokenCount() >= 3, kWaitMs);
    QVERIFY(window->engine()->isGenerating());

    QElapsedTimer clock;
    clock.start();
    QVERIFY(window->close());
    window.reset();
    QVERIFY2(clock.elapsed() < 5000, qPrintable(QString::number(clock.elapsed())));
}

void TestMainWindow::corruptModelShowsErrorAndKeepsModel() {
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
void TestMainWindow::settingsSurviveARestart() {
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
        auto* stopAtNewline = panel->findChild<QCheckBox*>("stopAtNewline");
        // On the box itself: the widget spans the form's row, wider than its clickable text.
        QTest::mouseClick(stopAtNewline, Qt::LeftButton, {},
                          QPoint(6, stopAtNewline->height() / 2));
        auto* ignoreEos = panel->findChild<QCheckBox*>("ignoreEos");
        QTest::mouseClick(ignoreEos, Qt::LeftButton, {}, QPoint(6, ignoreEos->height() / 2));

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
    QCOMPARE(stored.limits.stopAtNewline, true); // the baseline had it off; the click turned it on
    QCOMPARE(stored.limits.ignoreEos, false);

    WindowPtr restarted = openWindow();
    QVERIFY(restarted);
    SettingsPanel* panel = restarted->settingsPanel();
    QCOMPARE(panel->findChild<QSpinBox*>("kvWindow")->value(), 48);
    QCOMPARE(panel->findChild<QComboBox*>("kvBits")->currentData().toInt(), 16);
    QCOMPARE(panel->findChild<QDoubleSpinBox*>("temperature")->value(), 0.5);
    QCOMPARE(panel->findChild<QSpinBox*>("topK")->value(), 12);
    QCOMPARE(panel->findChild<QSpinBox*>("seed")->value(), 1234);
    QCOMPARE(panel->findChild<QSpinBox*>("maxNewTokens")->value(), 77);
    QVERIFY(panel->findChild<QCheckBox*>("stopAtNewline")->isChecked());
    QVERIFY(!panel->findChild<QCheckBox*>("ignoreEos")->isChecked());
    // And the engine runs with them.
    QCOMPARE(restarted->sessionInfo().effectiveWindow, 48);
    QCOMPARE(restarted->sessionInfo().settings.kvBits, 16);
    QCOMPARE(restarted->sessionInfo().settings.positions, PositionMode::Streaming);
}

// A cache setting rebuilds the session, re-prefills the conversation and says so.
void TestMainWindow::cacheSettingRebuildsAndSaysSo() {
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

// Apply with invalid JSON shows the editor's error and changes nothing; valid tools are pinned.
void TestMainWindow::invalidToolsKeepTheSinks() {
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
}

// A click on a KV slot highlights that key's heatmap column and its text in the chat.
void TestMainWindow::kvSlotClickHighlightsColumnAndText() {
    WindowPtr window = openWindow();
    QVERIFY(window);
    QSignalSpy replies(window.get(), &MainWindow::replyFinished);
    typeMessage(*window, QStringLiteral("Pick a slot"));
    waitForReply(replies);
    window->tabs()->setCurrentWidget(window->kvCacheView());
    QTableView* table = window->kvCacheView()->slotTable();
    const StepSnapshot& snapshot = *window->latestSnapshot();

    const auto clickRow = [table](int row) {
        const QModelIndex index = table->model()->index(row, views::KvCacheModel::PieceColumn);
        table->scrollTo(index);
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, table->visualRect(index).center());
    };

    // A sink: the tool block's text.
    const int sinkRow = 3;
    const SlotView& sink = snapshot.cacheSlots[sinkRow];
    clickRow(sinkRow);
    QCOMPARE(window->heatmap()->highlightedKeyPosition(), sink.position);
    QCOMPARE(window->chatPanel()->sinkBlock()->highlightedToken(), sink.position);
    QCOMPARE(window->chatPanel()->sinkBlock()->highlightedText(),
             QString::fromStdString(sink.piece));
    QCOMPARE(window->chatPanel()->transcript()->highlightedToken(), -1);

    // A ring slot: the conversation's text.
    int ringRow = -1;
    for (int row = snapshot.sinkSlots; row < int(snapshot.cacheSlots.size()); ++row)
        if (isPrintableAscii(snapshot.cacheSlots[row].piece)) {
            ringRow = row;
            break;
        }
    QVERIFY(ringRow >= 0);
    const SlotView& ring = snapshot.cacheSlots[ringRow];
    clickRow(ringRow);
    QCOMPARE(window->heatmap()->highlightedKeyPosition(), ring.position);
    const qint64 index = window->sessionInfo().layout.transcriptIndexOf(ring.position);
    QCOMPARE(window->chatPanel()->transcript()->highlightedToken(), index);
    // A token after a split UTF-8 character may carry its replacement mark first.
    const QString highlighted = window->chatPanel()->transcript()->highlightedText();
    QVERIFY2(highlighted.endsWith(QString::fromStdString(ring.piece)), qPrintable(highlighted));
    QCOMPARE(window->chatPanel()->sinkBlock()->highlightedToken(), -1);
}

void TestMainWindow::firstRunInstallsNeedleNano() {
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

void TestMainWindow::damagedDefaultModelIsReinstalled_data() {
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
void TestMainWindow::damagedDefaultModelIsReinstalled() {
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

void TestMainWindow::missingConfiguredModelFallsBackToNeedleNano() {
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

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
