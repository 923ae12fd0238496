#include "model_files/load_progress.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>

namespace sinkscope::ui {

namespace {

QString loadText(const LoadProgress& progress) {
    switch (progress.kind) {
    case LoadKind::Model:
        return LoadProgressWidget::tr("Loading %1").arg(progress.name);
    case LoadKind::Session:
        return LoadProgressWidget::tr("Restoring the session (%1)").arg(progress.name);
    case LoadKind::Tools:
        break;
    }
    return LoadProgressWidget::tr("Pinning the tools");
}

} // namespace

LoadProgressWidget::LoadProgressWidget(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("loadProgress"));
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_label = new QLabel(this);
    m_bar = new QProgressBar(this);
    m_bar->setMaximumWidth(120);
    m_bar->setTextVisible(false);
    m_cancel = new QPushButton(tr("Cancel"), this);
    m_cancel->setToolTip(tr("Stop loading; the model, chat and tools in use stay as they are"));
    layout->addWidget(m_label);
    layout->addWidget(m_bar);
    layout->addWidget(m_cancel);
    connect(m_cancel, &QPushButton::clicked, this, [this] {
        m_cancelledTicket = m_ticket;
        m_cancel->setEnabled(false);
        m_label->setText(tr("%1: cancelling…").arg(m_title));
        emit cancelRequested();
    });
    hide();
}

void LoadProgressWidget::showProgress(const LoadProgress& progress) {
    if (progress.ended()) {
        hide();
        return;
    }
    m_ticket = progress.ticket;
    if (m_cancelledTicket == progress.ticket) return; // still "cancelling…" until it ends
    m_cancel->setEnabled(true);
    m_title = loadText(progress);
    QString text = tr("%1: %2").arg(m_title, loadStageText(progress.stage));
    if (progress.total > 0) {
        text += tr(" %1 / %2").arg(progress.done).arg(progress.total);
        m_bar->setRange(0, progress.total);
        m_bar->setValue(progress.done);
    } else {
        m_bar->setRange(0, 0); // busy: the stage has no measure
    }
    m_label->setText(text);
    show();
}

QString LoadProgressWidget::text() const {
    return m_label->text();
}

} // namespace sinkscope::ui
