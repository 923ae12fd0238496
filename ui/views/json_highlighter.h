// Colours JSON in a text document: object keys, strings, numbers, true/false/null and
// punctuation, with colours picked for the editor's light or dark palette.
#pragma once

#include <QSyntaxHighlighter>
#include <QTextCharFormat>

namespace sinkscope::views {

class JsonHighlighter : public QSyntaxHighlighter {
    Q_OBJECT

public:
    enum class Token { Key, String, Number, Literal, Punctuation };

    JsonHighlighter(QTextDocument* document, const QPalette& palette);

    void setPalette(const QPalette& palette); // recolours the whole document
    QTextCharFormat format(Token token) const;

protected:
    void highlightBlock(const QString& text) override;

private:
    QTextCharFormat m_key;
    QTextCharFormat m_string;
    QTextCharFormat m_number;
    QTextCharFormat m_literal;
    QTextCharFormat m_punctuation;
};

} // namespace sinkscope::views
