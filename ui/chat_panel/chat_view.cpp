#include "chat_panel/chat_view.h"

#include "chat_panel/call_card.h"
#include "views/view_colors.h"

#include <QClipboard>
#include <QContextMenuEvent>
#include <QFontDatabase>
#include <QGuiApplication>
#include <QMenu>
#include <QScrollBar>
#include <QTextBlock>
#include <QTextFrame>
#include <QUrl>

namespace sinkscope::ui {

namespace {

const QString kCopyLink = QStringLiteral("copy:");
const QString kTokensLink = QStringLiteral("tokens:");

// The palette a faded message is drawn with: every text colour toward the background.
QPalette fadedPalette(const QPalette& palette) {
    QPalette faded = palette;
    for (const QPalette::ColorRole role :
         {QPalette::Text, QPalette::WindowText, QPalette::PlaceholderText, QPalette::Link})
        faded.setColor(role, views::fadedColor(palette.color(role), palette));
    return faded;
}

QColor speakerColor(TurnRole role, const QPalette& palette) {
    switch (role) {
    case TurnRole::User:
        return palette.color(QPalette::Link);
    case TurnRole::Assistant:
        return palette.color(QPalette::Text);
    case TurnRole::ToolResult:
        break;
    }
    return views::MaskColors::forPalette(palette).sink;
}

QColor boxColor(TurnRole role, const QPalette& palette) {
    const QColor base = palette.color(QPalette::Base);
    switch (role) {
    case TurnRole::User:
        return views::mixColors(base, palette.color(QPalette::Link), 0.08);
    case TurnRole::Assistant:
        return views::mixColors(base, palette.color(QPalette::Text), 0.035);
    case TurnRole::ToolResult:
        break;
    }
    return views::mixColors(base, views::MaskColors::forPalette(palette).sink, 0.07);
}

QTextFrameFormat boxFormat(TurnRole role, const QPalette& colors) {
    QTextFrameFormat box;
    box.setBackground(boxColor(role, colors));
    box.setPadding(8);
    box.setTopMargin(4);
    box.setBottomMargin(4);
    box.setBorder(0);
    return box;
}

QTextCharFormat mutedFormat(const QPalette& palette, double scale) {
    QTextCharFormat format;
    format.setForeground(palette.color(QPalette::PlaceholderText));
    format.setFontPointSize(qMax(6.0, QGuiApplication::font().pointSizeF() * scale));
    return format;
}

} // namespace

ChatView::ChatView(QWidget* parent) : QTextBrowser(parent) {
    setOpenLinks(false);
    setUndoRedoEnabled(false);
    connect(this, &QTextBrowser::anchorClicked, this, &ChatView::onLink);
}

void ChatView::clearChat() {
    m_messages.clear();
    m_notes.clear();
    m_tokenTexts.reset();
    m_streaming = false;
    m_fadedBefore = 0;
    render();
}

void ChatView::setTranscriptTexts(const QStringList& texts) {
    m_tokenTexts.reset();
    for (qsizetype index = 0; index < texts.size(); ++index)
        m_tokenTexts.set(index, texts[index]);
    render();
}

void ChatView::setConversation(const QList<TurnView>& turns, qint64 transcriptEnd) {
    QList<ChatMessage> messages = messagesOf(turns, transcriptEnd);
    for (qsizetype i = 0; i < messages.size() && i < m_messages.size(); ++i) {
        const ChatMessage& shown = m_messages[i];
        if (shown.role != messages[i].role) break; // another conversation from here on
        // The same calls; those shown may carry the attribution the turn does not keep.
        if (shown.calls.size() == messages[i].calls.size()) messages[i].calls = shown.calls;
        messages[i].confidence = shown.confidence;
        messages[i].callError = shown.callError;
        messages[i].footer = shown.footer;
    }
    m_messages = messages;
    m_streaming = false;
    render();
}

void ChatView::addSent(TurnRole role, const QString& text) {
    ChatMessage& message = m_messages.emplace_back();
    message.role = role;
    message.text = text;
    m_streaming = false;
    render();
}

void ChatView::appendPieces(const QList<StreamPiece>& pieces) {
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
            m_messages.emplace_back().role = TurnRole::Assistant;
            m_reply = StreamedReply(m_callMarkers);
            m_streaming = true;
            render();
        }
        ChatMessage& reply = m_messages.last();
        if (reply.firstToken < 0) reply.firstToken = piece.transcriptIndex;
        reply.endToken = piece.transcriptIndex + 1;
        m_reply.append(piece);
        grew = true;
    }
    if (!grew) return;
    if (m_streaming) m_messages.last().text = m_reply.text();
    layOutLast();
    renderMessage(m_messages.size() - 1);
}

void ChatView::layOutLast() {
    if (m_messages.isEmpty() || m_texts.size() != m_messages.size()) return;
    m_texts.last() = layOnTokens(std::span(&m_messages.constLast(), 1), m_tokenTexts).constFirst();
}

void ChatView::finishReply(const QList<ToolCallView>& calls, double confidence,
                           const QString& callError, const QString& footer) {
    m_streaming = false;
    for (auto message = m_messages.rbegin(); message != m_messages.rend(); ++message) {
        if (message->role != TurnRole::Assistant) continue;
        if (calls.size() == message->calls.size()) message->calls = calls;
        message->confidence = confidence;
        message->callError = callError;
        message->footer = footer;
        break;
    }
    render();
}

void ChatView::appendNote(const QString& note) {
    m_notes.append({m_messages.size(), note});
    render();
}

ChatView::Fade ChatView::fadeOf(qsizetype message) const {
    const ChatMessage& shown = m_messages[message];
    Fade fade;
    if (!shown.hasTokens() || shown.firstToken >= m_fadedBefore) return fade;
    if (shown.endToken > m_fadedBefore) {
        fade.left = Fade::Left::Partly;
        const TextOnTokens& text = m_texts[message];
        if (text.isKnown()) {
            fade.chars = text.fadedLength(m_fadedBefore);
            return fade;
        }
    } else {
        fade.left = Fade::Left::Wholly;
    }
    fade.box = true;
    fade.chars = shown.text.trimmed().size();
    return fade;
}

bool ChatView::isFaded(qsizetype message) const {
    return message >= 0 && message < m_messages.size() && fadeOf(message).left != Fade::Left::None;
}

qsizetype ChatView::fadedLength(qsizetype message) const {
    return message >= 0 && message < m_messages.size() ? fadeOf(message).chars : 0;
}

int ChatView::textPosition(qsizetype message) const {
    if (message < 0 || message >= m_frames.size() || m_messages[message].text.trimmed().isEmpty())
        return -1;
    // fill(): the header's block, then the text's.
    return document()->findBlock(m_frames[message]->firstPosition()).next().position();
}

void ChatView::setFadedBefore(qint64 index) {
    m_fadedBefore = index;
    for (qsizetype i = 0; i < m_fades.size(); ++i)
        if (fadeOf(i) != m_fades[i]) renderMessage(i);
}

bool ChatView::isScrolledToBottom() const {
    const QScrollBar* bar = verticalScrollBar();
    return bar->value() >= bar->maximum() - 4;
}

void ChatView::render() {
    const bool follow = isScrolledToBottom();
    const int scrolled = verticalScrollBar()->value();
    m_texts =
        layOnTokens(std::span(m_messages.constData(), size_t(m_messages.size())), m_tokenTexts);
    document()->clear();
    m_frames.clear();
    m_fades.clear();
    QTextCursor cursor(document());
    qsizetype note = 0;
    for (qsizetype i = 0; i <= m_messages.size(); ++i) {
        for (; note < m_notes.size() && m_notes[note].first <= i; ++note)
            insertNote(cursor, m_notes[note].second);
        if (i == m_messages.size()) break;
        const Fade fade = fadeOf(i);
        const QPalette colors = fade.box ? fadedPalette(palette()) : palette();
        m_frames.append(cursor.insertFrame(boxFormat(m_messages[i].role, colors)));
        m_fades.append(fade);
        fill(cursor, i);
        cursor.movePosition(QTextCursor::End); // out of the box
    }
    verticalScrollBar()->setValue(follow ? verticalScrollBar()->maximum() : scrolled);
}

void ChatView::renderMessage(qsizetype index) {
    if (m_frames.size() != m_messages.size() || index < 0 || index >= m_frames.size())
        return render();
    const bool follow = isScrolledToBottom();
    const int scrolled = verticalScrollBar()->value();
    const Fade fade = fadeOf(index);
    QTextFrame* frame = m_frames[index];
    QTextCursor cursor(document());
    cursor.beginEditBlock();
    frame->setFrameFormat(
        boxFormat(m_messages[index].role, fade.box ? fadedPalette(palette()) : palette()));
    cursor.setPosition(frame->firstPosition());
    cursor.setPosition(frame->lastPosition(), QTextCursor::KeepAnchor);
    cursor.removeSelectedText();
    fill(cursor, index);
    cursor.endEditBlock();
    m_fades[index] = fade;
    verticalScrollBar()->setValue(follow ? verticalScrollBar()->maximum() : scrolled);
}

void ChatView::fill(QTextCursor& cursor, qsizetype index) {
    const ChatMessage& message = m_messages[index];
    const Fade fade = fadeOf(index);
    const QPalette colors = fade.box ? fadedPalette(palette()) : palette();

    QTextCharFormat speaker;
    speaker.setFontWeight(QFont::Bold);
    speaker.setForeground(speakerColor(message.role, colors));
    cursor.insertText(speakerName(message.role), speaker);
    const QTextCharFormat muted = mutedFormat(colors, 0.85);
    if (fade.left != Fade::Left::None)
        cursor.insertText(fade.left == Fade::Left::Wholly ? tr("  · left the KV window")
                                                          : tr("  · partly left the KV window"),
                          muted);
    QTextCharFormat link = muted;
    link.setAnchor(true);
    link.setForeground(colors.color(QPalette::Link));
    const auto insertLink = [&](const QString& text, const QString& href) {
        cursor.insertText(QStringLiteral("   "), muted);
        link.setAnchorHref(href);
        cursor.insertText(text, link);
    };
    insertLink(tr("Copy"), kCopyLink + QString::number(index));
    if (message.hasTokens()) insertLink(tr("Tokens"), kTokensLink + QString::number(index));

    QTextCharFormat body;
    body.setForeground(colors.color(QPalette::Text));
    if (message.role == TurnRole::ToolResult)
        body.setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    const QString text = message.text.trimmed();
    const bool streaming = m_streaming && index == m_messages.size() - 1;
    if (!text.isEmpty()) {
        cursor.insertBlock(QTextBlockFormat(), body);
        QTextCharFormat faded = body;
        faded.setForeground(fadedPalette(palette()).color(QPalette::Text));
        cursor.insertText(text.left(fade.chars), faded);
        cursor.insertText(text.mid(fade.chars), body);
    }
    if (streaming && m_reply.writingCall()) {
        cursor.insertBlock(QTextBlockFormat(), body);
        cursor.insertText(tr("Writing a tool call…"), mutedFormat(colors, 1.0));
    } else if (streaming && text.isEmpty()) {
        cursor.insertBlock(QTextBlockFormat(), body);
        cursor.insertText(QStringLiteral("…"), mutedFormat(colors, 1.0));
    }
    for (const ToolCallView& call : message.calls) {
        cursor.insertBlock(QTextBlockFormat(), body);
        cursor.insertHtml(callCardHtml(call, message.confidence, colors));
    }
    if (!message.callError.isEmpty()) {
        cursor.insertBlock(QTextBlockFormat(), body);
        cursor.insertHtml(callErrorHtml(message.callError, colors));
    }
    if (!message.footer.isEmpty()) {
        QTextCharFormat footer = mutedFormat(colors, 0.85);
        footer.setFontItalic(true);
        cursor.insertBlock(QTextBlockFormat(), footer);
        cursor.insertText(message.footer, footer);
    }
}

void ChatView::insertNote(QTextCursor& cursor, const QString& note) {
    QTextCharFormat format = mutedFormat(palette(), 0.85);
    format.setFontItalic(true);
    cursor.insertBlock(QTextBlockFormat(), format);
    cursor.insertText(note, format);
}

qsizetype ChatView::messageAt(const QPoint& viewportPoint) const {
    return messageAtPosition(cursorForPosition(viewportPoint).position());
}

qsizetype ChatView::messageAtPosition(int position) const {
    for (qsizetype i = 0; i < m_frames.size(); ++i)
        if (position >= m_frames[i]->firstPosition() && position <= m_frames[i]->lastPosition())
            return i;
    return -1;
}

QRect ChatView::messageRect(qsizetype message) {
    if (message < 0 || message >= m_frames.size()) return {};
    QTextCursor cursor(document());
    cursor.setPosition(m_frames[message]->firstPosition());
    setTextCursor(cursor);
    ensureCursorVisible();
    const QRect first = cursorRect(cursor);
    cursor.setPosition(m_frames[message]->lastPosition());
    return first.united(cursorRect(cursor));
}

void ChatView::copyMessage(qsizetype message) const {
    if (message < 0 || message >= m_messages.size()) return;
    QGuiApplication::clipboard()->setText(messagePlainText(m_messages[message]));
}

void ChatView::onLink(const QUrl& url) {
    const QString href = url.toString();
    if (const std::optional<QString> tool = toolOfLink(href)) {
        emit toolClicked(*tool);
        return;
    }
    bool valid = false;
    if (href.startsWith(kCopyLink)) {
        const qsizetype message = href.mid(kCopyLink.size()).toLongLong(&valid);
        if (valid) copyMessage(message);
    } else if (href.startsWith(kTokensLink)) {
        const qsizetype message = href.mid(kTokensLink.size()).toLongLong(&valid);
        if (valid) viewTokens(message);
    }
}

void ChatView::viewTokens(qsizetype message) {
    if (message < 0 || message >= m_messages.size() || !m_messages[message].hasTokens()) return;
    emit viewTokensRequested(m_messages[message].firstToken, m_messages[message].endToken);
}

void ChatView::contextMenuEvent(QContextMenuEvent* event) {
    QMenu* menu = createStandardContextMenu(event->pos());
    const qsizetype message = messageAt(event->pos());
    menu->addSeparator();
    if (message >= 0) {
        menu->addAction(tr("Copy Message"), this, [this, message] { copyMessage(message); });
        QAction* tokens = menu->addAction(tr("View Message as Tokens"), this,
                                          [this, message] { viewTokens(message); });
        tokens->setEnabled(m_messages[message].hasTokens());
    }
    menu->addActions(m_menuActions);
    menu->setAttribute(Qt::WA_DeleteOnClose);
    menu->popup(event->globalPos());
}

void ChatView::changeEvent(QEvent* event) {
    QTextBrowser::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) render();
}

} // namespace sinkscope::ui
