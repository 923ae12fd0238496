// The chat: the pinned sink block, the transcript streaming token by token with a card for each
// tool call, the box for a call's result, and the input with Send / Stop / New chat. It shows
// what it is given; MainWindow talks to the engine.
#pragma once

#include "worker/engine_types.h"

#include <QWidget>

class QLabel;
class QPushButton;

namespace sinkscope::ui {

class MessageInput;
class TokenTextView;
class ToolResultBox;

class ChatPanel : public QWidget {
    Q_OBJECT
public:
    explicit ChatPanel(QWidget* parent = nullptr);

    TokenTextView* transcript() const { return m_transcript; }
    TokenTextView* sinkBlock() const { return m_sinkBlock; }
    MessageInput* input() const { return m_input; }
    ToolResultBox* toolResultBox() const { return m_resultBox; }
    QPushButton* sendButton() const { return m_send; }
    QPushButton* stopButton() const { return m_stop; }
    QPushButton* newChatButton() const { return m_newChat; }
    QString statusText() const;

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

private:
    void submit();
    void refreshButtons();

    TokenTextView* m_sinkBlock = nullptr;
    QLabel* m_sinkCaption = nullptr;
    TokenTextView* m_transcript = nullptr;
    QLabel* m_status = nullptr;
    ToolResultBox* m_resultBox = nullptr;
    MessageInput* m_input = nullptr;
    QPushButton* m_send = nullptr;
    QPushButton* m_stop = nullptr;
    QPushButton* m_newChat = nullptr;
    bool m_generating = false;
    bool m_ready = false;
};

} // namespace sinkscope::ui
