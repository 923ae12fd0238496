// The chat as Markdown, one section per message: "**You:** …", "**Assistant:** …" with each call
// as a fenced ```json block ({"name", "arguments"}), "**Tool result:**" with the result as a
// fenced ```json block. What "Copy Chat as Markdown" and File > Export Chat write.
#pragma once

#include "chat_panel/chat_message.h"

#include <QString>

#include <functional>

class QObject;

namespace sinkscope::ui {

QString chatMarkdown(const QList<ChatMessage>& messages);
// The Markdown written to `path`, a section at a time (QSaveFile: a failed write leaves the old
// file whole); false when it could not be written.
bool saveChatMarkdown(const QString& path, const QList<ChatMessage>& messages);

// The same off the GUI thread, for a chat of any length: `done` runs on `context`'s thread once
// the text is made or the file written, never after `context` is gone.
void chatMarkdownInBackground(QObject* context, const QList<ChatMessage>& messages,
                              std::function<void(const QString& markdown)> done);
void saveChatMarkdownInBackground(QObject* context, const QString& path,
                                  const QList<ChatMessage>& messages,
                                  std::function<void(bool saved)> done);

} // namespace sinkscope::ui
