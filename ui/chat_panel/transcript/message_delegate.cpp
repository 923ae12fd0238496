#include "chat_panel/transcript/message_delegate.h"

#include "chat_panel/transcript/message_document.h"
#include "chat_panel/transcript/transcript_model.h"

#include <QAbstractTextDocumentLayout>
#include <QListView>
#include <QPainter>
#include <QtMath>

namespace sinkscope::ui {

namespace {

constexpr qsizetype kKeptDocuments = 300; // a few screens of messages
constexpr int kBoxChrome = 4 + 4 + 8 + 8; // the box's margins and padding, top and bottom

} // namespace

MessageDelegate::MessageDelegate(const TranscriptModel* model, QListView* view)
    : QAbstractItemDelegate(view), m_model(model), m_view(view) {
    connect(model, &QAbstractItemModel::dataChanged, this,
            [this](const QModelIndex& first, const QModelIndex& last) {
                forget(first.row(), last.row());
            });
    connect(model, &QAbstractItemModel::rowsInserted, this,
            [this](const QModelIndex&, int first, int last) { onRowsInserted(first, last); });
    connect(model, &QAbstractItemModel::rowsRemoved, this,
            [this](const QModelIndex&, int first, int last) { onRowsRemoved(first, last); });
    connect(model, &QAbstractItemModel::modelReset, this, &MessageDelegate::forgetAll);
}

void MessageDelegate::forgetAll() {
    m_width = -1; // the font's measures too
    m_laid.clear();
    m_laidOrder.clear();
    m_heights.fill(-1, m_model->rowCount());
}

void MessageDelegate::forget(qsizetype first, qsizetype last) {
    // The height stays as the estimate until the row is laid out again.
    if (last - first < qsizetype(m_laid.size())) {
        for (qsizetype row = first; row <= last; ++row)
            m_laid.erase(row);
        return;
    }
    std::erase_if(m_laid, [first, last](const auto& entry) {
        return entry.first >= first && entry.first <= last;
    });
}

void MessageDelegate::onRowsInserted(int first, int last) {
    m_heights.insert(first, last - first + 1, -1);
    m_laid.clear(); // documents are kept by row, and name their row in their links
    m_laidOrder.clear();
}

void MessageDelegate::onRowsRemoved(int first, int last) {
    m_heights.remove(first, qMin<qsizetype>(last - first + 1, m_heights.size() - first));
    m_laid.clear();
    m_laidOrder.clear();
}

int MessageDelegate::width() const {
    const int width = m_view->viewport()->width();
    if (width != m_width) { // every row wraps anew
        m_width = width;
        const QFontMetrics metrics(m_view->font());
        m_lineSpacing = metrics.lineSpacing();
        m_charWidth = qMax(1, metrics.averageCharWidth());
        m_laid.clear();
        m_laidOrder.clear();
        m_heights.fill(-1, m_model->rowCount());
    }
    return qMax(width, 40);
}

const MessageDelegate::Laid& MessageDelegate::laidOut(qsizetype row) const {
    const int textWidth = width();
    if (const auto kept = m_laid.find(row); kept != m_laid.end()) return kept->second;
    Laid laid;
    laid.document = std::make_unique<QTextDocument>();
    laid.document->setDefaultFont(m_view->font());
    laid.document->setUndoRedoEnabled(false);
    MessageLook look;
    look.row = row;
    look.fade = m_model->fadeOf(row);
    look.notesBefore = m_model->notesBefore(row);
    look.notesAfter = m_model->notesAfter(row);
    look.streaming = m_model->isStreaming(row);
    look.writingCall = look.streaming && m_model->isWritingCall();
    laid.textPosition =
        writeMessageDocument(*laid.document, m_model->messages()[row], look, m_view->palette());
    laid.document->setTextWidth(textWidth);
    while (m_laidOrder.size() >= kKeptDocuments)
        m_laid.erase(m_laidOrder.dequeue());
    m_laidOrder.enqueue(row);
    return m_laid.insert_or_assign(row, std::move(laid)).first->second;
}

const QTextDocument* MessageDelegate::document(qsizetype row) const {
    if (row < 0 || row >= m_model->rowCount()) return nullptr;
    return laidOut(row).document.get();
}

int MessageDelegate::textPosition(qsizetype row) const {
    if (row < 0 || row >= m_model->rowCount()) return -1;
    return laidOut(row).textPosition;
}

bool MessageDelegate::layOut(qsizetype first, qsizetype last) const {
    bool moved = false;
    for (qsizetype row = qMax<qsizetype>(first, 0); row <= last && row < m_model->rowCount();
         ++row) {
        const int height = qCeil(laidOut(row).document->size().height());
        moved = moved || m_heights[row] != height;
        m_heights[row] = height;
    }
    return moved;
}

int MessageDelegate::estimatedHeight(qsizetype row) const {
    const ChatMessage& message = m_model->messages()[row];
    const int line = m_lineSpacing;
    const qsizetype perLine = qMax(1, (width() - 2 * 12) / m_charWidth);
    const qsizetype textLines =
        message.text.isEmpty() ? 0 : message.text.size() / perLine + 1 + message.text.count(u'\n');
    const qsizetype calls = message.calls.size() * 4 + !message.callError.isEmpty();
    const qsizetype notes = m_model->notesBefore(row).size() + m_model->notesAfter(row).size();
    const qsizetype lines = 1 + textLines + calls + !message.footer.isEmpty() + notes;
    return kBoxChrome + int(lines) * line;
}

QSize MessageDelegate::sizeHint(const QStyleOptionViewItem&, const QModelIndex& index) const {
    const int textWidth = width();
    const qsizetype row = index.row();
    if (row < 0 || row >= m_heights.size()) return {};
    const int height = m_heights[row];
    return {textWidth, height >= 0 ? height : estimatedHeight(row)};
}

void MessageDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option,
                            const QModelIndex& index) const {
    const QTextDocument* laid = document(index.row());
    if (!laid) return;
    painter->save();
    painter->setClipRect(option.rect); // a row laid out anew is drawn in its old height once
    painter->translate(option.rect.topLeft());
    QAbstractTextDocumentLayout::PaintContext context;
    context.palette = option.palette;
    context.clip = QRectF(0, 0, option.rect.width(), option.rect.height());
    laid->documentLayout()->draw(painter, context);
    if (option.state & QStyle::State_Selected) { // a message found, or clicked
        painter->setPen(QPen(option.palette.color(QPalette::Highlight), 2));
        painter->setBrush(Qt::NoBrush);
        painter->drawRect(QRectF(3, 3, option.rect.width() - 6, option.rect.height() - 6));
    }
    painter->restore();
}

} // namespace sinkscope::ui
