// Read-only text built from tokens: each token's text is one span of the document, so a token can
// be highlighted (a KV slot or heatmap column was clicked), faded (it left the window) or clicked.
// Used for the chat transcript and for the pinned sink block above it.
#pragma once

#include <QList>
#include <QString>
#include <QTextCharFormat>
#include <QTextEdit>

namespace sinkscope::ui {

enum class TokenRole { Sink, Prompt, Reply };

struct TokenText {
    QString text;
    TokenRole role = TokenRole::Reply;
};

class TokenTextView : public QTextEdit {
    Q_OBJECT
public:
    explicit TokenTextView(QWidget* parent = nullptr);

    void clearTokens();
    // Appends tokens after everything shown. Prompt text at the start of a line drops its leading
    // spaces and newlines (the tokenizer's space prefix, the separator after a reply).
    void appendTokens(const QList<TokenText>& tokens);
    // A small note on its own line (not a token): reply statistics, "model changed".
    void appendNote(const QString& note);
    // Tokens [0, index) are drawn faded: they are no longer in the KV cache.
    void setFadedBefore(qint64 index);
    void highlightToken(qint64 index); // -1 removes the highlight

    qint64 tokenCount() const { return m_spans.size(); }
    QString tokenText(qint64 index) const;
    qint64 highlightedToken() const { return m_highlighted; }
    qint64 fadedBefore() const { return m_fadedBefore; }
    QString highlightedText() const;

signals:
    void tokenClicked(qint64 index);

protected:
    void mouseReleaseEvent(QMouseEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    struct Span {
        int start = 0;  // document position
        int length = 0; // UTF-16 units
        TokenRole role = TokenRole::Reply;
    };

    QTextCharFormat formatFor(TokenRole role, bool faded) const;
    void restyle(qint64 from, qint64 to, bool faded); // tokens [from, to)
    qint64 tokenAt(int documentPosition) const;       // -1 when between tokens
    bool isScrolledToBottom() const;
    void scrollToBottom();

    QList<Span> m_spans; // [tokens]
    qint64 m_fadedBefore = 0;
    qint64 m_highlighted = -1;
    bool m_atLineStart = true; // the document ends at the start of a line
};

} // namespace sinkscope::ui
