#include "chat_panel/chat_message.h"

#include <QJsonArray>
#include <QJsonDocument>

#include <algorithm>
#include <numeric>

namespace sinkscope::ui {

QString speakerName(TurnRole role) {
    switch (role) {
    case TurnRole::User:
        return QObject::tr("You");
    case TurnRole::Assistant:
        return QObject::tr("Assistant");
    case TurnRole::ToolResult:
        break;
    }
    return QObject::tr("Tool result");
}

QList<ChatMessage> messagesOf(const QList<TurnView>& turns, qint64 transcriptEnd) {
    const qint64 ownTokens =
        std::accumulate(turns.cbegin(), turns.cend(), qint64(0),
                        [](qint64 sum, const TurnView& turn) { return sum + turn.tokenCount; });
    const bool someRenderedAnew = std::any_of(
        turns.cbegin(), turns.cend(), [](const TurnView& turn) { return turn.tokenCount == 0; });
    const qint64 renderEnd = someRenderedAnew ? qMax<qint64>(0, transcriptEnd - ownTokens) : 0;
    QList<ChatMessage> messages;
    messages.reserve(turns.size());
    qint64 next = renderEnd;
    for (const TurnView& turn : turns) {
        ChatMessage& message = messages.emplace_back();
        message.role = turn.role;
        message.text = turn.text;
        message.calls = turn.calls;
        if (turn.tokenCount > 0) {
            message.firstToken = next;
            next += turn.tokenCount;
            message.endToken = next;
        } else if (renderEnd > 0) {
            message.firstToken = 0;
            message.endToken = renderEnd;
        }
    }
    return messages;
}

QString callJson(const ToolCallView& call) {
    // The name quoted as JSON; the arguments kept as the engine wrote them (keys in order).
    const QByteArray quotedName =
        QJsonDocument(QJsonArray{call.name}).toJson(QJsonDocument::Compact);
    const QString name = QString::fromUtf8(quotedName.mid(1, quotedName.size() - 2));
    const QString arguments =
        call.argumentsJson.isEmpty() ? QStringLiteral("{}") : call.argumentsJson;
    return QStringLiteral("{\"name\": %1, \"arguments\": %2}").arg(name, arguments);
}

QString messagePlainText(const ChatMessage& message) {
    QStringList parts;
    if (!message.text.trimmed().isEmpty()) parts << message.text.trimmed();
    for (const ToolCallView& call : message.calls)
        parts << QStringLiteral("%1 %2").arg(call.name, call.argumentsJson);
    return parts.join(u'\n');
}

} // namespace sinkscope::ui
