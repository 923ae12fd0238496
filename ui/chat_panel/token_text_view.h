// Read-only text built from tokens: each token's text is one span of the document, so a token can
// be highlighted (a KV slot or heatmap column was clicked), faded (it left the window), struck out
// (the template rendered it anew) or clicked. Each token's background shows its boundary (two
// alternating shades) and its state in the heatmap's colours (sink, in the window, evicted); its
// tooltip gives its index, id, position and state.
// Used for the chat transcript and for the pinned sink block above it. Between tokens it can hold
// notes and rich blocks (a tool call's card) whose links are reported by linkClicked.
#pragma once

#include <QList>
#include <QString>
#include <QTextCharFormat>
#include <QTextEdit>

#include <functional>

namespace sinkscope::ui {

enum class TokenRole { Sink, Prompt, Reply };
// A sink is pinned; the others are in the window until they fade.
enum class TokenState { Sink, Window, Evicted };

struct TokenText {
    QString text;
    TokenRole role = TokenRole::Reply;
    qint32 id = -1;       // -1 when not known
    qint64 position = -1; // in the session's stream; -1 when not known
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
    // Rich text (HTML) on its own lines, not a token: a tool call's card.
    void appendBlock(const QString& html);
    // The tokens shown so far stay as text but are no longer tokens of the stream (another model
    // tokenised the conversation anew); the next token appended is index `nextIndex`.
    void sealTokens(qint64 nextIndex);
    // The tokens from `index` on belong to an older render of the conversation (the template wrote
    // earlier turns anew): their text stays, struck out and faded, but is no longer tokens; the
    // tokens before `index` are unchanged, and the next token appended is `index`.
    void strikeFrom(qint64 index);
    // Tokens [0, index) are drawn faded: they are no longer in the KV cache.
    void setFadedBefore(qint64 index);
    void highlightToken(qint64 index); // -1 removes the highlight
    // Tokens [first, end) highlighted, scrolled to the first; an empty range removes it.
    void highlightTokens(qint64 first, qint64 end);

    qint64 tokenCount() const { return m_indexBase + m_spans.size(); } // the next token's index
    qint64 firstTokenShown() const { return m_indexBase; }             // earlier ones were sealed
    QString tokenText(qint64 index) const;
    qint32 tokenId(qint64 index) const;       // -1 when not known or not shown
    qint64 tokenPosition(qint64 index) const; // -1 when not known or not shown
    TokenState tokenState(qint64 index) const;
    // "Token 12 · id 345 · position 57 · in the window"; "" when not a token shown.
    QString tokenToolTip(qint64 index) const;
    // The background a token is drawn with: its state's colour, two shades alternating by index.
    QColor tokenBackground(qint64 index) const;
    qint64 highlightedToken() const { return m_highlighted; }
    qint64 fadedBefore() const { return m_fadedBefore; }
    QString highlightedText() const;

signals:
    void tokenClicked(qint64 index);
    void linkClicked(const QString& href);
    void fadedBeforeChanged(qint64 index);

protected:
    bool viewportEvent(QEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    struct Span {
        int start = 0;  // document position
        int length = 0; // UTF-16 units
        TokenRole role = TokenRole::Reply;
        qint32 id = -1;
        qint64 position = -1;
    };

    QTextCharFormat formatFor(qint64 index, TokenRole role, bool faded) const;
    void setFaded(qint64 index); // m_fadedBefore, told to the listeners
    QColor tokenBackground(qint64 index, TokenRole role, bool faded) const;
    void restyle(qint64 from, qint64 to, bool faded); // tokens [from, to)
    qint64 tokenAt(int documentPosition) const;       // -1 when between tokens
    const Span* spanOf(qint64 index) const;           // nullptr when not a token shown
    void appendOnOwnLine(const std::function<void(QTextCursor&)>& insert);
    bool isScrolledToBottom() const;
    void scrollToBottom();

    QList<Span> m_spans;    // [tokens since m_indexBase]
    qint64 m_indexBase = 0; // the index of m_spans[0]
    qint64 m_fadedBefore = 0;
    qint64 m_highlighted = -1; // the first highlighted token
    bool m_atLineStart = true; // the document ends at the start of a line
};

} // namespace sinkscope::ui
