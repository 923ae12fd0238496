#include "chat_panel/transcript/transcript_model.h"

#include <algorithm>

namespace sinkscope::ui {

namespace {

bool sameCalls(const QList<ToolCallView>& a, const QList<ToolCallView>& b) {
    return std::equal(a.cbegin(), a.cend(), b.cbegin(), b.cend(),
                      [](const ToolCallView& x, const ToolCallView& y) {
                          return x.name == y.name && x.argumentsJson == y.argumentsJson &&
                                 x.attributed == y.attributed && x.toolShares == y.toolShares &&
                                 x.otherShare == y.otherShare;
                      });
}

bool sameMessage(const ChatMessage& a, const ChatMessage& b) {
    return a.role == b.role && a.firstToken == b.firstToken && a.endToken == b.endToken &&
           a.confidence == b.confidence && a.text == b.text && a.callError == b.callError &&
           a.footer == b.footer && sameCalls(a.calls, b.calls);
}

} // namespace

TranscriptModel::TranscriptModel(QObject* parent) : QAbstractListModel(parent) {}

int TranscriptModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_messages.size());
}

QVariant TranscriptModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const qsizetype row = index.row();
    const ChatMessage& message = m_messages[row];
    switch (role) {
    case Qt::DisplayRole:
        return messagePlainText(message);
    case TurnRoleRole:
        return int(message.role);
    case FadedLengthRole:
        return fadeOf(row).chars;
    case FadeLeftRole:
        return int(fadeOf(row).left);
    case FirstTokenRole:
        return message.firstToken;
    case EndTokenRole:
        return message.endToken;
    case StreamingRole:
        return isStreaming(row);
    default:
        return {};
    }
}

void TranscriptModel::clear() {
    beginResetModel();
    m_messages.clear();
    m_texts.clear();
    m_endsSoFar.clear();
    m_notes.clear();
    m_tokenTexts.reset();
    m_streaming = false;
    m_fadedBefore = 0;
    endResetModel();
}

void TranscriptModel::changed(qsizetype first, qsizetype last) {
    if (first > last || first < 0 || last >= m_messages.size()) return;
    emit dataChanged(index(int(first)), index(int(last)));
}

void TranscriptModel::layOutFrom(qsizetype row) {
    // Messages sharing a token range are found in its text one after the other: from the first.
    while (row > 0 && row < m_messages.size() && m_messages[row].hasTokens() &&
           m_messages[row - 1].firstToken == m_messages[row].firstToken)
        --row;
    row = std::clamp<qsizetype>(row, 0, m_messages.size());
    const std::span<const ChatMessage> rest(m_messages.constData() + row,
                                            size_t(m_messages.size() - row));
    m_texts.resize(row);
    m_texts.append(layOnTokens(rest, m_tokenTexts));
    m_endsSoFar.resize(row);
    for (qsizetype i = row; i < m_messages.size(); ++i) {
        const qint64 before = i > 0 ? m_endsSoFar[i - 1] : -1;
        m_endsSoFar.append(m_messages[i].hasTokens() ? qMax(before, m_messages[i].endToken)
                                                     : before);
    }
}

void TranscriptModel::setTranscriptTexts(const QStringList& texts) {
    m_tokenTexts.reset();
    for (qsizetype index = 0; index < texts.size(); ++index)
        m_tokenTexts.set(index, texts[index]);
    layOutFrom(0);
    changed(0, m_messages.size() - 1);
}

void TranscriptModel::setConversation(const QList<TurnView>& turns, qint64 transcriptEnd) {
    QList<ChatMessage> messages = messagesOf(turns, transcriptEnd);
    qsizetype same = 0; // the rows that stay as they are
    for (qsizetype i = 0; i < messages.size() && i < m_messages.size(); ++i) {
        const ChatMessage& shown = m_messages[i];
        if (shown.role != messages[i].role) break; // another conversation from here on
        // The same calls; those shown may carry the attribution the turn does not keep.
        if (shown.calls.size() == messages[i].calls.size()) messages[i].calls = shown.calls;
        messages[i].confidence = shown.confidence;
        messages[i].callError = shown.callError;
        messages[i].footer = shown.footer;
        if (same == i && sameMessage(shown, messages[i])) ++same;
    }
    const qsizetype streamedRow = m_streaming ? m_messages.size() - 1 : -1;
    m_streaming = false;
    if (same == 0) { // another conversation, or the first: the view takes it in one reset
        beginResetModel();
        m_messages = std::move(messages);
        layOutFrom(0);
        endResetModel();
        return;
    }
    const qsizetype kept = qMin(m_messages.size(), messages.size());
    for (qsizetype i = same; i < kept; ++i)
        m_messages[i] = messages[i];
    if (messages.size() < m_messages.size()) {
        beginRemoveRows({}, int(messages.size()), int(m_messages.size() - 1));
        m_messages.resize(messages.size());
        layOutFrom(same);
        endRemoveRows();
    } else if (messages.size() > m_messages.size()) {
        beginInsertRows({}, int(m_messages.size()), int(messages.size() - 1));
        m_messages.append(messages.mid(m_messages.size()));
        layOutFrom(same);
        endInsertRows();
    } else {
        layOutFrom(same);
    }
    changed(same, kept - 1);
    if (streamedRow >= 0 && streamedRow < same) changed(streamedRow, streamedRow);
}

void TranscriptModel::appendRow(const ChatMessage& message) {
    const qsizetype row = m_messages.size();
    beginInsertRows({}, int(row), int(row));
    m_messages.append(message);
    layOutFrom(row);
    endInsertRows();
    // The notes drawn after the previous last message now come before this one.
    if (!notesBefore(row).isEmpty()) changed(row - 1, row - 1);
}

void TranscriptModel::addSent(TurnRole role, const QString& text) {
    const qsizetype wasStreaming = m_streaming ? m_messages.size() - 1 : -1;
    m_streaming = false;
    changed(wasStreaming, wasStreaming);
    ChatMessage message;
    message.role = role;
    message.text = text;
    appendRow(message);
}

void TranscriptModel::appendPieces(const QList<StreamPiece>& pieces) {
    bool grew = false;
    for (const StreamPiece& piece : pieces) {
        m_tokenTexts.set(piece.transcriptIndex, piece.text);
        if (!piece.generated) {
            // The sent message's tokens, the template's markers around it included.
            if (m_messages.isEmpty() || m_streaming) continue;
            ChatMessage& sent = m_messages.last();
            if (sent.firstToken < 0) sent.firstToken = piece.transcriptIndex;
            sent.endToken = piece.transcriptIndex + 1;
            grew = true;
            continue;
        }
        if (!m_streaming) {
            ChatMessage reply;
            reply.role = TurnRole::Assistant;
            m_reply = StreamedReply(m_callMarkers);
            m_streaming = true;
            if (grew) layOutFrom(m_messages.size() - 1); // the sent message's last tokens
            changed(m_messages.size() - 1, m_messages.size() - 1);
            appendRow(reply);
        }
        ChatMessage& reply = m_messages.last();
        if (reply.firstToken < 0) reply.firstToken = piece.transcriptIndex;
        reply.endToken = piece.transcriptIndex + 1;
        m_reply.append(piece);
        grew = true;
    }
    if (!grew) return;
    if (m_streaming) m_messages.last().text = m_reply.text();
    layOutFrom(m_messages.size() - 1);
    changed(m_messages.size() - 1, m_messages.size() - 1);
}

void TranscriptModel::finishReply(const QList<ToolCallView>& calls, double confidence,
                                  const QString& callError, const QString& footer) {
    const qsizetype streamedRow = m_streaming ? m_messages.size() - 1 : -1;
    m_streaming = false;
    changed(streamedRow, streamedRow);
    for (qsizetype row = m_messages.size() - 1; row >= 0; --row) {
        ChatMessage& message = m_messages[row];
        if (message.role != TurnRole::Assistant) continue;
        if (calls.size() == message.calls.size()) message.calls = calls;
        message.confidence = confidence;
        message.callError = callError;
        message.footer = footer;
        changed(row, row);
        break;
    }
}

void TranscriptModel::appendNote(const QString& note) {
    m_notes.append({m_messages.size(), note});
    changed(m_messages.size() - 1, m_messages.size() - 1);
}

QStringList TranscriptModel::notesBefore(qsizetype row) const {
    auto note = std::lower_bound(m_notes.cbegin(), m_notes.cend(), row,
                                 [](const auto& entry, qsizetype at) { return entry.first < at; });
    QStringList notes;
    for (; note != m_notes.cend() && note->first == row; ++note)
        notes << note->second;
    return notes;
}

QStringList TranscriptModel::notesAfter(qsizetype row) const {
    if (row != m_messages.size() - 1) return {};
    auto note = std::lower_bound(m_notes.cbegin(), m_notes.cend(), row + 1,
                                 [](const auto& entry, qsizetype at) { return entry.first < at; });
    QStringList notes;
    for (; note != m_notes.cend(); ++note)
        notes << note->second;
    return notes;
}

MessageFade TranscriptModel::fadeAt(qsizetype row, qint64 fadedBefore) const {
    const ChatMessage& shown = m_messages[row];
    MessageFade fade;
    if (!shown.hasTokens() || shown.firstToken >= fadedBefore) return fade;
    if (shown.endToken > fadedBefore) {
        fade.left = MessageFade::Left::Partly;
        const TextOnTokens& text = m_texts[row];
        if (text.isKnown()) {
            fade.chars = text.fadedLength(fadedBefore);
            return fade;
        }
    } else {
        fade.left = MessageFade::Left::Wholly;
    }
    fade.box = true;
    fade.chars = shown.text.trimmed().size();
    return fade;
}

bool TranscriptModel::holds(qsizetype row, const QString& text) const {
    const ChatMessage& message = m_messages[row];
    return message.text.contains(text, Qt::CaseInsensitive) ||
           std::any_of(message.calls.cbegin(), message.calls.cend(),
                       [&text](const ToolCallView& call) {
                           return call.name.contains(text, Qt::CaseInsensitive) ||
                                  call.argumentsJson.contains(text, Qt::CaseInsensitive);
                       });
}

MessageFade TranscriptModel::fadeOf(qsizetype row) const {
    if (row < 0 || row >= m_messages.size()) return {};
    return fadeAt(row, m_fadedBefore);
}

void TranscriptModel::setFadedBefore(qint64 index) {
    const qint64 before = m_fadedBefore;
    m_fadedBefore = index;
    const qint64 low = qMin(before, index);
    const qint64 high = qMax(before, index);
    // A message's fade changes only where the edge crosses its token range (first, end]: from
    // the first message that ends after the lower edge to the last that starts before the upper.
    const auto first = std::partition_point(m_endsSoFar.cbegin(), m_endsSoFar.cend(),
                                            [low](qint64 end) { return end <= low; });
    // Runs of changed rows are told as one change: a restored session's first edge fades them all.
    qsizetype runStart = -1;
    qsizetype row = first - m_endsSoFar.cbegin();
    for (; row < m_messages.size(); ++row) {
        const ChatMessage& message = m_messages[row];
        if (message.hasTokens() && message.firstToken >= high) break;
        const bool fadeChanged = message.hasTokens() && fadeAt(row, before) != fadeAt(row, index);
        if (fadeChanged && runStart < 0) runStart = row;
        if (!fadeChanged && runStart >= 0) {
            changed(runStart, row - 1);
            runStart = -1;
        }
    }
    if (runStart >= 0) changed(runStart, row - 1);
}

} // namespace sinkscope::ui
