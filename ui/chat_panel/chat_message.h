// One message of the readable chat: who spoke, the text, an assistant's calls, and which
// transcript tokens it was fed as (to fade it when they leave the KV window and to find them in
// the token view). Built from the turns the worker reports; no widgets.
#pragma once

#include "worker/engine_types.h"

#include <QList>
#include <QString>

namespace sinkscope::ui {

struct ChatMessage {
    TurnRole role = TurnRole::User;
    QString text; // the user's text, the assistant's text outside calls, or the result's JSON
    QList<ToolCallView> calls;
    double confidence = -1; // of the calls, as the reply reported it; < 0 not known (restored)
    QString callError;      // a call that did not parse or validate
    QString footer;         // the reply's statistics
    // Transcript tokens [firstToken, endToken); both -1 while not known.
    qint64 firstToken = -1;
    qint64 endToken = -1;

    bool hasTokens() const { return firstToken >= 0 && endToken > firstToken; }
};

QString speakerName(TurnRole role); // "You", "Assistant", "Tool result"

// The turns as messages, with their token ranges. A turn's tokens follow the previous turn's in
// the transcript; turns the template rendered anew hold none of their own (TurnView::tokenCount
// 0): they share the transcript's start up to the first turn that has its own, which
// `transcriptEnd` (the transcript's length) places from the end.
QList<ChatMessage> messagesOf(const QList<TurnView>& turns, qint64 transcriptEnd);

// What "Copy message" puts on the clipboard: the text, then each call as `name {arguments}`.
QString messagePlainText(const ChatMessage& message);

// A call as one JSON object, {"name": …, "arguments": {…}}, the arguments' keys in their order.
QString callJson(const ToolCallView& call);

} // namespace sinkscope::ui
