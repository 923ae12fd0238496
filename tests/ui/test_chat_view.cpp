// The readable chat and its token view, driven like a user: a chat with a tool call and its
// result reads as "You" / "Assistant" / "Tool result" with no template markers; Show tokens (a
// click and Ctrl+T) shows the engine's tokens with their ids, positions and KV states; messages
// that left a tiny window fade in both views; a message and the whole chat copy as text and as
// Markdown.
#include <QtTest>

#include "chat_panel/chat_panel.h"
#include "chat_panel/chat_view.h"
#include "chat_panel/token_text_view.h"
#include "chat_panel/tool_result_box.h"
#include "main_window_fixture.h"
#include "tool_test_support.h"
#include "views/kv_cache_model.h"
#include "views/kv_cache_view.h"
#include "views/tools_editor.h"
#include "worker/engine_client.h"

#include <QClipboard>
#include <QGuiApplication>
#include <QPushButton>
#include <QTableView>
#include <QTextBlock>
#include <QToolButton>

#include <set>

using namespace sinkscope;
using namespace sinkscope::ui;
using namespace sinkscope::test;

namespace {

void clickLink(ChatView* view, const QString& href) {
    const QPoint point = linkPoint(view, href);
    QVERIFY2(!point.isNull(), qPrintable(href));
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, point);
}

QList<TurnRole> rolesOf(const QList<ChatMessage>& messages) {
    QList<TurnRole> roles;
    for (const ChatMessage& message : messages)
        roles << message.role;
    return roles;
}

// The positions the KV view holds, split into its sink rows and its ring.
struct KvPositions {
    std::set<qint64> sinks;
    std::set<qint64> window;
};

KvPositions kvPositions(const MainWindow& window) {
    const QAbstractItemModel* model = window.kvCacheView()->slotTable()->model();
    KvPositions held;
    for (int row = 0; row < model->rowCount(); ++row) {
        const qint64 position =
            model->index(row, 0).data(views::KvCacheModel::PositionRole).toLongLong();
        if (position < 0) continue;
        (row < window.sessionInfo().sinkSlots ? held.sinks : held.window).insert(position);
    }
    return held;
}

} // namespace

class TestChatView : public QObject, public MainWindowFixture {
    Q_OBJECT

private slots:
    void initTestCase();
    void init() { saveSettings(); }
    void toolChatReadsAsAChat();
    void showTokensShowsTheEnginesTokens();
    void earliestMessageFadesInBothViews();

private:
    QString m_needleModel;
};

void TestChatView::initTestCase() {
    setUpFolders();
    std::string error;
    m_needleModel = m_dir.filePath(QStringLiteral("needle.gguf"));
    QVERIFY2(
        writeSyntheticModel(smallSpec(true), QFile::encodeName(m_needleModel).toStdString(), error),
        error.c_str());
}

// A call, its result sent with the preset's canned one, and the reply after it.
void TestChatView::toolChatReadsAsAChat() {
    saveSettings([this](AppSettings& settings) {
        settings.modelPath = m_needleModel;
        settings.engine.kvWindow = 64;
        settings.limits.maxNewTokens = 32;
        settings.limits.calls = CallPolicy::Required;
        settings.limits.ignoreEos = false; // free-running text makes no calls
    });
    WindowPtr window = openWindow();
    QVERIFY(window);
    QSignalSpy sessions(window.get(), &MainWindow::sessionRebuilt);
    QVERIFY(window->toolsEditor()->choosePreset(QStringLiteral("Review sentiment")));
    for (QPushButton* button : window->toolsEditor()->findChildren<QPushButton*>())
        if (button->text() == QStringLiteral("Apply")) QTest::mouseClick(button, Qt::LeftButton);
    QVERIFY(sessions.wait(kWaitMs));

    ChatPanel* panel = window->chatPanel();
    QSignalSpy replies(window.get(), &MainWindow::replyFinished);
    const QString review = QStringLiteral("The blender is loud but it works great");
    typeMessage(*window, review);
    const GenerationReport call = waitForReply(replies);
    QCOMPARE(call.reason, StopReason::ToolCall);
    QTRY_VERIFY_WITH_TIMEOUT(!window->engine()->isBusy(), kWaitMs);
    ToolResultBox* box = panel->toolResultBox();
    QTest::mouseClick(box->cannedButton(), Qt::LeftButton);
    const QString result = box->editor()->toPlainText();
    QTest::mouseClick(box->sendButton(), Qt::LeftButton);
    QVERIFY(waitForReply(replies).reason != StopReason::Failed);

    ChatView* chat = panel->chatView();
    QVERIFY(chat->isVisible());
    QVERIFY(!panel->transcript()->isVisible());
    const QList<ChatMessage>& messages = chat->messages();
    QCOMPARE(rolesOf(messages), (QList<TurnRole>{TurnRole::User, TurnRole::Assistant,
                                                 TurnRole::ToolResult, TurnRole::Assistant}));
    QCOMPARE(messages[0].text, review);
    QCOMPARE(messages[1].calls.size(), call.calls.size());
    QCOMPARE(messages[1].calls[0].name, QStringLiteral("classify_sentiment"));
    const QString text = chatText(*chat);
    for (const QString& shown :
         {QStringLiteral("You"), QStringLiteral("Assistant"), QStringLiteral("Tool result"), review,
          QStringLiteral("Call classify_sentiment")})
        QVERIFY2(text.contains(shown), qPrintable(shown + u'\n' + text));
    QVERIFY2(text.contains(messages[2].text.trimmed()), qPrintable(text));
    for (const std::string& marker : kNeedleMarkers)
        QVERIFY2(!text.contains(QString::fromStdString(marker)), qPrintable(text));
    // The token view still has them: nothing was lost, only hidden.
    QVERIFY(panel->transcript()->toPlainText().contains(QStringLiteral("<tool_call>")));

    // Copy a message with its header's link; the whole chat with the header's button.
    QGuiApplication::clipboard()->clear();
    clickLink(chat, QStringLiteral("copy:0"));
    QCOMPARE(QGuiApplication::clipboard()->text(), review);
    clickLink(chat, QStringLiteral("copy:2"));
    QCOMPARE(QGuiApplication::clipboard()->text(), messages[2].text.trimmed());
    auto* copyChat = panel->findChild<QToolButton*>(QStringLiteral("copyChatButton"));
    QVERIFY(copyChat);
    QTest::mouseClick(copyChat, Qt::LeftButton); // made off the GUI thread
    QTRY_COMPARE_WITH_TIMEOUT(QGuiApplication::clipboard()->text(), panel->chatMarkdown(), kWaitMs);
    const QString markdown = QGuiApplication::clipboard()->text();

    // One section per message, in order; the call and the result as fenced JSON.
    const QStringList sections = markdown.trimmed().split(QStringLiteral("\n\n"));
    const qsizetype you = sections.indexOf(QStringLiteral("**You:** ") + review);
    QCOMPARE(you, 0);
    QVERIFY(sections[1].startsWith(QStringLiteral("**Assistant:**")));
    const qsizetype callBlock = sections.indexOf(
        QStringLiteral("```json\n{\"name\": \"classify_sentiment\", \"arguments\": %1}\n```")
            .arg(call.calls[0].argumentsJson));
    QVERIFY2(callBlock == 2 || (callBlock == 1 && messages[1].text.isEmpty()),
             qPrintable(markdown));
    const qsizetype resultHeader = sections.indexOf(QStringLiteral("**Tool result:**"));
    QCOMPARE(resultHeader, callBlock + 1);
    QCOMPARE(sections[resultHeader + 1],
             QStringLiteral("```json\n%1\n```").arg(messages[2].text.trimmed()));
    QVERIFY(sections[resultHeader + 2].startsWith(QStringLiteral("**Assistant:**")));
    for (const std::string& marker : kNeedleMarkers)
        QVERIFY2(!markdown.contains(QString::fromStdString(marker)), qPrintable(markdown));
    QVERIFY(!result.isEmpty());
}

// Window 16: Show tokens by a click and by Ctrl+T; each token as the worker streamed it, with its
// id and position, and its state as the KV view holds it.
void TestChatView::showTokensShowsTheEnginesTokens() {
    WindowPtr window = openWindow();
    QVERIFY(window);
    ChatPanel* panel = window->chatPanel();
    QSignalSpy batches(window->engine(), &EngineClient::batchReady);
    QSignalSpy replies(window.get(), &MainWindow::replyFinished);
    typeMessage(*window, QStringLiteral("Hello there"));
    QVERIFY(waitForReply(replies).reason != StopReason::Failed);
    QList<StreamPiece> pieces;
    for (const QList<QVariant>& batch : batches)
        pieces << batch.at(0).value<EngineBatch>().pieces;
    QVERIFY(pieces.size() > 40);

    auto* button = panel->findChild<QToolButton*>(QStringLiteral("showTokensButton"));
    QVERIFY(button);
    QTest::mouseClick(button, Qt::LeftButton);
    TokenTextView* tokens = panel->transcript();
    QVERIFY(panel->showsTokens());
    QVERIFY(tokens->isVisible());
    QVERIFY(!panel->chatView()->isVisible());

    QCOMPARE(tokens->tokenCount(), pieces.size());
    const KvPositions held = kvPositions(*window);
    QCOMPARE(qsizetype(held.window.size()), 16);
    int evicted = 0;
    for (const StreamPiece& piece : pieces) {
        const qint64 index = piece.transcriptIndex;
        QCOMPARE(tokens->tokenId(index), piece.tokenId);
        QCOMPARE(tokens->tokenPosition(index), piece.position);
        QVERIFY(tokens->tokenText(index).isEmpty() ||
                piece.text.endsWith(tokens->tokenText(index)));
        const QString tip = tokens->tokenToolTip(index);
        QVERIFY2(tip.contains(QStringLiteral("id %1").arg(piece.tokenId)) &&
                     tip.contains(QStringLiteral("position %1").arg(piece.position)),
                 qPrintable(tip));
        const TokenState state = tokens->tokenState(index);
        QCOMPARE(state == TokenState::Window, held.window.count(piece.position) == 1);
        QCOMPARE(state == TokenState::Sink, held.sinks.count(piece.position) == 1);
        evicted += state == TokenState::Evicted;
        // Neighbours differ in shade: the boundary between two tokens shows.
        if (index > 0 && tokens->tokenState(index - 1) == state)
            QVERIFY(tokens->tokenBackground(index) != tokens->tokenBackground(index - 1));
    }
    QVERIFY(evicted > 0);
    QVERIFY(tokens->tokenBackground(0) != tokens->tokenBackground(pieces.size() - 1));

    // Ctrl+T back to the chat and again to the tokens.
    QTest::keyClick(window.get(), Qt::Key_T, Qt::ControlModifier);
    QVERIFY(!panel->showsTokens());
    QVERIFY(panel->chatView()->isVisible());
    QTest::keyClick(window.get(), Qt::Key_T, Qt::ControlModifier);
    QVERIFY(panel->showsTokens());
    QVERIFY(tokens->isVisible());
}

// Window 16, two turns of 40-token replies: the first message left the window; it is faded in
// the chat and its tokens in the token view. The last reply is only partly out: faded whole, its
// header says partly, its last tokens are in the window. A "Tokens" link shows a message's tokens,
// highlighted.
void TestChatView::earliestMessageFadesInBothViews() {
    WindowPtr window = openWindow();
    QVERIFY(window);
    ChatPanel* panel = window->chatPanel();
    QSignalSpy replies(window.get(), &MainWindow::replyFinished);
    typeMessage(*window, QStringLiteral("first"));
    QVERIFY(waitForReply(replies).reason != StopReason::Failed);
    typeMessage(*window, QStringLiteral("second"));
    QVERIFY(waitForReply(replies).reason != StopReason::Failed);

    ChatView* chat = panel->chatView();
    const QList<ChatMessage>& messages = chat->messages();
    QCOMPARE(messages.size(), 4);
    QVERIFY(messages[0].hasTokens());
    QVERIFY(chat->isFaded(0));
    QVERIFY(chat->isFaded(3));
    const QString text = chatText(*chat);
    QVERIFY2(text.contains(QStringLiteral("You  · left the KV window")) &&
                 text.contains(QStringLiteral("Assistant  · partly left the KV window")),
             qPrintable(text));
    TokenTextView* tokens = panel->transcript();
    QVERIFY(tokens->fadedBefore() >= messages[0].endToken);
    for (qint64 index = messages[0].firstToken; index < messages[0].endToken; ++index)
        QCOMPARE(tokens->tokenState(index), TokenState::Evicted);
    QCOMPARE(tokens->tokenState(messages[3].endToken - 1), TokenState::Window);

    clickLink(chat, QStringLiteral("tokens:2"));
    QVERIFY(panel->showsTokens());
    QCOMPARE(tokens->highlightedToken(), messages[2].firstToken);
}

QTEST_MAIN(TestChatView)
#include "test_chat_view.moc"
