// The chat: the readable conversation (ChatView) or, with Show tokens, the pinned sink block and
// the transcript token by token (TokenTextView) with a card for each tool call; the box for a
// call's result, the find bar, and the input with Send / Stop / New chat. It shows what it is
// given; MainWindow talks to the engine and feeds the token view (transcript()), whose fading the
// readable view follows.
#pragma once

#include "views/live_label.h"
#include "worker/engine_types.h"

#include <QWidget>

class QAction;
class QLabel;
class QLineEdit;
class QPushButton;

namespace sinkscope::ui {

class ChatView;
class MessageInput;
class TokenTextView;
class ToolResultBox;

class ChatPanel : public QWidget {
    Q_OBJECT
public:
    explicit ChatPanel(QWidget* parent = nullptr);

    ChatView* chatView() const { return m_chatView; }
    TokenTextView* transcript() const { return m_transcript; }
    TokenTextView* sinkBlock() const { return m_sinkBlock; }
    MessageInput* input() const { return m_input; }
    ToolResultBox* toolResultBox() const { return m_resultBox; }
    QPushButton* sendButton() const { return m_send; }
    QPushButton* stopButton() const { return m_stop; }
    QPushButton* newChatButton() const { return m_newChat; }
    QString statusText() const;
    // Checkable (Ctrl+T): the token view instead of the readable chat. For the View menu too.
    QAction* showTokensAction() const { return m_showTokensAction; }
    // Copy Chat as Markdown (Ctrl+Shift+C), made off the GUI thread. For the Chat or Edit menu
    // too.
    QAction* copyChatAction() const { return m_copyChatAction; }
    // Find in Chat (Ctrl+F): the find bar above the input; Enter finds the next older message
    // holding its text (then wraps to the newest) and selects it.
    QAction* findAction() const { return m_findAction; }
    QLineEdit* findBar() const { return m_findBar; }
    bool showsTokens() const;
    // The readable chat as Markdown (chat_markdown.h): what File > Export Chat… writes.
    QString chatMarkdown() const;

    void setGenerating(bool generating);
    void setReady(bool ready); // a model is loaded
    void setStatus(const QString& text);
    void showPrefix(const SessionInfo& session); // BOS and the sink block, sinks coloured
    void appendPieces(const QList<StreamPiece>& pieces);
    void showProgress(const GenerationProgress& progress);
    // The reply's statistics, and its calls as cards; `cannedResult` is offered for the calls.
    void finishReply(const GenerationReport& report, const QString& cannedResult = {});
    // A new session; after another model the shown transcript is kept as text (sealed).
    void showSession(const SessionInfo& session);
    // A saved session rebuilt (SessionInfo::restored): the chat shown is replaced by its
    // transcript, token by token, with a card for each call.
    void showRestoredSession(const SessionInfo& session);
    void clearConversation();
    void appendNote(const QString& note);

    // Programmatic send, as if typed and sent (screenshot mode).
    void sendText(const QString& text);

signals:
    void sendRequested(const QString& text);
    void stopRequested();
    void newChatRequested();
    void toolResultRequested(const QString& json);
    void toolClicked(const QString& tool); // a tool named in a card's attribution

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void submit();
    void refreshButtons();
    void setShowTokens(bool show);
    void viewTokens(qint64 firstToken, qint64 endToken); // the token view, scrolled to them
    void copyChat();
    void showFindBar();
    void findNext();

    TokenTextView* m_sinkBlock = nullptr;
    QLabel* m_sinkCaption = nullptr;
    TokenTextView* m_transcript = nullptr;
    ChatView* m_chatView = nullptr;
    QAction* m_showTokensAction = nullptr;
    QAction* m_copyChatAction = nullptr;
    QAction* m_findAction = nullptr;
    QLineEdit* m_findBar = nullptr;
    views::LiveLabel* m_status = nullptr;
    ToolResultBox* m_resultBox = nullptr;
    MessageInput* m_input = nullptr;
    QPushButton* m_send = nullptr;
    QPushButton* m_stop = nullptr;
    QPushButton* m_newChat = nullptr;
    bool m_generating = false;
    bool m_ready = false;
    int m_sinksUsed = 0; // stream positions [0, m_sinksUsed) are pinned
};

} // namespace sinkscope::ui
