// The playground window's chat driven like a user: Enter, turns, Stop and Esc, closing, KV clicks.
#include <QtTest>

#include "chat_panel/chat_panel.h"
#include "chat_panel/message_input.h"
#include "chat_panel/token_text_view.h"
#include "main_window_fixture.h"
#include "memory/mask.h"
#include "panels/stats_panel.h"
#include "views/kv_cache_model.h"
#include "views/kv_cache_view.h"
#include "views/mask_heatmap.h"
#include "window/app_settings.h"
#include "window/main_window.h"
#include "worker/engine_client.h"

#include <QElapsedTimer>
#include <QPushButton>
#include <QTabWidget>
#include <QTableView>

#include <algorithm>
#include <memory>

using namespace sinkscope;
using namespace sinkscope::ui;
using namespace sinkscope::test;

namespace {

bool isPrintableAscii(const std::string& text) {
    return !text.empty() &&
           std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x21 && c <= 0x7e; });
}

} // namespace

class TestMainWindowChat : public QObject, public MainWindowFixture {
    Q_OBJECT

private slots:
    void initTestCase() { setUpFolders(); }
    void init() { saveSettings(); }
    void typingAndEnterStreamsAReply();
    void emptyPromptIsNotSent();
    void turnsShareOneSessionUntilNewChat();
    void stopMidReply_data();
    void stopMidReply();
    void closingMidReplyDoesNotHang();
    void kvSlotClickHighlightsColumnAndText();
};

// Window 16: after the reply, the KV view shows the 16 newest positions in the ring and the
// eviction count the engine reported; the heatmap's cells are keep(); the chat shows the turn.
void TestMainWindowChat::typingAndEnterStreamsAReply() {
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

void TestMainWindowChat::emptyPromptIsNotSent() {
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
void TestMainWindowChat::turnsShareOneSessionUntilNewChat() {
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

void TestMainWindowChat::stopMidReply_data() {
    QTest::addColumn<bool>("useEscape");
    QTest::newRow("Stop button") << false;
    QTest::newRow("Esc key") << true;
}

void TestMainWindowChat::stopMidReply() {
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

void TestMainWindowChat::closingMidReplyDoesNotHang() {
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

// A click on a KV slot highlights that key's heatmap column and its text in the chat.
void TestMainWindowChat::kvSlotClickHighlightsColumnAndText() {
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
    QVERIFY(!window->chatPanel()->showTokensAction()->isChecked());
    clickRow(sinkRow);
    QCOMPARE(window->heatmap()->highlightedKeyPosition(), sink.position);
    // The chat shows its tokens, where the picked one is highlighted.
    QVERIFY(window->chatPanel()->showTokensAction()->isChecked());
    QVERIFY(window->chatPanel()->sinkBlock()->isVisible());
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

QTEST_MAIN(TestMainWindowChat)
#include "test_main_window_chat.moc"
