#include "views/live_label.h"

#include <QAction>
#include <QClipboard>
#include <QGuiApplication>
#include <QHelpEvent>
#include <QPainter>
#include <QStyle>
#include <QToolTip>

namespace sinkscope::views {

namespace {

constexpr int kMinimumCharacters = 8; // the narrowest the layout may make it, in average widths

} // namespace

LiveLabel::LiveLabel(const QString& widthSample, QWidget* parent)
    : QWidget(parent), m_widthSample(widthSample) {
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
    auto* copy = new QAction(tr("Copy"), this);
    connect(copy, &QAction::triggered, this,
            [this] { QGuiApplication::clipboard()->setText(m_text); });
    addAction(copy);
    setContextMenuPolicy(Qt::ActionsContextMenu);
}

void LiveLabel::setText(const QString& text) {
    if (text == m_text) return;
    m_text = text;
    update();
}

bool LiveLabel::fitsWidth() const {
    return fontMetrics().horizontalAdvance(m_text) <= contentsRect().width();
}

QSize LiveLabel::sizeHint() const {
    const QFontMetrics metrics = fontMetrics();
    return {metrics.horizontalAdvance(m_widthSample) + metrics.averageCharWidth(),
            metrics.height()};
}

QSize LiveLabel::minimumSizeHint() const {
    const QFontMetrics metrics = fontMetrics();
    return {metrics.averageCharWidth() * kMinimumCharacters, metrics.height()};
}

void LiveLabel::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    const QRect area = contentsRect();
    const QString shown = fontMetrics().elidedText(m_text, Qt::ElideRight, area.width());
    style()->drawItemText(&painter, area, Qt::AlignLeft | Qt::AlignVCenter, palette(), isEnabled(),
                          shown, foregroundRole());
}

// The tooltip shows the whole text when the line is elided; a tooltip set with setToolTip wins.
bool LiveLabel::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip && toolTip().isEmpty()) {
        const auto* help = static_cast<QHelpEvent*>(event);
        if (fitsWidth())
            QToolTip::hideText();
        else
            QToolTip::showText(help->globalPos(), m_text, this);
        return true;
    }
    return QWidget::event(event);
}

} // namespace sinkscope::views
