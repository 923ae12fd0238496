#include "chat_panel/message_tokens.h"

#include <algorithm>

namespace sinkscope::ui {

void TranscriptTexts::reset(qint64 nextIndex) {
    m_base = nextIndex;
    m_texts.clear();
}

void TranscriptTexts::set(qint64 index, const QString& text) {
    if (index < m_base || index > m_base + m_texts.size()) reset(index);
    m_texts.resize(index - m_base);
    m_texts.append(text);
}

bool TranscriptTexts::join(qint64 first, qint64 end, QString& joined,
                           QList<qsizetype>& ends) const {
    joined.clear();
    ends.clear();
    if (first < m_base || end > m_base + m_texts.size()) return false;
    for (qint64 index = first; index < end; ++index) {
        joined += m_texts[index - m_base];
        ends.append(joined.size());
    }
    return true;
}

qsizetype TextOnTokens::fadedLength(qint64 fadedBefore) const {
    const qint64 left = fadedBefore - firstToken; // tokens of the message that left
    if (left <= 0) return 0;
    return left >= ends.size() ? length : ends[left - 1];
}

QList<TextOnTokens> layOnTokens(std::span<const ChatMessage> messages,
                                const TranscriptTexts& texts) {
    QList<TextOnTokens> laid(qsizetype(messages.size()));
    QString joined;
    QList<qsizetype> ends;
    bool known = false;
    qint64 first = -1;
    qint64 end = -1;
    qsizetype searchFrom = 0;
    for (size_t i = 0; i < messages.size(); ++i) {
        const ChatMessage& message = messages[i];
        if (!message.hasTokens()) continue;
        if (message.firstToken != first || message.endToken != end) {
            first = message.firstToken;
            end = message.endToken;
            searchFrom = 0;
            known = texts.join(first, end, joined, ends);
        }
        const QString shown = message.text.trimmed();
        if (!known || shown.isEmpty()) continue;
        const qsizetype at = joined.indexOf(shown, searchFrom);
        if (at < 0) continue;
        searchFrom = at + shown.size();
        TextOnTokens& text = laid[qsizetype(i)];
        text.firstToken = first;
        text.length = shown.size();
        text.ends.reserve(ends.size());
        for (const qsizetype tokenEnd : ends)
            text.ends.append(std::clamp<qsizetype>(tokenEnd - at, 0, shown.size()));
    }
    return laid;
}

} // namespace sinkscope::ui
