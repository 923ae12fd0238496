// One message of the readable chat as rich text, for the transcript's delegate to lay out and
// draw: the notes before it, then its box with who spoke ("You", "Assistant", "Tool result"), the
// Copy and Tokens links, its text (its faded part toward the background), an assistant's calls
// as cards and a reply's statistics, then the notes after it. No widgets.
#pragma once

#include "chat_panel/chat_message.h"
#include "chat_panel/transcript/transcript_model.h"

#include <QPalette>
#include <QString>
#include <QStringList>

#include <optional>

class QTextDocument;

namespace sinkscope::ui {

struct MessageLook {
    qsizetype row = 0; // named by its links
    MessageFade fade;
    QStringList notesBefore;
    QStringList notesAfter;
    bool streaming = false;   // the reply being generated
    bool writingCall = false; // streaming inside a call
};

// Fills `document` (emptied first) with the message; returns where its text starts, -1 when it
// shows none.
int writeMessageDocument(QTextDocument& document, const ChatMessage& message,
                         const MessageLook& look, const QPalette& palette);

// The links of a message's header: "copy:ROW" and "tokens:ROW".
QString copyLink(qsizetype row);
QString tokensLink(qsizetype row);
std::optional<qsizetype> copyLinkRow(const QString& href);
std::optional<qsizetype> tokensLinkRow(const QString& href);

} // namespace sinkscope::ui
