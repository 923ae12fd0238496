// The chat as Markdown, one section per message: "**You:** …", "**Assistant:** …" with each call
// as a fenced ```json block ({"name", "arguments"}), "**Tool result:**" with the result as a
// fenced ```json block. What "Copy Chat as Markdown" and File > Export Chat write.
#pragma once

#include "chat_panel/chat_message.h"

#include <QString>

namespace sinkscope::ui {

QString chatMarkdown(const QList<ChatMessage>& messages);

} // namespace sinkscope::ui
