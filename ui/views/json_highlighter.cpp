#include "views/json_highlighter.h"

#include "views/view_colors.h"

#include <QPalette>

namespace sinkscope::views {

namespace {

QTextCharFormat colored(const QColor& color, bool bold = false) {
    QTextCharFormat format;
    format.setForeground(color);
    if (bold) format.setFontWeight(QFont::Bold);
    return format;
}

// JSON strings cannot span lines, so every block is lexed on its own.
int stringEnd(const QString& text, int start) {
    for (int i = start + 1; i < text.size(); ++i) {
        if (text[i] == QLatin1Char('\\'))
            ++i;
        else if (text[i] == QLatin1Char('"'))
            return i + 1;
    }
    return int(text.size());
}

bool followedByColon(const QString& text, int from) {
    for (int i = from; i < text.size(); ++i) {
        if (!text[i].isSpace()) return text[i] == QLatin1Char(':');
    }
    return false;
}

int runEnd(const QString& text, int start, bool (*belongs)(QChar)) {
    int end = start;
    while (end < text.size() && belongs(text[end]))
        ++end;
    return end;
}

bool isNumberChar(QChar c) {
    return c.isDigit() || c == QLatin1Char('-') || c == QLatin1Char('+') || c == QLatin1Char('.') ||
           c == QLatin1Char('e') || c == QLatin1Char('E');
}

bool isWordChar(QChar c) {
    return c.isLetter();
}

bool isPunctuation(QChar c) {
    return QStringView(u"{}[],:").contains(c);
}

} // namespace

JsonHighlighter::JsonHighlighter(QTextDocument* document, const QPalette& palette)
    : QSyntaxHighlighter(document) {
    setPalette(palette);
}

void JsonHighlighter::setPalette(const QPalette& palette) {
    const bool dark = isDarkPalette(palette);
    m_key = colored(dark ? QColor(0xd2, 0xa8, 0xff) : QColor(0x82, 0x2d, 0x9e), true);
    m_string = colored(dark ? QColor(0x7e, 0xe7, 0x87) : QColor(0x11, 0x6b, 0x2a));
    m_number = colored(dark ? QColor(0x79, 0xc0, 0xff) : QColor(0x05, 0x50, 0xae));
    m_literal = colored(dark ? QColor(0xff, 0xa6, 0x57) : QColor(0xb3, 0x40, 0x00), true);
    m_punctuation =
        colored(mixColors(palette.color(QPalette::Text), palette.color(QPalette::Base), 0.4));
    rehighlight();
}

QTextCharFormat JsonHighlighter::format(Token token) const {
    switch (token) {
    case Token::Key:
        return m_key;
    case Token::String:
        return m_string;
    case Token::Number:
        return m_number;
    case Token::Literal:
        return m_literal;
    case Token::Punctuation:
        break;
    }
    return m_punctuation;
}

void JsonHighlighter::highlightBlock(const QString& text) {
    int i = 0;
    while (i < text.size()) {
        const QChar c = text[i];
        int end = i + 1;
        if (c == QLatin1Char('"')) {
            end = stringEnd(text, i);
            setFormat(i, end - i, followedByColon(text, end) ? m_key : m_string);
        } else if (c.isDigit() || c == QLatin1Char('-')) {
            end = runEnd(text, i, isNumberChar);
            setFormat(i, end - i, m_number);
        } else if (c.isLetter()) {
            end = runEnd(text, i, isWordChar);
            const QStringView word = QStringView(text).mid(i, end - i);
            if (word == u"true" || word == u"false" || word == u"null")
                setFormat(i, end - i, m_literal);
        } else if (isPunctuation(c)) {
            setFormat(i, 1, m_punctuation);
        }
        i = end;
    }
}

} // namespace sinkscope::views
