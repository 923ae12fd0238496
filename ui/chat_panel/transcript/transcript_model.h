// The readable chat as a list model: one row per message (who spoke, the text, an assistant's
// calls, a reply's statistics) and the notes between messages. Finished turns come from the
// conversation the worker reports; a reply being generated shows its streamed text without
// control tokens or call markers (streamed_reply.h). The part of a message whose tokens have left
// the KV window is faded, character by character (message_tokens.h).
//
// Every change touches only the rows it changes, so that a long history costs nothing on each
// token: a streamed token changes the last row; a moved window edge changes the rows whose faded
// part changed, found by binary search on their token ranges; a reported conversation changes
// the rows from its first difference on (one model reset when it differs from the first row).
#pragma once

#include "chat_panel/chat_message.h"
#include "chat_panel/message_tokens.h"
#include "chat_panel/streamed_reply.h"

#include <QAbstractListModel>
#include <QList>
#include <QPair>
#include <QStringList>

namespace sinkscope::ui {

// How much of a message is drawn faded: the first `chars` characters of its text, and its box,
// header, cards and footer too when all its tokens left (or when some did and its text cannot be
// placed on them), with a note in its header.
struct MessageFade {
    enum class Left { None, Partly, Wholly };
    Left left = Left::None;
    bool box = false;
    qsizetype chars = 0;
    bool operator==(const MessageFade&) const = default;
};

class TranscriptModel : public QAbstractListModel {
    Q_OBJECT
public:
    enum Role {
        TurnRoleRole = Qt::UserRole, // TurnRole as an int
        FadedLengthRole,             // MessageFade::chars
        FadeLeftRole,                // MessageFade::Left as an int
        FirstTokenRole,
        EndTokenRole,
        StreamingRole, // the reply being generated
    };

    explicit TranscriptModel(QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    // DisplayRole: what Copy Message copies (messagePlainText).
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;

    void clear();
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
    void setCallMarkers(const CallMarkers& markers) { m_callMarkers = markers; }
    // The transcript's tokens as a rebuilt session lists them (a saved session, another model's
    // tokenisation): their text places the turns' text on them.
    void setTranscriptTexts(const QStringList& texts);

    const QList<ChatMessage>& messages() const { return m_messages; }
    MessageFade fadeOf(qsizetype row) const;
    bool holds(qsizetype row, const QString& text) const; // in its text or calls, any case
    bool isStreaming(qsizetype row) const { return m_streaming && row == m_messages.size() - 1; }
    bool isWritingCall() const { return m_streaming && m_reply.writingCall(); }
    // The notes shown before the row's message, and after it (the last row's: notes added since).
    QStringList notesBefore(qsizetype row) const;
    QStringList notesAfter(qsizetype row) const;

private:
    MessageFade fadeAt(qsizetype row, qint64 fadedBefore) const;
    // Lays the texts of the rows from `row`'s token range on on their tokens, and keeps the
    // token ends the window's edge is searched by.
    void layOutFrom(qsizetype row);
    void changed(qsizetype first, qsizetype last); // dataChanged for rows [first, last]
    void appendRow(const ChatMessage& message);

    QList<ChatMessage> m_messages;
    QList<TextOnTokens> m_texts; // [m_messages] each one's text on its tokens
    // [m_messages] the largest token end of the messages up to each: messages hold ascending
    // token ranges, so this orders them for a binary search even where some hold none.
    QList<qint64> m_endsSoFar;
    QList<QPair<qsizetype, QString>> m_notes; // (messages before it, text), in order
    TranscriptTexts m_tokenTexts;
    CallMarkers m_callMarkers;
    StreamedReply m_reply;    // the reply streaming, while m_streaming
    bool m_streaming = false; // the last message is that reply
    qint64 m_fadedBefore = 0;
};

} // namespace sinkscope::ui
