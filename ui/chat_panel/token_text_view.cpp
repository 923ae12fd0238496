#include "chat_panel/token_text_view.h"

#include "views/view_colors.h"

#include <QEvent>
#include <QHelpEvent>
#include <QMouseEvent>
#include <QScrollBar>
#include <QTextBlock>
#include <QTextCursor>
#include <QToolTip>

#include <algorithm>

namespace sinkscope::ui {

TokenTextView::TokenTextView(QWidget* parent) : QTextEdit(parent) {
    setReadOnly(true);
    setUndoRedoEnabled(false);
    setTextInteractionFlags(Qt::TextSelectableByMouse); // no caret: it is not editable
}

void TokenTextView::clearTokens() {
    clear();
    m_spans.clear();
    m_indexBase = 0;
    m_highlighted = -1;
    m_atLineStart = true;
    setFaded(0);
}

void TokenTextView::setFaded(qint64 index) {
    if (index == m_fadedBefore) return;
    m_fadedBefore = index;
    emit fadedBeforeChanged(index);
}

QTextCharFormat TokenTextView::formatFor(qint64 index, TokenRole role, bool faded) const {
    const QPalette& colors = palette();
    const views::MaskColors maskColors = views::MaskColors::forPalette(colors);
    faded = faded && role != TokenRole::Sink; // a sink never leaves the cache
    QTextCharFormat format;
    QColor text = colors.color(QPalette::Text);
    switch (role) {
    case TokenRole::Sink:
        text = views::mixColors(maskColors.sink, text, 0.35);
        break;
    case TokenRole::Prompt:
        text = views::mixColors(maskColors.recent, text, 0.25);
        format.setFontWeight(QFont::DemiBold);
        break;
    case TokenRole::Reply:
        break;
    }
    if (faded) text = views::fadedColor(text, colors);
    format.setForeground(text);
    format.setBackground(tokenBackground(index, role, faded));
    return format;
}

QColor TokenTextView::tokenBackground(qint64 index, TokenRole role, bool faded) const {
    const views::MaskColors colors = views::MaskColors::forPalette(palette());
    const QColor state = role == TokenRole::Sink ? colors.sink
                         : faded                 ? colors.evicted
                                                 : colors.recent;
    // Subtle enough to read the text on; the two shades mark where one token ends.
    const bool dark = views::isDarkPalette(palette());
    const double base = dark ? 0.78 : 0.86;
    return views::mixColors(state, colors.background, index % 2 ? base : base + 0.07);
}

QColor TokenTextView::tokenBackground(qint64 index) const {
    const Span* span = spanOf(index);
    if (!span) return {};
    return tokenBackground(index, span->role, index < m_fadedBefore);
}

void TokenTextView::appendTokens(const QList<TokenText>& tokens) {
    if (tokens.isEmpty()) return;
    const bool follow = isScrolledToBottom();
    QTextCursor cursor(document());
    cursor.movePosition(QTextCursor::End);
    cursor.beginEditBlock();
    for (const TokenText& token : tokens) {
        QString text = token.text;
        if (token.role == TokenRole::Prompt && m_atLineStart) {
            qsizetype blank = 0;
            while (blank < text.size() && (text[blank] == u' ' || text[blank] == u'\n'))
                ++blank;
            text.remove(0, blank);
        }
        const int start = cursor.position();
        if (!text.isEmpty()) {
            cursor.insertText(text, formatFor(tokenCount(), token.role, false));
            m_atLineStart = text.endsWith(u'\n');
        }
        m_spans.append({start, cursor.position() - start, token.role, token.id, token.position});
    }
    cursor.endEditBlock();
    if (follow) scrollToBottom();
}

void TokenTextView::appendOnOwnLine(const std::function<void(QTextCursor&)>& insert) {
    const bool follow = isScrolledToBottom();
    QTextCursor cursor(document());
    cursor.movePosition(QTextCursor::End);
    cursor.beginEditBlock();
    if (!m_atLineStart) cursor.insertText(QStringLiteral("\n"));
    insert(cursor);
    cursor.endEditBlock();
    m_atLineStart = true;
    if (follow) scrollToBottom();
}

void TokenTextView::appendNote(const QString& note) {
    appendOnOwnLine([this, &note](QTextCursor& cursor) {
        QTextCharFormat format;
        format.setForeground(palette().color(QPalette::PlaceholderText));
        format.setFontItalic(true);
        format.setFontPointSize(qMax(6.0, font().pointSizeF() * 0.85));
        cursor.insertText(note + u'\n', format);
    });
}

void TokenTextView::appendBlock(const QString& html) {
    appendOnOwnLine([&html](QTextCursor& cursor) {
        cursor.insertHtml(html);
        cursor.movePosition(QTextCursor::End);
        cursor.insertBlock(QTextBlockFormat(), QTextCharFormat());
    });
}

void TokenTextView::sealTokens(qint64 nextIndex) {
    restyle(m_fadedBefore, tokenCount(), true); // no longer in this stream's cache
    m_indexBase = nextIndex;
    m_spans.clear();
    setFaded(nextIndex);
    highlightToken(-1);
}

void TokenTextView::strikeFrom(qint64 index) {
    index = std::clamp<qint64>(index, m_indexBase, tokenCount());
    restyle(index, tokenCount(), true);
    QTextCharFormat struck;
    struck.setFontStrikeOut(true);
    QTextCursor cursor(document());
    cursor.beginEditBlock();
    for (qint64 i = index - m_indexBase; i < m_spans.size(); ++i) {
        cursor.setPosition(m_spans[i].start);
        cursor.setPosition(m_spans[i].start + m_spans[i].length, QTextCursor::KeepAnchor);
        cursor.mergeCharFormat(struck);
    }
    cursor.endEditBlock();
    m_spans.resize(index - m_indexBase);
    setFaded(std::min(m_fadedBefore, index));
    if (m_highlighted >= index) highlightToken(-1);
}

const TokenTextView::Span* TokenTextView::spanOf(qint64 index) const {
    const qint64 local = index - m_indexBase;
    return local >= 0 && local < m_spans.size() ? &m_spans[local] : nullptr;
}

void TokenTextView::restyle(qint64 from, qint64 to, bool faded) {
    from = std::clamp<qint64>(from - m_indexBase, 0, m_spans.size());
    to = std::clamp<qint64>(to - m_indexBase, from, m_spans.size());
    QTextCursor cursor(document());
    cursor.beginEditBlock();
    for (qint64 i = from; i < to; ++i) {
        const Span& span = m_spans[i];
        if (span.length == 0) continue;
        cursor.setPosition(span.start);
        cursor.setPosition(span.start + span.length, QTextCursor::KeepAnchor);
        cursor.setCharFormat(formatFor(m_indexBase + i, span.role, faded));
    }
    cursor.endEditBlock();
}

void TokenTextView::setFadedBefore(qint64 index) {
    index = std::clamp<qint64>(index, m_indexBase, tokenCount());
    if (index > m_fadedBefore)
        restyle(m_fadedBefore, index, true);
    else if (index < m_fadedBefore)
        restyle(index, m_fadedBefore, false);
    setFaded(index);
}

void TokenTextView::highlightToken(qint64 index) {
    highlightTokens(index, index + 1);
}

void TokenTextView::highlightTokens(qint64 first, qint64 end) {
    const Span* firstSpan = spanOf(first);
    const Span* lastSpan = spanOf(std::min(end, tokenCount()) - 1);
    if (!firstSpan || !lastSpan || end <= first) {
        m_highlighted = -1;
        setExtraSelections({});
        return;
    }
    m_highlighted = first;
    ExtraSelection selection;
    selection.cursor = QTextCursor(document());
    selection.cursor.setPosition(firstSpan->start);
    selection.cursor.setPosition(lastSpan->start + lastSpan->length, QTextCursor::KeepAnchor);
    const views::MaskColors colors = views::MaskColors::forPalette(palette());
    selection.format.setBackground(views::mixColors(colors.highlight, colors.background, 0.45));
    selection.format.setFontUnderline(true);
    setExtraSelections({selection});
    QTextCursor visible(document());
    visible.setPosition(firstSpan->start);
    setTextCursor(visible);
    ensureCursorVisible();
}

QString TokenTextView::tokenText(qint64 index) const {
    const Span* found = spanOf(index);
    if (!found) return {};
    const Span& span = *found;
    QTextCursor cursor(document());
    cursor.setPosition(span.start);
    cursor.setPosition(span.start + span.length, QTextCursor::KeepAnchor);
    // QTextCursor writes block breaks as U+2029.
    return cursor.selectedText().replace(QChar::ParagraphSeparator, u'\n');
}

QString TokenTextView::highlightedText() const {
    return tokenText(m_highlighted);
}

qint32 TokenTextView::tokenId(qint64 index) const {
    const Span* span = spanOf(index);
    return span ? span->id : -1;
}

qint64 TokenTextView::tokenPosition(qint64 index) const {
    const Span* span = spanOf(index);
    return span ? span->position : -1;
}

TokenState TokenTextView::tokenState(qint64 index) const {
    const Span* span = spanOf(index);
    if (span && span->role == TokenRole::Sink) return TokenState::Sink;
    return index < m_fadedBefore ? TokenState::Evicted : TokenState::Window;
}

QString TokenTextView::tokenToolTip(qint64 index) const {
    if (!spanOf(index)) return {};
    QString tip = tr("Token %1").arg(index);
    if (const qint32 id = tokenId(index); id >= 0) tip += tr(" · id %1").arg(id);
    if (const qint64 position = tokenPosition(index); position >= 0)
        tip += tr(" · position %1").arg(position);
    switch (tokenState(index)) {
    case TokenState::Sink:
        return tip + tr(" · pinned sink");
    case TokenState::Window:
        return tip + tr(" · in the window");
    case TokenState::Evicted:
        break;
    }
    return tip + tr(" · evicted (left the window)");
}

qint64 TokenTextView::tokenAt(int documentPosition) const {
    const auto after =
        std::upper_bound(m_spans.cbegin(), m_spans.cend(), documentPosition,
                         [](int position, const Span& span) { return position < span.start; });
    // Spans are sorted by start; empty spans share a start with the next token.
    for (auto it = after; it != m_spans.cbegin();) {
        --it;
        if (it->length > 0)
            return documentPosition < it->start + it->length ? m_indexBase + (it - m_spans.cbegin())
                                                             : -1;
    }
    return -1;
}

bool TokenTextView::viewportEvent(QEvent* event) {
    if (event->type() != QEvent::ToolTip) return QTextEdit::viewportEvent(event);
    const auto* help = static_cast<QHelpEvent*>(event);
    const QPoint point = help->pos();
    const QString tip = anchorAt(point).isEmpty()
                            ? tokenToolTip(tokenAt(cursorForPosition(point).position()))
                            : QString();
    if (tip.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(help->globalPos(), tip, this);
    return true;
}

void TokenTextView::mouseReleaseEvent(QMouseEvent* event) {
    QTextEdit::mouseReleaseEvent(event);
    if (event->button() != Qt::LeftButton || textCursor().hasSelection()) return;
    const QString href = anchorAt(event->position().toPoint());
    if (!href.isEmpty()) {
        emit linkClicked(href);
        return;
    }
    const qint64 index = tokenAt(cursorForPosition(event->position().toPoint()).position());
    if (index >= 0) emit tokenClicked(index);
}

void TokenTextView::changeEvent(QEvent* event) {
    QTextEdit::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        restyle(m_indexBase, m_fadedBefore, true);
        restyle(m_fadedBefore, tokenCount(), false);
    }
}

bool TokenTextView::isScrolledToBottom() const {
    const QScrollBar* bar = verticalScrollBar();
    return bar->value() >= bar->maximum() - 4;
}

void TokenTextView::scrollToBottom() {
    verticalScrollBar()->setValue(verticalScrollBar()->maximum());
}

} // namespace sinkscope::ui
