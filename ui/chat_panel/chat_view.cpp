#include "chat_panel/chat_view.h"

#include "chat_panel/call_card.h"
#include "chat_panel/transcript/message_delegate.h"
#include "chat_panel/transcript/message_document.h"

#include <QAbstractTextDocumentLayout>
#include <QClipboard>
#include <QContextMenuEvent>
#include <QGuiApplication>
#include <QMenu>
#include <QPainter>
#include <QScrollBar>
#include <QTextDocument>

namespace sinkscope::ui {

ChatView::ChatView(QWidget* parent) : QListView(parent) {
    m_model = new TranscriptModel(this);
    setModel(m_model);
    m_delegate = new MessageDelegate(m_model, this);
    setItemDelegate(m_delegate);
    setVerticalScrollMode(QAbstractItemView::ScrollPerPixel);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setResizeMode(QListView::Adjust);
    setSelectionMode(QAbstractItemView::SingleSelection);
    setEditTriggers(QAbstractItemView::NoEditTriggers);
    setMouseTracking(true); // the pointer shows where a link is
    // After the delegate's own handler: the rows changed are laid out anew on screen.
    connect(m_model, &QAbstractItemModel::dataChanged, this,
            [this](const QModelIndex& first, const QModelIndex& last) {
                onRowsChanged(first.row(), last.row());
            });
    QScrollBar* bar = verticalScrollBar();
    connect(bar, &QScrollBar::valueChanged, this, [this, bar](int value) {
        m_followBottom = value >= bar->maximum() - 4;
        if (!m_layingOut) layOutShown(); // the messages scrolled into view
    });
    connect(bar, &QScrollBar::rangeChanged, this, [this, bar](int, int maximum) {
        if (m_followBottom) bar->setValue(maximum);
    });
}

bool ChatView::isFaded(qsizetype message) const {
    return m_model->fadeOf(message).left != MessageFade::Left::None;
}

qsizetype ChatView::fadedLength(qsizetype message) const {
    return m_model->fadeOf(message).chars;
}

const QTextDocument* ChatView::messageDocument(qsizetype message) const {
    return m_delegate->document(message);
}

int ChatView::textPosition(qsizetype message) const {
    return m_delegate->textPosition(message);
}

qsizetype ChatView::messageAt(const QPoint& viewportPoint) const {
    const QModelIndex index = indexAt(viewportPoint);
    return index.isValid() ? index.row() : -1;
}

QRect ChatView::messageRect(qsizetype message) {
    if (message < 0 || message >= m_model->rowCount()) return {};
    const QModelIndex index = m_model->index(int(message));
    scrollTo(index);
    layOutShown();
    scrollTo(index); // its height, and those above it on screen, are known now
    return visualRect(index);
}

void ChatView::showMessage(qsizetype message) {
    if (message < 0 || message >= m_model->rowCount()) return;
    const QModelIndex index = m_model->index(int(message));
    setCurrentIndex(index);
    scrollTo(index, QAbstractItemView::PositionAtCenter);
    layOutShown();
    scrollTo(index, QAbstractItemView::PositionAtCenter);
}

qsizetype ChatView::findOlder(const QString& text) {
    const qsizetype count = m_model->rowCount();
    const qsizetype from = currentIndex().isValid() ? currentIndex().row() : count;
    for (qsizetype step = 1; step <= count; ++step) {
        const qsizetype row = ((from - step) % count + count) % count;
        if (m_model->holds(row, text)) {
            showMessage(row);
            return row;
        }
    }
    return -1;
}

void ChatView::copyMessage(qsizetype message) const {
    if (message < 0 || message >= m_model->rowCount()) return;
    QGuiApplication::clipboard()->setText(messagePlainText(messages()[message]));
}

void ChatView::doItemsLayout() {
    QListView::doItemsLayout();
    if (!m_layingOut) layOutShown();
}

void ChatView::layOutShown() {
    if (m_layingOut || m_model->rowCount() == 0) return;
    m_layingOut = true;
    // Each pass lays out the rows on screen at their estimated places; the list then places them
    // at their heights, which may bring others on screen (a few passes at most).
    for (int pass = 0; pass < 4; ++pass) {
        if (m_followBottom) verticalScrollBar()->setValue(verticalScrollBar()->maximum());
        const QModelIndex top = indexAt(QPoint(1, 0));
        const QModelIndex bottom = indexAt(QPoint(1, viewport()->height() - 1));
        const qsizetype first = top.isValid() ? top.row() : 0;
        const qsizetype last = bottom.isValid() ? bottom.row() : m_model->rowCount() - 1;
        if (!m_delegate->layOut(first, last)) break;
        QListView::doItemsLayout();
    }
    if (m_followBottom) verticalScrollBar()->setValue(verticalScrollBar()->maximum());
    m_layingOut = false;
}

void ChatView::onRowsChanged(int first, int last) {
    // Rows off screen keep their height until they are shown; one on screen that changed height
    // (a streamed line more) moves those after it.
    const QModelIndex top = indexAt(QPoint(1, 0));
    const QModelIndex bottom = indexAt(QPoint(1, viewport()->height() - 1));
    const int shownFirst = qMax(first, top.isValid() ? top.row() : 0);
    const int shownLast = qMin(last, bottom.isValid() ? bottom.row() : m_model->rowCount() - 1);
    if (shownFirst <= shownLast && m_delegate->layOut(shownFirst, shownLast))
        scheduleDelayedItemsLayout();
}

void ChatView::paintEvent(QPaintEvent* event) {
    if (m_model->rowCount() > 0 || m_placeholder.isEmpty()) {
        QListView::paintEvent(event);
        return;
    }
    QPainter painter(viewport());
    painter.setPen(palette().color(QPalette::PlaceholderText));
    painter.drawText(viewport()->rect().adjusted(8, 8, -8, -8), Qt::TextWordWrap, m_placeholder);
}

QString ChatView::linkAt(const QPoint& viewportPoint) const {
    const QModelIndex index = indexAt(viewportPoint);
    if (!index.isValid()) return {};
    const QTextDocument* document = messageDocument(index.row());
    return document->documentLayout()->anchorAt(viewportPoint - visualRect(index).topLeft());
}

void ChatView::mouseMoveEvent(QMouseEvent* event) {
    QListView::mouseMoveEvent(event);
    if (linkAt(event->position().toPoint()).isEmpty())
        viewport()->unsetCursor();
    else
        viewport()->setCursor(Qt::PointingHandCursor);
}

void ChatView::mouseReleaseEvent(QMouseEvent* event) {
    QListView::mouseReleaseEvent(event);
    if (event->button() != Qt::LeftButton) return;
    const QString href = linkAt(event->position().toPoint());
    if (!href.isEmpty()) onLink(href);
}

void ChatView::keyPressEvent(QKeyEvent* event) {
    if (event->matches(QKeySequence::Copy) && currentIndex().isValid()) {
        copyMessage(currentIndex().row());
        return;
    }
    QListView::keyPressEvent(event);
}

void ChatView::onLink(const QString& href) {
    if (const std::optional<QString> tool = toolOfLink(href))
        emit toolClicked(*tool);
    else if (const std::optional<qsizetype> row = copyLinkRow(href))
        copyMessage(*row);
    else if (const std::optional<qsizetype> row = tokensLinkRow(href))
        viewTokens(*row);
}

void ChatView::viewTokens(qsizetype message) {
    if (message < 0 || message >= messages().size() || !messages()[message].hasTokens()) return;
    emit viewTokensRequested(messages()[message].firstToken, messages()[message].endToken);
}

void ChatView::contextMenuEvent(QContextMenuEvent* event) {
    auto* menu = new QMenu(this);
    const qsizetype message = messageAt(event->pos());
    if (message >= 0) {
        menu->addAction(tr("Copy Message"), this, [this, message] { copyMessage(message); });
        QAction* tokens = menu->addAction(tr("View Message as Tokens"), this,
                                          [this, message] { viewTokens(message); });
        tokens->setEnabled(messages()[message].hasTokens());
        menu->addSeparator();
    }
    menu->addActions(m_menuActions);
    menu->setAttribute(Qt::WA_DeleteOnClose);
    menu->popup(event->globalPos());
}

void ChatView::changeEvent(QEvent* event) {
    QListView::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::FontChange) {
        m_delegate->forgetAll();
        scheduleDelayedItemsLayout();
    }
}

} // namespace sinkscope::ui
