// MainWindow and the loads: the status bar's progress with its Cancel, what a cancelled load
// says, and the tools an apply that was cancelled goes back to (the worker kept them in force).
#include "window/main_window.h"

#include "model_files/load_progress.h"
#include "worker/engine_client.h"

#include <QStatusBar>

namespace sinkscope::ui {

void MainWindow::onToolsApplied(const QString& compactJson) {
    m_settings.toolsText = m_toolsEditor->toolsText();
    saveSettings();
    m_engine->stop();
    statusBar()->clearMessage(); // the load's progress says what it does
    const quint64 load = m_engine->applyTools(compactJson);
    m_toolsApplies.insert(load, ToolsState{m_toolsEditor->applied(), m_settings.toolsText});
}

void MainWindow::onLoadProgress(const LoadProgress& progress) {
    m_loadProgress->showProgress(progress);
    if (progress.kind == LoadKind::Tools) followToolsApply(progress);
    if (progress.stage != LoadStage::Cancelled) return;
    const QString kept = m_model ? tr("still using %1").arg(m_model->displayName())
                                 : tr("no model is loaded (File > Open Model…)");
    // A cancelled restore is told by SessionActions (RestoreFailure::Problem::Cancelled).
    if (progress.kind == LoadKind::Model)
        statusBar()->showMessage(tr("Loading %1 was cancelled; %2.").arg(progress.name, kept),
                                 kStatusMessageMs);
    else if (progress.kind == LoadKind::Tools)
        statusBar()->showMessage(
            tr("Applying the tools was cancelled; the tools in force are unchanged."),
            kStatusMessageMs);
}

void MainWindow::followToolsApply(const LoadProgress& progress) {
    if (!progress.ended()) return;
    const auto apply = m_toolsApplies.find(progress.ticket);
    if (apply == m_toolsApplies.end()) return;
    if (progress.stage == LoadStage::Finished) m_toolsInForce = *apply;
    m_toolsApplies.erase(apply);
    // Applies sent after the Cancel still come: the editor waits for the last of them.
    if (progress.stage != LoadStage::Cancelled || !m_toolsApplies.isEmpty() || !m_toolsInForce)
        return;
    m_toolsEditor->restoreApplied(m_toolsInForce->applied);
    m_settings.toolsText = m_toolsInForce->text;
    saveSettings();
}

} // namespace sinkscope::ui
