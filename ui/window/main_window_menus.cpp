// MainWindow's menus, status bar and the dialogs they open (the window's layout and its engine
// wiring are in main_window.cpp).
#include "window/main_window.h"

#include "chat_panel/chat_markdown.h"
#include "chat_panel/chat_panel.h"
#include "chat_panel/chat_view.h"
#include "chat_panel/message_input.h"
#include "model_files/load_progress.h"
#include "model_files/model_info_dialog.h"
#include "model_files/recent_models.h"
#include "session/session_actions.h"
#include "views/mask_heatmap.h"
#include "views/memory_gauge.h"
#include "window/about_box.h"
#include "window/kv_timeline_export.h"
#include "window/status_banner.h"
#include "worker/engine_client.h"
#include "worker/kv_timeline_csv.h"

#include <QAction>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenuBar>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolButton>

namespace sinkscope::ui {

void MainWindow::createMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open Model…"), QKeySequence::Open, this, &MainWindow::chooseModelFile);
    m_recentModels = new RecentModelsMenu(this);
    m_recentModels->setModels(m_settings.recentModels);
    connect(m_recentModels, &RecentModelsMenu::modelChosen, this, &MainWindow::openModelFile);
    connect(m_recentModels, &RecentModelsMenu::clearRequested, this,
            [this] { setRecentModels({}); });
    file->addMenu(m_recentModels);
    m_sessions->addActions(*file, m_settings.restoreLastSession);
    connect(m_sessions, &SessionActions::restoreAtStartToggled, this, [this](bool enabled) {
        m_settings.restoreLastSession = enabled;
        saveSettings();
    });
    file->addAction(tr("&Export Heatmap…"), QKeySequence(tr("Ctrl+E")), this,
                    &MainWindow::exportHeatmap);
    file->addAction(tr("Export C&hat…"), QKeySequence(tr("Ctrl+Shift+E")), this,
                    &MainWindow::chooseChatExport);
    auto* timeline = new KvTimelineExport(*this, *m_engine, *m_banner);
    QAction* exportTimeline =
        file->addAction(tr("Export KV &Timeline (CSV)…"), timeline, &KvTimelineExport::chooseFile);
    exportTimeline->setStatusTip(tr("Every token written to the KV cache this session: its slot "
                                    "and the token it evicted (the last %1 writes)")
                                     .arg(kKvTimelineCapacity));
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
    quit->setMenuRole(QAction::QuitRole);

    QMenu* chat = menuBar()->addMenu(tr("&Chat"));
    chat->addAction(tr("&New Chat"), QKeySequence::New, this, &MainWindow::onNewChat);
    m_stopAction = chat->addAction(tr("&Stop"), QKeySequence(Qt::Key_Escape), m_engine.get(),
                                   &EngineClient::stop);
    m_stopAction->setEnabled(false);
    chat->addSeparator();
    chat->addAction(tr("&Message Box"), QKeySequence(tr("Ctrl+L")), this,
                    [this] { m_chat->input()->setFocus(Qt::ShortcutFocusReason); });
    chat->addAction(m_chat->copyChatAction());
    chat->addAction(m_chat->findAction());
    QAction* ctrlEnter = chat->addAction(tr("Send with Ctrl+&Enter"));
    ctrlEnter->setCheckable(true);
    ctrlEnter->setChecked(m_settings.sendWithCtrlEnter);
    m_chat->input()->setSendWithCtrlEnter(m_settings.sendWithCtrlEnter);
    connect(ctrlEnter, &QAction::toggled, this, [this](bool enabled) {
        m_settings.sendWithCtrlEnter = enabled;
        m_chat->input()->setSendWithCtrlEnter(enabled);
        saveSettings();
    });

    QMenu* view = menuBar()->addMenu(tr("&View"));
    view->addAction(m_chat->showTokensAction());
    view->addSeparator();
    for (int i = 0; i < m_tabs->count(); ++i) {
        QAction* action =
            view->addAction(m_tabs->tabText(i), this, [this, i] { m_tabs->setCurrentIndex(i); });
        action->setShortcut(QKeySequence(tr("Ctrl+%1").arg(i + 1)));
    }

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&Model Information…"), QKeySequence(tr("Ctrl+I")), this,
                    &MainWindow::showModelInfo);
    help->addAction(tr("&About Sinkscope"), this, [this] { showAboutBox(modelInfo(), this); });
}

void MainWindow::createStatusBar() {
    m_loadProgress = new LoadProgressWidget(this);
    connect(m_loadProgress, &LoadProgressWidget::cancelRequested, m_engine.get(),
            &EngineClient::cancelLoads);
    m_modelLabel = new QToolButton(this);
    m_modelLabel->setText(tr("No model"));
    m_modelLabel->setObjectName(QStringLiteral("modelLabel"));
    m_modelLabel->setAutoRaise(true);
    connect(m_modelLabel, &QToolButton::clicked, this, &MainWindow::showModelInfo);
    m_memoryGauge = new views::MemoryGauge(this);
    statusBar()->addPermanentWidget(m_loadProgress);
    statusBar()->addPermanentWidget(m_memoryGauge);
    statusBar()->addPermanentWidget(m_modelLabel);
}

void MainWindow::chooseModelFile() {
    // Window-modal, not exec(): the engine keeps streaming while the dialog is open.
    auto* dialog = new QFileDialog(this, tr("Open Model"),
                                   m_model ? QFileInfo(m_model->path).absolutePath() : QString(),
                                   tr("GGUF models (*.gguf);;All files (*)"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setFileMode(QFileDialog::ExistingFile);
    connect(dialog, &QFileDialog::fileSelected, this, &MainWindow::openModelFile);
    dialog->open();
}

void MainWindow::exportHeatmap() {
    auto* dialog = new QFileDialog(this, tr("Export Heatmap"), QStringLiteral("heatmap.png"),
                                   tr("PNG images (*.png);;SVG drawings (*.svg)"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setAcceptMode(QFileDialog::AcceptSave);
    dialog->setDefaultSuffix(QStringLiteral("png"));
    connect(dialog, &QFileDialog::fileSelected, this, [this](const QString& path) {
        if (m_heatmap->exportImage(path))
            statusBar()->showMessage(tr("Heatmap saved to %1").arg(path), kStatusMessageMs);
        else
            m_banner->showError(tr("Could not export the heatmap to %1 (is it empty, or, for an "
                                   "SVG, longer than %2 positions?)")
                                    .arg(path)
                                    .arg(views::MaskHeatmap::kSvgMaxPositions));
    });
    dialog->open();
}

void MainWindow::chooseChatExport() {
    auto* dialog = new QFileDialog(this, tr("Export Chat"), QStringLiteral("chat.md"),
                                   tr("Markdown (*.md);;All files (*)"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setAcceptMode(QFileDialog::AcceptSave);
    dialog->setDefaultSuffix(QStringLiteral("md"));
    connect(dialog, &QFileDialog::fileSelected, this, [this](const QString& path) {
        // Written off the GUI thread: a chat of 50,000 messages takes a moment.
        saveChatMarkdownInBackground(
            this, path, m_chat->chatView()->messages(), [this, path](bool saved) {
                if (saved)
                    statusBar()->showMessage(tr("Chat saved to %1").arg(path), kStatusMessageMs);
                else
                    m_banner->showError(tr("Could not write the chat to %1.").arg(path));
            });
    });
    dialog->open();
}

bool MainWindow::exportChat(const QString& path) const {
    return saveChatMarkdown(path, m_chat->chatView()->messages());
}

void MainWindow::showModelInfo() {
    if (!m_model) return;
    auto* dialog = new ModelInfoDialog(*m_model, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->open();
}

} // namespace sinkscope::ui
