#include "chat_panel/streamed_reply.h"

namespace sinkscope::ui {

void StreamedReply::append(const StreamPiece& piece) {
    const bool marker = !m_markers.open.isEmpty() &&
                        (piece.text == m_markers.open || piece.text == m_markers.close);
    if (!piece.control || marker) m_raw += piece.text;
}

StreamedReply::Parsed StreamedReply::parse() const {
    const QString& open = m_markers.open;
    if (open.isEmpty()) return {m_raw, false};
    Parsed parsed;
    qsizetype at = 0;
    while (at < m_raw.size()) {
        const qsizetype opened = m_raw.indexOf(open, at);
        if (opened < 0) {
            parsed.text += QStringView(m_raw).mid(at);
            break;
        }
        parsed.text += QStringView(m_raw).mid(at, opened - at);
        const qsizetype closed =
            m_markers.close.isEmpty() ? -1 : m_raw.indexOf(m_markers.close, opened + open.size());
        if (closed < 0) {
            parsed.inCall = true;
            return parsed;
        }
        at = closed + m_markers.close.size();
    }
    for (qsizetype held = std::min(open.size() - 1, parsed.text.size()); held > 0; --held)
        if (parsed.text.endsWith(QStringView(open).left(held))) {
            parsed.text.chop(held);
            break;
        }
    return parsed;
}

QString StreamedReply::text() const {
    return parse().text;
}

bool StreamedReply::writingCall() const {
    return parse().inCall;
}

} // namespace sinkscope::ui
