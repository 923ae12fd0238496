#include "chat_panel/transcript/message_document.h"

#include "chat_panel/call_card.h"
#include "views/view_colors.h"

#include <QFontDatabase>
#include <QGuiApplication>
#include <QTextCursor>
#include <QTextDocument>
#include <QTextFrame>

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

// The notes from the cursor's block on, one a block. Without notes the block takes no height:
// a frame always has a block before and after it.
void insertNotes(QTextCursor& cursor, const QStringList& notes, const QPalette& palette) {
    if (notes.isEmpty()) {
        QTextBlockFormat empty;
        empty.setLineHeight(0, QTextBlockFormat::FixedHeight);
        cursor.setBlockFormat(empty);
        return;
    }
    QTextCharFormat format = mutedFormat(palette, 0.85);
    format.setFontItalic(true);
    for (qsizetype i = 0; i < notes.size(); ++i) {
        if (i > 0) cursor.insertBlock(QTextBlockFormat(), format);
        cursor.insertText(notes[i], format);
    }
}

std::optional<qsizetype> rowOfLink(const QString& href, const QString& scheme) {
    if (!href.startsWith(scheme)) return std::nullopt;
    bool valid = false;
    const qsizetype row = href.mid(scheme.size()).toLongLong(&valid);
    return valid ? std::optional<qsizetype>(row) : std::nullopt;
}

} // namespace

QString copyLink(qsizetype row) {
    return kCopyLink + QString::number(row);
}

QString tokensLink(qsizetype row) {
    return kTokensLink + QString::number(row);
}

std::optional<qsizetype> copyLinkRow(const QString& href) {
    return rowOfLink(href, kCopyLink);
}

std::optional<qsizetype> tokensLinkRow(const QString& href) {
    return rowOfLink(href, kTokensLink);
}

int writeMessageDocument(QTextDocument& document, const ChatMessage& message,
                         const MessageLook& look, const QPalette& palette) {
    document.clear();
    // Beside each other, the boxes' own margins part the messages.
    QTextFrameFormat page = document.rootFrame()->frameFormat();
    page.setMargin(0);
    page.setLeftMargin(4);
    page.setRightMargin(4);
    document.rootFrame()->setFrameFormat(page);
    QTextCursor cursor(&document);
    insertNotes(cursor, look.notesBefore, palette);
    const MessageFade& fade = look.fade;
    const QPalette colors = fade.box ? fadedPalette(palette) : palette;
    cursor.insertFrame(boxFormat(message.role, colors));

    QTextCharFormat speaker;
    speaker.setFontWeight(QFont::Bold);
    speaker.setForeground(speakerColor(message.role, colors));
    cursor.insertText(speakerName(message.role), speaker);
    const QTextCharFormat muted = mutedFormat(colors, 0.85);
    if (fade.left != MessageFade::Left::None)
        cursor.insertText(fade.left == MessageFade::Left::Wholly
                              ? QObject::tr("  · left the KV window")
                              : QObject::tr("  · partly left the KV window"),
                          muted);
    QTextCharFormat link = muted;
    link.setAnchor(true);
    link.setForeground(colors.color(QPalette::Link));
    const auto insertLink = [&](const QString& text, const QString& href) {
        cursor.insertText(QStringLiteral("   "), muted);
        link.setAnchorHref(href);
        cursor.insertText(text, link);
    };
    insertLink(QObject::tr("Copy"), copyLink(look.row));
    if (message.hasTokens()) insertLink(QObject::tr("Tokens"), tokensLink(look.row));

    QTextCharFormat body;
    body.setForeground(colors.color(QPalette::Text));
    if (message.role == TurnRole::ToolResult)
        body.setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    const QString text = message.text.trimmed();
    int textPosition = -1;
    if (!text.isEmpty()) {
        cursor.insertBlock(QTextBlockFormat(), body);
        textPosition = cursor.position();
        QTextCharFormat faded = body;
        faded.setForeground(fadedPalette(palette).color(QPalette::Text));
        cursor.insertText(text.left(fade.chars), faded);
        cursor.insertText(text.mid(fade.chars), body);
    }
    if (look.writingCall) {
        cursor.insertBlock(QTextBlockFormat(), body);
        cursor.insertText(QObject::tr("Writing a tool call…"), mutedFormat(colors, 1.0));
    } else if (look.streaming && text.isEmpty()) {
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
    cursor.movePosition(QTextCursor::End); // out of the box
    insertNotes(cursor, look.notesAfter, palette);
    return textPosition;
}

} // namespace sinkscope::ui
