// The readable chat: a list of messages (transcript/transcript_model.h), each drawn in a box with
// who spoke, its text, an assistant's calls as cards and a reply's statistics
// (transcript/message_document.h); template markers and control tokens are never shown (the
// token view shows them). Only the messages on screen are laid out (transcript/
// message_delegate.h), so that a chat of 50,000 messages opens, streams and scrolls as fast as a
// short one. The part of a message whose tokens have left the KV window is drawn faded. Each
// message's header links copy it or show its tokens; the context menu has the same and the
// panel's actions. The view follows the newest message while it is scrolled to the bottom.
#pragma once

#include "chat_panel/transcript/transcript_model.h"

#include <QListView>

class QTextDocument;

namespace sinkscope::ui {

class MessageDelegate;

class ChatView : public QListView {
    Q_OBJECT
public:
    explicit ChatView(QWidget* parent = nullptr);

    TranscriptModel* transcriptModel() const { return m_model; }

    // What the model does (transcript_model.h).
    void clearChat() { m_model->clear(); }
    void setConversation(const QList<TurnView>& turns, qint64 transcriptEnd) {
        m_model->setConversation(turns, transcriptEnd);
    }
    void addSent(TurnRole role, const QString& text) { // and the view follows it
        m_followBottom = true;
        m_model->addSent(role, text);
    }
    void appendPieces(const QList<StreamPiece>& pieces) { m_model->appendPieces(pieces); }
    void finishReply(const QList<ToolCallView>& calls, double confidence, const QString& callError,
                     const QString& footer) {
        m_model->finishReply(calls, confidence, callError, footer);
    }
    void appendNote(const QString& note) { m_model->appendNote(note); }
    void setFadedBefore(qint64 index) { m_model->setFadedBefore(index); }
    void setCallMarkers(const CallMarkers& markers) { m_model->setCallMarkers(markers); }
    void setTranscriptTexts(const QStringList& texts) { m_model->setTranscriptTexts(texts); }
    // Actions the context menu offers after a message's own (the panel's Show tokens, Copy chat).
    void setMenuActions(const QList<QAction*>& actions) { m_menuActions = actions; }
    void setPlaceholderText(const QString& text) { m_placeholder = text; }

    const QList<ChatMessage>& messages() const { return m_model->messages(); }
    bool isFaded(qsizetype message) const; // some of its tokens left the window
    // The characters of its (trimmed) text drawn faded; all of them when some tokens left and
    // the text cannot be placed on its tokens.
    qsizetype fadedLength(qsizetype message) const;
    // The message as drawn, and where its text starts in that document (-1: it shows none).
    const QTextDocument* messageDocument(qsizetype message) const;
    int textPosition(qsizetype message) const;
    qsizetype messageAt(const QPoint& viewportPoint) const; // -1 below the last message
    // Where the message's box is drawn in the viewport (scrolled into view first).
    QRect messageRect(qsizetype message);
    void copyMessage(qsizetype message) const; // its plain text to the clipboard
    // Selects the message and scrolls to it (a message found).
    void showMessage(qsizetype message);
    // The next message older than the one selected whose text or calls hold `text` (any case),
    // from the newest again after the oldest: shown, and returned; -1 when none holds it.
    qsizetype findOlder(const QString& text);

signals:
    void viewTokensRequested(qint64 firstToken, qint64 endToken);
    void toolClicked(const QString& tool);

protected:
    void doItemsLayout() override;
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void contextMenuEvent(QContextMenuEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    QString linkAt(const QPoint& viewportPoint) const;
    void onLink(const QString& href);
    void viewTokens(qsizetype message); // asks for its tokens, when it has them
    // Lays out the messages on screen; lays out the list again while that changed a height.
    void layOutShown();
    void onRowsChanged(int first, int last);

    TranscriptModel* m_model = nullptr;
    MessageDelegate* m_delegate = nullptr;
    QList<QAction*> m_menuActions;
    QString m_placeholder;
    bool m_followBottom = true; // scrolled to the bottom: stays there as messages come
    bool m_layingOut = false;
};

} // namespace sinkscope::ui
