// The readable chat's text on its tokens, driven like a user: with a tiny KV window the part of
// each message whose tokens the cache no longer holds is drawn faded, character for character, at
// every streamed step, also for turns the template rendered together (a saved session opened
// again); when the window moves, only the messages whose faded part changed are drawn anew; and a
// Qwen-style reply, whose <tool_call> markers are user-defined tokens that read as text, never
// shows them while it streams.
#include <QtTest>

#include "chat_panel/chat_panel.h"
#include "chat_panel/chat_view.h"
#include "chat_panel/token_text_view.h"
#include "main_window_fixture.h"
#include "tool_test_support.h"
#include "views/kv_cache_model.h"
#include "views/kv_cache_view.h"
#include "views/view_colors.h"
#include "worker/engine_client.h"

#include <QTableView>
#include <QTextDocument>

#include <set>

using namespace sinkscope;
using namespace sinkscope::ui;
using namespace sinkscope::test;

namespace {

// ChatML with the tools in the system turn and Qwen2.5's call blocks.
constexpr const char* kQwenStyleTemplate = R"({%- if tools %}
{{- '<|im_start|>system\nTools:' }}
{%- for tool in tools %}
{{- '\n' + (tool | tojson) }}
{%- endfor %}
{{- '<|im_end|>\n' }}
{%- endif %}
{%- for message in messages %}
{%- if message.role == 'assistant' %}
{{- '<|im_start|>assistant\n' + message.content }}
{%- for call in message.tool_calls or [] %}
{{- '\n<tool_call>\n' + (call.function | tojson) + '\n</tool_call>' }}
{%- endfor %}
{{- '<|im_end|>\n' }}
{%- else %}
{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %})";

const QString kLongMessage =
    QStringLiteral("turn on the light in the kitchen and send the door code to the hall");
// Longer than the window in tokens (the synthetic vocabulary spends one or two letters a token).
const QString kLongerMessage = QStringLiteral(
    "find the door code for the kitchen, then set the light in the hall and what is the time in "
    "the kitchen now; send it to the door");

struct Token {
    QString text;
    qint64 position = -1; // in the stream; -1 when no longer in it
};

// The transcript's tokens by index, as the worker streamed them (a later piece at an earlier
// index writes the transcript anew from there).
void addPieces(QList<Token>& tokens, const QList<StreamPiece>& pieces) {
    for (const StreamPiece& piece : pieces) {
        tokens.resize(qMin(tokens.size(), piece.transcriptIndex));
        tokens.append({piece.text, piece.position});
    }
}

// The positions whose keys the KV view holds.
std::set<qint64> heldPositions(const MainWindow& window) {
    const QAbstractItemModel* model = window.kvCacheView()->slotTable()->model();
    std::set<qint64> held;
    for (int row = 0; row < model->rowCount(); ++row)
        held.insert(model->index(row, 0).data(views::KvCacheModel::PositionRole).toLongLong());
    return held;
}

// The messages from `first` on as drawn, formats included.
QStringList drawnFrom(const ChatView& chat, qsizetype first) {
    QStringList drawn;
    for (qsizetype message = first; message < chat.messages().size(); ++message)
        drawn << chat.messageDocument(message)->toHtml();
    return drawn;
}

// Whether the message's character at `position` of its document is drawn faded.
bool drawnFaded(const ChatView& chat, qsizetype message, int position) {
    QTextCursor cursor(const_cast<QTextDocument*>(chat.messageDocument(message)));
    cursor.setPosition(position + 1); // the format of the character before the cursor
    const QPalette& colors = chat.palette();
    return cursor.charFormat().foreground().color() ==
           views::fadedColor(colors.color(QPalette::Text), colors);
}

// Each message's text against the cache: the characters of the tokens the KV view no longer
// holds are drawn faded, the others not. Messages that share a token range (turns rendered
// together) are found in its text one after the other. Returns what differs, "" when nothing;
// `split` counts the messages found with the boundary inside their text, `shared` those of them
// in a range other messages share.
QString checkFades(const MainWindow& window, const QList<Token>& tokens, int& split, int& shared) {
    const ChatView& chat = *window.chatPanel()->chatView();
    const std::set<qint64> held = heldPositions(window);
    const QList<ChatMessage>& messages = chat.messages();
    qsizetype searchFrom = 0;
    for (qsizetype i = 0; i < messages.size(); ++i) {
        const ChatMessage& message = messages[i];
        const QString shown = message.text.trimmed();
        if (!message.hasTokens() || shown.isEmpty()) continue;
        const bool sharesRange =
            (i > 0 && messages[i - 1].firstToken == message.firstToken) ||
            (i + 1 < messages.size() && messages[i + 1].firstToken == message.firstToken);
        if (i == 0 || messages[i - 1].firstToken != message.firstToken) searchFrom = 0;
        if (message.endToken > tokens.size())
            return QStringLiteral("message %1: unknown tokens").arg(i);
        QString joined;
        QList<qsizetype> ends;
        qint64 evicted = 0;
        for (qint64 index = message.firstToken; index < message.endToken; ++index) {
            joined += tokens[index].text;
            ends << joined.size();
            if (held.count(tokens[index].position) == 1) continue;
            if (evicted != index - message.firstToken)
                return QStringLiteral("message %1: token %2 evicted after a held one")
                    .arg(i)
                    .arg(index);
            ++evicted;
        }
        const qsizetype at = joined.indexOf(shown, searchFrom);
        if (at < 0 && message.role == TurnRole::User)
            return QStringLiteral("message %1: its text is not in its tokens").arg(i);
        if (at >= 0) searchFrom = at + shown.size();
        // A text not found in its tokens (a reply's text around a call) fades whole.
        const qsizetype expected =
            at < 0
                ? (evicted > 0 ? shown.size() : 0)
                : std::clamp<qsizetype>(evicted > 0 ? ends[evicted - 1] - at : 0, 0, shown.size());
        if (chat.fadedLength(i) != expected)
            return QStringLiteral("message %1: %2 characters faded, %3 expected")
                .arg(i)
                .arg(chat.fadedLength(i))
                .arg(expected);
        const int start = chat.textPosition(i);
        QTextCursor text(const_cast<QTextDocument*>(chat.messageDocument(i)));
        text.setPosition(start);
        text.setPosition(start + int(shown.size()), QTextCursor::KeepAnchor);
        if (text.selectedText() != shown)
            return QStringLiteral("message %1: its text is not where the chat says").arg(i);
        for (qsizetype c = 0; c < shown.size(); ++c)
            if (drawnFaded(chat, i, start + int(c)) != (c < expected))
                return QStringLiteral("message %1: character %2 of \"%3\" drawn %4")
                    .arg(i)
                    .arg(c)
                    .arg(shown, c < expected ? QStringLiteral("live") : QStringLiteral("faded"));
        if (at >= 0 && expected > 0 && expected < shown.size()) {
            ++split;
            shared += sharesRange;
        }
    }
    return {};
}

} // namespace

class TestChatFade : public QObject, public MainWindowFixture {
    Q_OBJECT

private slots:
    void initTestCase();
    void init() { saveSettings(); }
    void fadedTextFollowsTheEvictedTokens();
    void turnsRenderedTogetherFadeByToken();
    void onlyMessagesWhoseFadeChangedAreRedrawn();
    void streamedCallMarkersStayHidden();

private:
    QString m_needleModel;
    QString m_qwenModel;
};

void TestChatFade::initTestCase() {
    setUpFolders();
    std::string error;
    m_needleModel = m_dir.filePath(QStringLiteral("needle.gguf"));
    QVERIFY2(
        writeSyntheticModel(smallSpec(true), QFile::encodeName(m_needleModel).toStdString(), error),
        error.c_str());
    SyntheticSpec qwen = smallSpec(false);
    qwen.extraSpecialTokens = {"<|im_start|>", "<|im_end|>"};
    qwen.userDefinedTokens = {"<tool_call>", "</tool_call>"};
    qwen.chatTemplate = kQwenStyleTemplate;
    m_qwenModel = m_dir.filePath(QStringLiteral("qwen-style.gguf"));
    QVERIFY2(writeSyntheticModel(qwen, QFile::encodeName(m_qwenModel).toStdString(), error),
             error.c_str());
}

// Window 32, two turns of 6-token replies on the synthetic model, checked after every batch the
// window takes; at the end the window's edge lies inside the second message's text (the closing
// markers, the reply and its closing take fewer than 32 tokens).
void TestChatFade::fadedTextFollowsTheEvictedTokens() {
    saveSettings([](AppSettings& settings) {
        settings.engine.kvWindow = 32;
        settings.limits.maxNewTokens = 6;
    });
    WindowPtr window = openWindow();
    QVERIFY(window);
    QList<Token> tokens;
    QStringList failures;
    int split = 0;
    int shared = 0;
    int checks = 0;
    // After the window's own handler: the chat and the KV view show the batch.
    connect(window->engine(), &EngineClient::batchReady, this, [&](const EngineBatch& batch) {
        addPieces(tokens, batch.pieces);
        ++checks;
        const QString failure = checkFades(*window, tokens, split, shared);
        if (!failure.isEmpty()) failures << failure;
    });
    QSignalSpy replies(window.get(), &MainWindow::replyFinished);
    typeMessage(*window, kLongMessage);
    QVERIFY(waitForReply(replies).reason != StopReason::Failed);
    typeMessage(*window, kLongerMessage);
    QVERIFY(waitForReply(replies).reason != StopReason::Failed);
    QVERIFY2(failures.isEmpty(), qPrintable(failures.join(u'\n')));
    QVERIFY(checks > 0); // how many batches the turns took depends on the machine
    ChatView* chat = window->chatPanel()->chatView();
    QCOMPARE(chat->fadedLength(0), kLongMessage.size());
    QVERIFY(chat->fadedLength(2) > 0 && chat->fadedLength(2) < kLongerMessage.size());
    split = 0;
    QCOMPARE(checkFades(*window, tokens, split, shared), QString());
    QCOMPARE(split, 1);
}

// A saved session opened again: the template renders its turns together (one token range for
// them all) and the window holds the last 48 tokens, which start inside the second message. A
// new message then slides the window across those turns, checked after every batch.
void TestChatFade::turnsRenderedTogetherFadeByToken() {
    saveSettings([this](AppSettings& settings) {
        settings.modelPath = m_qwenModel;
        settings.engine.kvWindow = 48;
        settings.limits.maxNewTokens = 6;
    });
    WindowPtr window = openWindow();
    QVERIFY(window);
    QCOMPARE(window->sessionInfo().chatLayout, QStringLiteral("template"));
    QSignalSpy replies(window.get(), &MainWindow::replyFinished);
    typeMessage(*window, kLongMessage);
    QVERIFY(waitForReply(replies).reason != StopReason::Failed);
    typeMessage(*window, kLongerMessage);
    QVERIFY(waitForReply(replies).reason != StopReason::Failed);
    QTRY_VERIFY_WITH_TIMEOUT(!window->engine()->isBusy(), kWaitMs);

    const QString path = m_dir.filePath(QStringLiteral("together.sinkscope-session"));
    window->sessionActions()->setFileChooser(
        [path](SessionActions::Choice, const QString&,
               const std::function<void(const QString&)>& chosen) { chosen(path); });
    QVERIFY(waitForModelHash(*window, kWaitMs));
    window->sessionActions()->saveWithDialog();
    QVERIFY(QFileInfo::exists(path));
    QSignalSpy sessions(window.get(), &MainWindow::sessionRebuilt);
    window->sessionActions()->openFile(path);
    SessionInfo restored;
    while (restored.reason != QStringLiteral("Session restored")) {
        if (sessions.isEmpty()) QVERIFY(sessions.wait(kWaitMs));
        restored = sessions.takeFirst().at(0).value<SessionInfo>();
    }
    QVERIFY(restored.restored);
    QTRY_VERIFY_WITH_TIMEOUT(!window->engine()->isBusy(), kWaitMs);
    ChatView* chat = window->chatPanel()->chatView();
    QCOMPARE(chat->messages().size(), 4);
    for (const ChatMessage& message : chat->messages()) {
        QCOMPARE(message.firstToken, 0);
        QCOMPARE(message.endToken, restored.transcriptTokens);
    }
    QList<Token> tokens;
    for (qsizetype index = 0; index < restored.transcriptPieces.size(); ++index)
        tokens.append({restored.transcriptPieces[index], restored.layout.positionOf(index)});
    QTRY_COMPARE_WITH_TIMEOUT(window->chatPanel()->transcript()->fadedBefore(),
                              restored.layout.transcriptBase, kWaitMs);
    int split = 0;
    int shared = 0;
    QCOMPARE(checkFades(*window, tokens, split, shared), QString());
    QCOMPARE(shared, 1);
    QVERIFY(chat->fadedLength(2) > 0 && chat->fadedLength(2) < kLongerMessage.size());

    QStringList failures;
    connect(window->engine(), &EngineClient::batchReady, this, [&](const EngineBatch& batch) {
        addPieces(tokens, batch.pieces);
        const QString failure = checkFades(*window, tokens, split, shared);
        if (!failure.isEmpty()) failures << failure;
    });
    typeMessage(*window, QStringLiteral("and the light"));
    QVERIFY(waitForReply(replies).reason != StopReason::Failed);
    QVERIFY2(failures.isEmpty(), qPrintable(failures.join(u'\n')));
}

// The window's edge moved by hand across the first message's tokens: only that message's row
// changes, and an edge that fades no other character changes nothing; the others draw the same.
void TestChatFade::onlyMessagesWhoseFadeChangedAreRedrawn() {
    WindowPtr window = openWindow();
    QVERIFY(window);
    QSignalSpy replies(window.get(), &MainWindow::replyFinished);
    typeMessage(*window, kLongMessage);
    QVERIFY(waitForReply(replies).reason != StopReason::Failed);
    typeMessage(*window, QStringLiteral("and the hall"));
    QVERIFY(waitForReply(replies).reason != StopReason::Failed);
    QTRY_VERIFY_WITH_TIMEOUT(!window->engine()->isBusy(), kWaitMs);

    ChatView* chat = window->chatPanel()->chatView();
    const QList<ChatMessage> messages = chat->messages();
    QCOMPARE(messages.size(), 4);
    const ChatMessage& first = messages[0];
    chat->setFadedBefore(first.firstToken); // nothing faded
    QVERIFY(!chat->isFaded(0));
    const QStringList rest = drawnFrom(*chat, 1);
    QSignalSpy changes(chat->transcriptModel(), &QAbstractItemModel::dataChanged);
    QList<qsizetype> steps{0};
    for (qint64 edge = first.firstToken + 1; edge <= first.endToken; ++edge) {
        changes.clear();
        chat->setFadedBefore(edge);
        const qsizetype faded = chat->fadedLength(0);
        for (qsizetype other = 1; other < messages.size(); ++other)
            QVERIFY(!chat->isFaded(other));
        // The header says when the message starts and finishes leaving.
        const bool headerChanged = edge == first.firstToken + 1 || edge == first.endToken;
        if (faded == steps.constLast() && !headerChanged) {
            QCOMPARE(changes.count(), 0);
            continue;
        }
        QVERIFY(!changes.isEmpty());
        for (const QList<QVariant>& change : changes) {
            QCOMPARE(change.at(0).toModelIndex().row(), 0);
            QCOMPARE(change.at(1).toModelIndex().row(), 0);
        }
        if (faded != steps.constLast()) steps << faded;
    }
    QCOMPARE(steps.constLast(), first.text.trimmed().size());
    QVERIFY(steps.size() > 3); // the text faded in steps, token by token
    QCOMPARE(drawnFrom(*chat, 1), rest);
}

// A Qwen-style model (its <tool_call> and </tool_call> user-defined tokens) with a call required:
// at no streamed step does the chat show a marker or the call's JSON; it says a call is being
// written, and once the reply ends the call's card shows it.
void TestChatFade::streamedCallMarkersStayHidden() {
    saveSettings([this](AppSettings& settings) {
        settings.modelPath = m_qwenModel;
        settings.engine.kvWindow = 64;
        settings.limits.maxNewTokens = 48;
        settings.limits.calls = CallPolicy::Required;
        settings.limits.ignoreEos = false; // free-running text makes no calls
    });
    WindowPtr window = openWindow();
    QVERIFY(window);
    QCOMPARE(window->sessionInfo().chatTemplate.callFormat.open, std::string("<tool_call>"));
    ChatView* chat = window->chatPanel()->chatView();
    // The chat's text after each batch, and whether the reply streamed so far had a call open
    // then: how the batches fall depends on timing, so the placeholder is checked where a batch
    // ended inside the call (test_streamed_reply checks it piece by piece).
    QList<std::pair<QString, bool>> shown;
    bool markerPiece = false;
    QString streamed;
    connect(window->engine(), &EngineClient::batchReady, this, [&](const EngineBatch& batch) {
        for (const StreamPiece& piece : batch.pieces) {
            markerPiece = markerPiece || (piece.generated && !piece.control &&
                                          piece.text == QStringLiteral("<tool_call>"));
            if (piece.generated) streamed += piece.text;
        }
        const qsizetype opened = streamed.lastIndexOf(QStringLiteral("<tool_call>"));
        const bool insideCall =
            opened >= 0 && streamed.indexOf(QStringLiteral("</tool_call>"), opened) < 0;
        shown.append({chatText(*chat), insideCall});
    });
    QSignalSpy replies(window.get(), &MainWindow::replyFinished);
    typeMessage(*window, QStringLiteral("what time is it"));
    const GenerationReport report = waitForReply(replies);
    QCOMPARE(report.reason, StopReason::ToolCall);
    QVERIFY2(markerPiece, "no <tool_call> piece streamed as text");
    for (const auto& [text, insideCall] : shown) {
        for (const QString& hidden : {QStringLiteral("<tool_call>"), QStringLiteral("</tool_call>"),
                                      QStringLiteral("tool_call"), QStringLiteral("\"name\""),
                                      QStringLiteral("<|im_end|>")})
            QVERIFY2(!text.contains(hidden), qPrintable(text));
        if (insideCall)
            QVERIFY2(text.contains(QStringLiteral("Writing a tool call…")), qPrintable(text));
    }
    const QString done = chatText(*chat);
    QVERIFY2(done.contains(QStringLiteral("Call get_time")), qPrintable(done));
    QVERIFY(!done.contains(QStringLiteral("Writing a tool call")));
    QVERIFY(!done.contains(QStringLiteral("tool_call")));
    QVERIFY(
        window->chatPanel()->transcript()->toPlainText().contains(QStringLiteral("<tool_call>")));
}

QTEST_MAIN(TestChatFade)
#include "test_chat_fade.moc"
