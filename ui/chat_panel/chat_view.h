// The readable chat: each message in a box with who spoke ("You", "Assistant", "Tool result"),
// its text, an assistant's calls as cards and a reply's statistics; template markers and control
// tokens are never shown (the token view shows them). Finished turns come from the conversation
// the worker reports; a reply being generated shows its streamed text without control tokens or
// call markers (streamed_reply.h). The part of a message whose tokens have left the KV window is
// drawn faded, character by character (message_tokens.h); when the window moves, only the
// messages whose faded part changed are drawn anew. Each message's header links copy it or show
// its tokens; the context menu has the same and the panel's actions.
#pragma once

#include "chat_panel/chat_message.h"
#include "chat_panel/message_tokens.h"
#include "chat_panel/streamed_reply.h"

#include <QList>
#include <QPair>
#include <QTextBrowser>

class QTextFrame;

namespace sinkscope::ui {

class ChatView : public QTextBrowser {
    Q_OBJECT
public:
    explicit ChatView(QWidget* parent = nullptr);

    void clearChat();
    // The turns as the worker reports them replace the messages; what only the chat knows (a
    // reply's confidence, call error and statistics) stays with its message.
    void setConversation(const QList<TurnView>& turns, qint64 transcriptEnd);
    // A message the user sent (their text or a tool result), shown before its turn is reported.
    void addSent(TurnRole role, const QString& text);
    // Tokens fed to the session: generated ones extend the assistant's message being streamed
    // (control tokens and call markers hidden), the others belong to the last message sent.
    void appendPieces(const QList<StreamPiece>& pieces);
    // The reply ended: its calls as reported (with their attribution), their confidence, a call
    // error and the statistics go with the last assistant message.
    void finishReply(const QList<ToolCallView>& calls, double confidence, const QString& callError,
                     const QString& footer);
    void appendNote(const QString& note); // between messages, e.g. "the model changed"
    void setFadedBefore(qint64 index);    // transcript tokens [0, index) left the window
    // How the model writes its calls: a streamed reply hides their markers and what they enclose.
    void setCallMarkers(const CallMarkers& markers) { m_callMarkers = markers; }
    // The transcript's tokens as a rebuilt session lists them (a saved session, another model's
    // tokenisation): their text places the turns' text on them.
    void setTranscriptTexts(const QStringList& texts);
    // Actions the context menu offers after a message's own (the panel's Show tokens, Copy chat).
    void setMenuActions(const QList<QAction*>& actions) { m_menuActions = actions; }

    const QList<ChatMessage>& messages() const { return m_messages; }
    bool isFaded(qsizetype message) const; // some of its tokens left the window
    // The characters of its (trimmed) text drawn faded; all of them when some tokens left and
    // the text cannot be placed on its tokens.
    qsizetype fadedLength(qsizetype message) const;
    // Where its text starts in the document; -1 when it shows none.
    int textPosition(qsizetype message) const;
    qsizetype messageAt(const QPoint& viewportPoint) const;  // -1 between messages
    qsizetype messageAtPosition(int documentPosition) const; // -1 between messages
    // Where the message's box is drawn in the viewport (scrolled into view first).
    QRect messageRect(qsizetype message);
    void copyMessage(qsizetype message) const; // its plain text to the clipboard

signals:
    void viewTokensRequested(qint64 firstToken, qint64 endToken);
    void toolClicked(const QString& tool);

protected:
    void contextMenuEvent(QContextMenuEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    // How much of a message is drawn faded: the first `chars` characters of its text, and its
    // box, header, cards and footer too when all its tokens left (or when some did and its text
    // cannot be placed on them), with a note in its header.
    struct Fade {
        enum class Left { None, Partly, Wholly };
        Left left = Left::None;
        bool box = false;
        qsizetype chars = 0;
        bool operator==(const Fade&) const = default;
    };

    Fade fadeOf(qsizetype message) const;
    void render();                       // the whole document anew
    void renderMessage(qsizetype index); // only that message's box
    void layOutLast();                   // places the last message's text on its tokens
    void fill(QTextCursor& cursor, qsizetype message);
    void insertNote(QTextCursor& cursor, const QString& note);
    void onLink(const QUrl& url);
    void viewTokens(qsizetype message); // asks for its tokens, when it has them
    bool isScrolledToBottom() const;

    QList<ChatMessage> m_messages;
    QList<QPair<qsizetype, QString>> m_notes; // (messages before it, text)
    QList<QTextFrame*> m_frames;              // [m_messages] each message's box
    QList<Fade> m_fades;                      // [m_messages] as last drawn
    QList<TextOnTokens> m_texts;              // [m_messages] each one's text on its tokens
    TranscriptTexts m_tokenTexts;
    QList<QAction*> m_menuActions;
    CallMarkers m_callMarkers;
    StreamedReply m_reply;    // the reply streaming, while m_streaming
    bool m_streaming = false; // the last message is that reply
    qint64 m_fadedBefore = 0;
};

} // namespace sinkscope::ui
