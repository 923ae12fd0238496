#include "chat_panel/chat_markdown.h"

#include <QSaveFile>
#include <QStringList>
#include <QThread>

#include <memory>

namespace sinkscope::ui {

namespace {

const QString kSectionBreak = QStringLiteral("\n\n");

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
        return parts.join(kSectionBreak);
    }
    const QString text = message.text.trimmed();
    parts << (text.isEmpty() ? speaker : speaker + u' ' + text);
    for (const ToolCallView& call : message.calls)
        parts << fencedJson(callJson(call));
    return parts.join(kSectionBreak);
}

// Runs `work` on a thread of its own, then `done` with its result on `context`'s thread; the
// thread is deleted once it has finished.
template <typename Result>
void runInBackground(QObject* context, std::function<Result()> work,
                     std::function<void(const Result&)> done) {
    auto result = std::make_shared<Result>();
    QThread* thread = QThread::create([work = std::move(work), result] { *result = work(); });
    QObject::connect(thread, &QThread::finished, context,
                     [done = std::move(done), result] { done(*result); });
    QObject::connect(thread, &QThread::finished, thread, &QObject::deleteLater);
    thread->start(QThread::LowPriority);
}

} // namespace

QString chatMarkdown(const QList<ChatMessage>& messages) {
    QStringList sections;
    sections.reserve(messages.size());
    for (const ChatMessage& message : messages)
        sections << section(message);
    return sections.isEmpty() ? QString() : sections.join(kSectionBreak) + u'\n';
}

bool saveChatMarkdown(const QString& path, const QList<ChatMessage>& messages) {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) return false;
    for (qsizetype i = 0; i < messages.size(); ++i) {
        const QString text =
            section(messages[i]) + (i + 1 < messages.size() ? kSectionBreak : QStringLiteral("\n"));
        if (file.write(text.toUtf8()) < 0) return false;
    }
    return file.commit();
}

void chatMarkdownInBackground(QObject* context, const QList<ChatMessage>& messages,
                              std::function<void(const QString& markdown)> done) {
    runInBackground<QString>(
        context, [messages] { return chatMarkdown(messages); }, std::move(done));
}

void saveChatMarkdownInBackground(QObject* context, const QString& path,
                                  const QList<ChatMessage>& messages,
                                  std::function<void(bool saved)> done) {
    runInBackground<bool>(
        context, [path, messages] { return saveChatMarkdown(path, messages); }, std::move(done));
}

} // namespace sinkscope::ui
