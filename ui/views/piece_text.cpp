#include "views/piece_text.h"

namespace sinkscope::views {

QString visiblePiece(const QString& piece) {
    QString shown;
    shown.reserve(piece.size());
    for (const QChar c : piece) {
        const char16_t code = c.unicode();
        if (code == u'\n')
            shown += QChar(0x23CE);
        else if (code == u'\t')
            shown += QChar(0x21E5);
        else if (code == u' ')
            shown += QChar(0x00B7);
        else if (code < 0x20)
            shown += QChar(char16_t(0x2400 + code)); // the "control pictures" block
        else if (code == 0x7F)
            shown += QChar(0x2421);
        else
            shown += c;
    }
    return shown;
}

QString visiblePiece(const std::string& piece) {
    return visiblePiece(QString::fromUtf8(piece.data(), qsizetype(piece.size())));
}

} // namespace sinkscope::views
