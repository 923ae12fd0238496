// A 50,000-turn session (2 MB on disk, under the session limits) opened with File > Open Session
// on the offscreen platform, and used as a user would: its first and last messages read as saved,
// the oldest faded, the newest on screen; the Copy links of a message and of a call's card are
// clicked; a reply streams into it; Copy Chat, find in chat (Ctrl+F) and Show tokens work on the
// whole history. Correctness only: the time limits guard against a hang (bench_chat_view times
// it).
#include <QtTest>

#include "chat_panel/call_card.h"
#include "chat_panel/chat_panel.h"
#include "chat_panel/chat_view.h"
#include "chat_panel/token_text_view.h"
#include "chat_panel/transcript/message_document.h"
#include "long_session_support.h"

#include <QClipboard>
#include <QGuiApplication>
#include <QLineEdit>
#include <QLocale>
#include <QToolButton>

using namespace sinkscope;
using namespace sinkscope::ui;
using namespace sinkscope::test;

namespace {

constexpr int kTurns = 50000;
constexpr int kLongWaitMs = 300000;

void clickLink(ChatView* view, const QString& href) {
    const QPoint point = linkPoint(view, href);
    QVERIFY2(!point.isNull(), qPrintable(href));
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, point);
}

} // namespace

class TestLongChat : public QObject, public MainWindowFixture {
    Q_OBJECT

private slots:
    void initTestCase() { setUpFolders(); }
    void init() { saveSettings(); }
    void fiftyThousandTurnsOpenAndTakeAReply();
};

void TestLongChat::fiftyThousandTurnsOpenAndTakeAReply() {
    saveSettings([](AppSettings& settings) {
        settings.engine.kvWindow = 64;
        settings.limits.maxNewTokens = 24;
    });
    WindowPtr window = openWindow();
    QVERIFY(window);
    const QString path = m_dir.filePath(QStringLiteral("long.sinkscope-session"));
    QString error;
    QVERIFY2(writeLongSession(*window, path, kTurns, error), qPrintable(error));
    QVERIFY(QFileInfo(path).size() < kMaxSessionFileBytes);
    const SessionInfo restored = openSession(*window, path, kLongWaitMs);
    QVERIFY(restored.restored);
    QCOMPARE(restored.conversation.size(), kTurns);

    // Every turn is a message, as saved.
    ChatView* chat = window->chatPanel()->chatView();
    const QList<TurnView> turns = longTurns(kTurns);
    QCOMPARE(chat->messages().size(), kTurns);
    for (const qsizetype row :
         {qsizetype(0), qsizetype(1), qsizetype(kTurns / 2), qsizetype(kTurns - 1)}) {
        QCOMPARE(chat->messages()[row].role, turns[row].role);
        QCOMPARE(chat->messages()[row].text, turns[row].text);
    }
    // The oldest left the window long ago; the newest is in it, and on screen.
    QTRY_VERIFY_WITH_TIMEOUT(chat->isFaded(0), kWaitMs);
    QVERIFY(!chat->isFaded(kTurns - 1));
    QTRY_COMPARE_WITH_TIMEOUT(chat->messageAt(QPoint(10, chat->viewport()->height() - 10)),
                              qsizetype(kTurns - 1), kWaitMs);
    const QString last = chat->messageDocument(kTurns - 1)->toPlainText();
    QVERIFY2(last.contains(turns.last().text) && !last.contains(QStringLiteral("KV window")),
             qPrintable(last));

    // The newest message's Copy link, and that of the call near the end.
    QGuiApplication::clipboard()->clear();
    clickLink(chat, copyLink(kTurns - 1));
    QCOMPARE(QGuiApplication::clipboard()->text(), turns.last().text);
    qsizetype callRow = kTurns - 1;
    while (callRow > 0 && chat->messages()[callRow].calls.isEmpty())
        --callRow;
    QVERIFY(callRow > kTurns - 10);
    const QString card = chat->messageDocument(callRow)->toPlainText();
    QVERIFY2(card.contains(QStringLiteral("Call get_time")), qPrintable(card));
    QVERIFY(
        chat->messageDocument(callRow + 1)->toPlainText().contains(QStringLiteral("Tool result")));
    clickLink(chat, copyLink(callRow));
    QCOMPARE(QGuiApplication::clipboard()->text(), QStringLiteral("get_time {}"));

    // The first message, scrolled to: drawn faded, saying it left.
    const QRect first = chat->messageRect(0);
    QVERIFY(chat->viewport()->rect().intersects(first));
    QCOMPARE(chat->messageAt(first.center()), qsizetype(0));
    const QString oldest = chat->messageDocument(0)->toPlainText();
    QVERIFY2(oldest.contains(QStringLiteral("You  · left the KV window")) &&
                 oldest.contains(longUserText(0)),
             qPrintable(oldest));

    // A reply streams into it; the view follows it to the bottom.
    QSignalSpy replies(window.get(), &MainWindow::replyFinished);
    typeMessage(*window, QStringLiteral("and the hall?"));
    const GenerationReport report = waitForReply(replies);
    QVERIFY(report.reason != StopReason::Failed);
    QCOMPARE(report.generatedTokens, 24);
    QCOMPARE(chat->messages().size(), kTurns + 2);
    QCOMPARE(chat->messages()[kTurns].text, QStringLiteral("and the hall?"));
    QCOMPARE(chat->messages().last().role, TurnRole::Assistant);
    QCOMPARE(chat->messages().last().text, report.conversation.last().text);
    QTRY_COMPARE_WITH_TIMEOUT(chat->messageAt(QPoint(10, chat->viewport()->height() - 10)),
                              qsizetype(kTurns + 1), kWaitMs);

    // Copy Chat: the whole history as Markdown.
    QGuiApplication::clipboard()->clear();
    auto* copyChat = window->chatPanel()->findChild<QToolButton*>(QStringLiteral("copyChatButton"));
    QVERIFY(copyChat);
    QTest::mouseClick(copyChat, Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(!QGuiApplication::clipboard()->text().isEmpty(), kWaitMs);
    const QString markdown = QGuiApplication::clipboard()->text();
    QVERIFY(markdown.startsWith(QStringLiteral("**You:** ") + longUserText(0)));
    QVERIFY(markdown.contains(QStringLiteral("**You:** and the hall?")));
    QCOMPARE(markdown, window->chatPanel()->chatMarkdown());

    // Ctrl+F: a word of one message among 50,002, found, selected and scrolled to.
    QTest::keyClick(window.get(), Qt::Key_F, Qt::ControlModifier);
    QLineEdit* find = window->chatPanel()->findBar();
    QVERIFY(find->isVisible());
    QTest::keyClicks(find, QStringLiteral("MESSAGE 17:"));
    QTest::keyClick(find, Qt::Key_Return);
    QCOMPARE(chat->currentIndex().row(), 34);
    QVERIFY(chat->viewport()->rect().intersects(chat->visualRect(chat->currentIndex())));
    QCOMPARE(window->chatPanel()->statusText(),
             QStringLiteral("Message 35 of %1").arg(QLocale().toString(kTurns + 2)));
    QTest::keyClick(find, Qt::Key_Escape);
    QVERIFY(!find->isVisible());

    // Show tokens: the newest tokens, with their ids.
    QTest::keyClick(window.get(), Qt::Key_T, Qt::ControlModifier);
    TokenTextView* tokens = window->chatPanel()->transcript();
    QVERIFY(tokens->isVisible());
    QVERIFY(tokens->tokenCount() > restored.transcriptTokens + report.generatedTokens);
    QVERIFY(tokens->tokenId(tokens->tokenCount() - 1) >= 0);
    QVERIFY(tokens->toPlainText().contains(QStringLiteral("and the hall?")));
}

QTEST_MAIN(TestLongChat)
#include "test_long_chat.moc"
