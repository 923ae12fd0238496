#include "window/kv_timeline_export.h"

#include "window/status_banner.h"
#include "worker/display_text.h"
#include "worker/engine_client.h"
#include "worker/kv_timeline_csv.h"

#include <QDir>
#include <QFileDialog>
#include <QMainWindow>
#include <QStatusBar>

namespace sinkscope::ui {

namespace {

constexpr int kStatusMessageMs = 10000;

} // namespace

KvTimelineExport::KvTimelineExport(QMainWindow& window, EngineClient& engine, StatusBanner& banner)
    : QObject(&window), m_window(window), m_engine(engine), m_banner(banner) {
    connect(&engine, &EngineClient::kvTimelineExported, this, &KvTimelineExport::onExported);
}

// Window-modal, not exec(): the engine keeps streaming while the dialog is open.
void KvTimelineExport::chooseFile() {
    auto* dialog =
        new QFileDialog(&m_window, tr("Export KV Timeline"), QStringLiteral("kv-timeline.csv"),
                        tr("CSV files (*.csv);;All files (*)"));
    dialog->setObjectName(QStringLiteral("kvTimelineDialog"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setAcceptMode(QFileDialog::AcceptSave);
    dialog->setDefaultSuffix(QStringLiteral("csv"));
    connect(dialog, &QFileDialog::fileSelected, this, &KvTimelineExport::exportTo);
    dialog->open();
}

void KvTimelineExport::exportTo(const QString& path) {
    m_window.statusBar()->showMessage(
        tr("Writing the KV timeline to %1…").arg(QDir::toNativeSeparators(path)));
    m_engine.exportKvTimeline(path);
}

void KvTimelineExport::onExported(const KvTimelineExported& result) {
    const QString shown = QDir::toNativeSeparators(result.path);
    if (!result.error.isEmpty()) {
        m_banner.showError(
            tr("Could not write the KV timeline to %1: %2").arg(shown, result.error));
        m_window.statusBar()->showMessage(tr("KV timeline not saved"), kStatusMessageMs);
        return;
    }
    QString message =
        tr("KV timeline saved to %1: %2").arg(shown, countOf(result.rows, tr("step"), tr("steps")));
    if (result.dropped > 0)
        message +=
            tr(" (the session's first %1 steps are left out: the timeline keeps the last %2)")
                .arg(result.dropped)
                .arg(kKvTimelineCapacity);
    m_window.statusBar()->showMessage(message, kStatusMessageMs);
}

} // namespace sinkscope::ui
