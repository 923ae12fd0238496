#include "window/status_banner.h"

#include "views/view_colors.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QToolButton>

namespace sinkscope::ui {

StatusBanner::StatusBanner(QWidget* parent) : QFrame(parent) {
    setObjectName(QStringLiteral("statusBanner"));
    setFrameShape(QFrame::StyledPanel);
    setAutoFillBackground(true);
    m_text = new QLabel(this);
    m_text->setObjectName(QStringLiteral("statusBannerText"));
    m_text->setWordWrap(true);
    m_text->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_close = new QToolButton(this);
    m_close->setText(QStringLiteral("✕"));
    m_close->setToolTip(tr("Dismiss"));
    m_close->setAutoRaise(true);
    connect(m_close, &QToolButton::clicked, this, &QWidget::hide);

    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(8, 4, 4, 4);
    layout->addWidget(m_text, 1);
    layout->addWidget(m_close, 0, Qt::AlignTop);
    hide();
}

void StatusBanner::showError(const QString& message) {
    showMessage(message, true);
}

void StatusBanner::showNotice(const QString& message) {
    showMessage(message, false);
}

QString StatusBanner::message() const {
    return m_text->text();
}

void StatusBanner::showMessage(const QString& message, bool error) {
    m_error = error;
    m_text->setText(message);
    // Tinted from the palette so that the banner reads in light and dark themes.
    QPalette colors = parentWidget() ? parentWidget()->palette() : palette();
    const QColor base = colors.color(QPalette::Window);
    const QColor accent =
        error ? views::MaskColors::forPalette(colors).errorText : colors.color(QPalette::Highlight);
    colors.setColor(QPalette::Window, views::mixColors(base, accent, 0.18));
    setPalette(colors);
    show();
}

} // namespace sinkscope::ui
