#include "chat_panel/chat_markdown.h"

#include <QStringList>

namespace sinkscope::ui {

namespace {

// A fenced block whose fence is longer than any run of backticks in `text`, so that the text
// cannot end it early (CommonMark).
QString fencedJson(const QString& text) {
    QString fence = QStringLiteral("```");
    while (text.contains(fence))
        fence += u'`';
    return QStringLiteral("%1json\n%2\n%1").arg(fence, text.trimmed());
}

QString section(const ChatMessage& message) {
    const QString speaker = QStringLiteral("**%1:**").arg(speakerName(message.role));
    QStringList parts;
    if (message.role == TurnRole::ToolResult) {
        parts << speaker << fencedJson(message.text);
        return parts.join(QStringLiteral("\n\n"));
    }
    const QString text = message.text.trimmed();
    parts << (text.isEmpty() ? speaker : speaker + u' ' + text);
    for (const ToolCallView& call : message.calls)
        parts << fencedJson(callJson(call));
    return parts.join(QStringLiteral("\n\n"));
}

} // namespace

QString chatMarkdown(const QList<ChatMessage>& messages) {
    QStringList sections;
    sections.reserve(messages.size());
    for (const ChatMessage& message : messages)
        sections << section(message);
    return sections.isEmpty() ? QString() : sections.join(QStringLiteral("\n\n")) + u'\n';
}

} // namespace sinkscope::ui
