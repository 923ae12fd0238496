#include "window/main_window.h"

#include "chat_panel/chat_panel.h"
#include "chat_panel/message_input.h"
#include "chat_panel/token_text_view.h"
#include "model_files/model_drop.h"
#include "model_files/model_info_dialog.h"
#include "model_files/recent_models.h"
#include "panels/policies_panel.h"
#include "panels/settings_panel.h"
#include "panels/stats_panel.h"
#include "session/session_actions.h"
#include "views/kv_cache_view.h"
#include "views/mask_heatmap.h"
#include "views/memory_gauge.h"
#include "views/tools_editor.h"
#include "views/tools_validation.h"
#include "window/about_box.h"
#include "window/status_banner.h"
#include "window/tools_page.h"
#include "window/window_state.h"
#include "worker/default_model.h"
#include "worker/display_text.h"
#include "worker/engine_client.h"

#include <QAction>
#include <QCloseEvent>
#include <QDir>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenuBar>
#include <QScrollArea>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace sinkscope::ui {

namespace {

// The preset's canned result for the calls: one call's result, or an array of them in call
// order; empty unless every called tool has one.
QString cannedResultFor(const views::ToolsEditor& editor, const QList<ToolCallView>& calls) {
    QStringList results;
    for (const ToolCallView& call : calls) {
        const QString result = editor.cannedResult(call.name);
        if (result.isEmpty()) return {};
        results << result;
    }
    if (results.size() == 1) return results.constFirst();
    return QStringLiteral("[%1]").arg(results.join(QStringLiteral(", ")));
}

} // namespace

MainWindow::MainWindow(QWidget* parent) : MainWindow(Options{}, parent) {}

MainWindow::MainWindow(const Options& options, QWidget* parent)
    : QMainWindow(parent), m_options(options), m_settings(AppSettings::load()),
      m_engine(std::make_unique<EngineClient>()) {
    setWindowTitle(tr("Sinkscope"));
    createWidgets();
    // Before the menus, after the window's own handlers of the engine's signals.
    connectEngine();
    m_sessions = new SessionActions(*this, *m_engine, [this] { return currentSession(); });
    connect(m_sessions, &SessionActions::restored, this, &MainWindow::adoptSession);
    createMenus();
    createStatusBar();
    resize(1400, 900);
    // A run that saves nothing (a screenshot) keeps the default layout, so that it can be repeated.
    if (m_options.persistSettings) restoreWindowState(*this, *m_tabs, m_settings.window);

    m_settingsPanel->setValues(m_settings.engine, m_settings.limits);
    m_engine->applySettings(m_settings.engine);
    m_toolsPage->setToolsInSystemTurn(m_settings.toolsInSystemTurn);
    m_engine->setToolsInSystemTurn(m_settings.toolsInSystemTurn);
    applyInitialTools();
    openInitialModel(options.modelPath);
    // A run that keeps nothing (a screenshot) starts without the kept chat and keeps none; a model
    // named on the command line starts without it unless the last run did not quit.
    if (m_options.persistSettings)
        m_sessions->startUp(m_settings.restoreLastSession, options.modelPath.isEmpty());
}

MainWindow::~MainWindow() {
    m_engine.reset(); // stop generating and join the engine thread before the widgets go
}

void MainWindow::createWidgets() {
    m_banner = new StatusBanner(this);
    m_chat = new ChatPanel(this);
    // Made before its pages: Tab goes from the chat to the tab bar, then the page shown.
    m_tabs = new QTabWidget(this);
    m_tabs->setObjectName(QStringLiteral("inspectorTabs"));
    m_heatmap = new views::MaskHeatmap(this);
    m_kvView = new views::KvCacheView(this);
    m_toolsPage = new ToolsPage(this);
    m_toolsEditor = m_toolsPage->editor();
    m_settingsPanel = new SettingsPanel(this);
    m_stats = new StatsPanel(this);

    auto* settingsScroll = new QScrollArea(this);
    settingsScroll->setWidget(m_settingsPanel);
    settingsScroll->setWidgetResizable(true);
    settingsScroll->setFrameShape(QFrame::NoFrame);
    settingsScroll->setFocusPolicy(Qt::NoFocus); // Tab goes to its fields, which scroll in view

    m_tabs->addTab(m_heatmap, tr("Mask"));
    m_tabs->addTab(m_kvView, tr("KV cache"));
    m_tabs->addTab(m_toolsPage, tr("Tools"));
    m_tabs->addTab(settingsScroll, tr("Settings"));
    m_tabs->addTab(m_stats, tr("Stats"));
    m_policies = new PoliciesPanel(this);
    m_policies->setTranscriptSource([this] { return m_chat->transcript()->toPlainText(); });
    m_tabs->addTab(m_policies, tr("Policies"));

    auto* splitter = new QSplitter(Qt::Horizontal, this);
    splitter->setObjectName(QStringLiteral("chatSplitter")); // named: its sizes are restored
    splitter->addWidget(m_chat);
    splitter->addWidget(m_tabs);
    splitter->setStretchFactor(0, 5);
    splitter->setStretchFactor(1, 6);
    splitter->setSizes({640, 760});
    splitter->setChildrenCollapsible(false);

    auto* central = new QWidget(this);
    auto* layout = new QVBoxLayout(central);
    layout->setContentsMargins(8, 8, 8, 4);
    layout->addWidget(m_banner);
    layout->addWidget(splitter, 1);
    setCentralWidget(central);

    auto* drop = new ModelDropTarget(this);
    connect(drop, &ModelDropTarget::modelDropped, this, &MainWindow::openModelFile);
    connect(drop, &ModelDropTarget::refused, this,
            [this](const QString& reason) { statusBar()->showMessage(reason, kStatusMessageMs); });

    connect(m_chat, &ChatPanel::sendRequested, this, &MainWindow::onSendRequested);
    connect(m_chat, &ChatPanel::stopRequested, m_engine.get(), &EngineClient::stop);
    connect(m_chat, &ChatPanel::newChatRequested, this, &MainWindow::onNewChat);
    connect(m_chat, &ChatPanel::toolResultRequested, this, &MainWindow::onToolResultRequested);
    connect(m_chat, &ChatPanel::toolClicked, this, &MainWindow::highlightTool);
    connect(m_chat->transcript(), &TokenTextView::tokenClicked, this,
            &MainWindow::selectTranscriptToken);
    connect(m_chat->sinkBlock(), &TokenTextView::tokenClicked, this,
            &MainWindow::selectKeyPosition); // the prefix's index is its position
    connect(m_kvView, &views::KvCacheView::slotClicked, this,
            [this](int, qint64 position) { selectKeyPosition(position); });
    connect(m_heatmap, &views::MaskHeatmap::keyPositionClicked, this,
            &MainWindow::selectKeyPosition);
    connect(m_toolsEditor, &views::ToolsEditor::toolsApplied, this, &MainWindow::onToolsApplied);
    connect(m_toolsEditor, &views::ToolsEditor::draftChanged, this, &MainWindow::previewDraftTools);
    connect(m_toolsPage, &ToolsPage::toolsInSystemTurnToggled, this, [this](bool enabled) {
        m_settings.toolsInSystemTurn = enabled;
        saveSettings();
        statusBar()->showMessage(tr("Rebuilding the chat with the template's option…"));
        m_engine->setToolsInSystemTurn(enabled);
    });
    connect(m_toolsEditor, &views::ToolsEditor::presetChosen, this,
            [this](const QString&, const QString& query) {
                if (!query.isEmpty()) m_chat->input()->setPlaceholderText(tr("Try: %1").arg(query));
            });
    connect(m_settingsPanel, &SettingsPanel::engineSettingsChanged, this,
            &MainWindow::onSettingsChanged);
    connect(m_settingsPanel, &SettingsPanel::limitsChanged, this, &MainWindow::onLimitsChanged);
    connect(m_settingsPanel, &SettingsPanel::openModelRequested, this,
            &MainWindow::chooseModelFile);
    connect(m_policies, &PoliciesPanel::runRequested, this,
            [this](const PolicyRunRequest& request) {
                m_policies->beginRun(m_engine->runPolicies(request));
            });
    connect(m_policies, &PoliciesPanel::stopRequested, m_engine.get(),
            &EngineClient::stopPolicyRun);
}

void MainWindow::connectEngine() {
    EngineClient* engine = m_engine.get();
    connect(engine, &EngineClient::batchReady, this, &MainWindow::onBatch);
    connect(engine, &EngineClient::modelLoaded, this, &MainWindow::onModelLoaded);
    connect(engine, &EngineClient::loadFailed, this, &MainWindow::onLoadFailed);
    connect(engine, &EngineClient::sessionReady, this, &MainWindow::onSessionReady);
    connect(engine, &EngineClient::toolsPreviewed, this, &MainWindow::onToolsPreviewed);
    connect(engine, &EngineClient::generationFinished, this, &MainWindow::onGenerationFinished);
    connect(engine, &EngineClient::generatingChanged, this, &MainWindow::onGeneratingChanged);
    connect(engine, &EngineClient::errorOccurred, this, &MainWindow::onEngineError);
    connect(engine, &EngineClient::loadProgress, this, &MainWindow::onLoadProgress);
    connect(engine, &EngineClient::modelHashed, this,
            [this](const QString& path, const QString& sha256) {
                if (m_model && m_model->path == path) m_modelSha256 = sha256;
            });
    connect(engine, &EngineClient::policyBatchReady, m_policies, &PoliciesPanel::addBatch);
    connect(engine, &EngineClient::policyRunFinished, m_policies, &PoliciesPanel::finishRun);
}

bool MainWindow::chooseInitialTools() {
    if (!m_options.preset.isEmpty()) {
        if (m_toolsEditor->choosePreset(m_options.preset)) return true;
        // A preset or tools file (resources/presets/smart_home.json): its tools.
        if (QFileInfo(m_options.preset).isFile() && m_toolsEditor->loadFile(m_options.preset))
            return true;
        m_banner->showNotice(tr("There is no preset named “%1”.").arg(m_options.preset));
    }
    if (!m_settings.toolsText.isEmpty()) {
        m_toolsEditor->setToolsText(m_settings.toolsText);
        return true;
    }
    if (m_toolsEditor->presets().isEmpty()) return false;
    m_toolsEditor->choosePreset(m_toolsEditor->presets().constFirst().name);
    return true;
}

void MainWindow::applyInitialTools() {
    // An invalid stored text shows its error in the editor.
    if (chooseInitialTools()) m_toolsEditor->apply();
}

void MainWindow::openInitialModel(const QString& overridePath) {
    if (!overridePath.isEmpty()) {
        openModel(overridePath, false);
        return;
    }
    // The default is installed again when its copy is missing, damaged or from another release.
    const QString configured =
        isDefaultModelPath(m_settings.modelPath) ? QString() : m_settings.modelPath;
    if (!configured.isEmpty() && QFileInfo::exists(configured)) {
        openModel(configured, false);
        return;
    }
    if (!configured.isEmpty())
        m_banner->showNotice(
            tr("The configured model %1 is missing; opening the built-in needle-nano.")
                .arg(QDir::toNativeSeparators(configured)));
    openModel(defaultModelPath(), true);
}

void MainWindow::openModel(const QString& path, bool installDefault) {
    statusBar()->clearMessage(); // the load's progress says what it does
    m_engine->openModel(path, installDefault);
}

void MainWindow::saveSettings() {
    if (m_options.persistSettings) m_settings.save();
}

void MainWindow::setRecentModels(const QStringList& paths) {
    m_settings.recentModels = paths;
    m_recentModels->setModels(paths);
    saveSettings();
}

GenerationLimits MainWindow::effectiveLimits() const {
    GenerationLimits limits = m_settings.limits;
    if (m_options.maxNewTokens > 0) limits.maxNewTokens = m_options.maxNewTokens;
    if (m_options.calls) limits.calls = *m_options.calls;
    return limits;
}

std::optional<SessionFile> MainWindow::currentSession() const {
    if (!m_model) return std::nullopt;
    SessionFile session;
    session.modelPath = QFileInfo(m_model->path).absoluteFilePath();
    session.modelSha256 = m_modelSha256;
    session.settings = m_settings.engine;
    session.limits = m_settings.limits;
    session.toolsJson = views::validateTools(m_settings.toolsText).compactJson;
    session.toolsInSystemTurn = m_settings.toolsInSystemTurn;
    session.turns = m_conversation;
    return session;
}

void MainWindow::adoptSession(const SessionFile& session) {
    m_settings.engine = session.settings;
    m_settings.limits = session.limits;
    m_settings.toolsInSystemTurn = session.toolsInSystemTurn;
    m_settingsPanel->setValues(session.settings, session.limits);
    m_toolsPage->setToolsInSystemTurn(session.toolsInSystemTurn);
    m_toolsEditor->setToolsText(indentedJson(session.toolsJson));
    {
        // The worker pins these tools already: the editor only takes them as applied.
        const QSignalBlocker blocker(m_toolsEditor);
        m_toolsEditor->apply();
    }
    previewDraftTools(QString());
    m_settings.toolsText = m_toolsEditor->toolsText();
    m_toolsInForce = ToolsState{m_toolsEditor->applied(), m_settings.toolsText};
    saveSettings();
}

QString MainWindow::modelLabelText() const {
    return m_modelLabel->text();
}

QString MainWindow::toolsStatusText() const {
    return m_toolsPage->statusText();
}

QString MainWindow::toolsPreviewText() const {
    return m_toolsPage->previewText();
}

void MainWindow::previewDraftTools(const QString& compactJson) {
    m_draftTools = compactJson;
    if (compactJson.isEmpty()) {
        m_toolsPage->hidePreview();
        return;
    }
    m_engine->previewTools(compactJson);
}

void MainWindow::onToolsPreviewed(const ToolsPreview& preview) {
    if (preview.compactJson != m_draftTools) return; // edited again since
    m_toolsPage->showPreview(preview);
}

void MainWindow::sendMessage(const QString& text) {
    m_chat->sendText(text);
}

void MainWindow::openModelFile(const QString& path) {
    openModel(path, false);
}

void MainWindow::closeEvent(QCloseEvent* event) {
    m_engine->stop(); // the destructor joins the thread; a reply in flight ends within one token
    m_settings.window = captureWindowState(*this, *m_tabs);
    saveSettings();
    if (m_options.persistSettings) m_sessions->saveLastSession();
    QMainWindow::closeEvent(event);
}

void MainWindow::onBatch(const EngineBatch& batch) {
    if (batch.sessionReset) {
        m_layout = batch.layout;
        m_heatmap->clear();
        m_kvView->clear();
        // Forgotten here, where the new session begins, not when a model loads: a restore loads
        // the model and re-prefills in one request, so its snapshots can come first.
        m_latestSnapshot.reset();
        m_stepSinceReset = false;
    }
    if (batch.rewrittenFrom >= 0) m_chat->transcript()->strikeFrom(batch.rewrittenFrom);
    if (!batch.pieces.isEmpty()) m_chat->appendPieces(batch.pieces);
    if (!batch.snapshots.isEmpty()) {
        m_heatmap->addSnapshots(batch.snapshots);
        const StepSnapshot& latest = batch.snapshots.constLast();
        m_kvView->setSnapshot(latest);
        m_memoryGauge->showStep(latest);
        m_stepSinceReset = true;
        m_stats->showSnapshot(latest);
        m_latestSnapshot = latest;
    }
    if (m_latestSnapshot) refreshFade(*m_latestSnapshot);
    if (batch.hasProgress) {
        m_chat->showProgress(batch.progress);
        m_stats->showProgress(batch.progress);
    }
}

// Transcript tokens before the window's first position, or before the re-prefilled tail, are no
// longer in the KV cache.
void MainWindow::refreshFade(const StepSnapshot& latest) {
    const qint64 firstInWindow = latest.queryPosition - latest.effectiveWindow + 1;
    const qint64 beyondPrefix = qMax<qint64>(0, firstInWindow - m_layout.prefixLength);
    m_chat->transcript()->setFadedBefore(m_layout.transcriptBase + beyondPrefix);
}

void MainWindow::onModelLoaded(const ModelInfo& info) {
    m_model = info;
    m_modelSha256.clear(); // modelHashed follows
    const QString name = info.displayName();
    setWindowTitle(tr("Sinkscope — %1").arg(name));
    m_modelLabel->setText(tr("%1 · %2").arg(name, parameterCount(info.parameters)));
    m_modelLabel->setToolTip(
        tr("%1\nClick for the model's information.").arg(QDir::toNativeSeparators(info.path)));
    m_settingsPanel->setModel(info);
    m_chat->setReady(true); // the conversation goes on: the worker carried it over
    m_policies->setModelReady(true);
    m_stats->clear();
    if (m_banner->isError())
        m_banner->hide(); // a notice (e.g. "configured model missing") stays readable
    statusBar()->showMessage(tr("Loaded %1").arg(name), kStatusMessageMs);
    m_settings.modelPath = info.path;
    setRecentModels(withRecentModel(m_settings.recentModels, info.path)); // saves the settings
    emit modelReady(info);
}

void MainWindow::onLoadFailed(const QString& message) {
    const QString kept = m_model ? tr(" Still using %1.").arg(m_model->displayName()) : QString();
    m_banner->showError(message + kept);
    statusBar()->showMessage(tr("Model not loaded"), kStatusMessageMs);
    emit modelLoadFailed(message);
}

void MainWindow::onSessionReady(const SessionInfo& info) {
    m_session = info;
    m_layout = info.layout;
    m_conversation = info.conversation;
    QElapsedTimer shown; // the chat's part of the build, said with the worker's below
    shown.start();
    if (info.restored) {
        m_chat->showRestoredSession(info);
        if (m_latestSnapshot) refreshFade(*m_latestSnapshot); // the text shown anew
    } else {
        m_chat->showSession(info);
    }
    const double shownSeconds = shown.nsecsElapsed() / 1e9;
    m_stats->showSession(info);
    // The gauge shows the newest step; a session rebuilt without one has only its pinned sinks.
    if (!m_stepSinceReset)
        m_memoryGauge->showSession(info.sinkSlots, info.sinksUsed, info.effectiveWindow,
                                   info.bytesAllocated, info.budgetBytes);
    m_settingsPanel->setBudgetWindow(info.budgetWindow);
    m_policies->setBudgetWindow(info.budgetWindow);
    const QString takenOver =
        info.reusedSinkTokens > 0
            ? tr(" of which %1 taken over from the previous cache").arg(info.reusedSinkTokens)
            : QString();
    const QString summary =
        tr("%1: session built in %2 ms (window %3, %4 positions, kv_bits %5, %6%7, "
           "re-prefilled %8)")
            .arg(info.reason, formatMilliseconds(info.seconds + shownSeconds))
            .arg(info.effectiveWindow)
            .arg(QLatin1String(positionModeName(info.positions)))
            .arg(info.settings.kvBits)
            .arg(countOf(info.sinksUsed, tr("sink"), tr("sinks")), takenOver,
                 tokenCount(info.reprefilledTokens));
    statusBar()->showMessage(summary, kStatusMessageMs);
    if (info.reprefilledTokens > 0) m_chat->appendNote(summary);
    m_toolsPage->showSession(info);
    if (m_model) m_model->chatTemplate = info.chatTemplate; // the option may have changed it
    // Said once per model and option, not at every rebuild.
    if (!info.chatTemplate.notice.isEmpty() && info.chatTemplate.notice != m_shownNotice)
        m_banner->showNotice(tr("Chat template: %1").arg(info.chatTemplate.notice));
    m_shownNotice = info.chatTemplate.notice;
    // Another model or cache shape measures the same draft differently.
    if (!m_draftTools.isEmpty()) m_engine->previewTools(m_draftTools);
    emit sessionRebuilt(info);
}

void MainWindow::onGenerationFinished(const GenerationReport& report) {
    if (!report.conversation.isEmpty()) m_conversation = report.conversation; // the turn ran
    m_chat->finishReply(report, cannedResultFor(*m_toolsEditor, report.calls));
    emit replyFinished(report);
}

void MainWindow::onGeneratingChanged(bool generating) {
    m_chat->setGenerating(generating);
    m_stats->setGenerating(generating);
    m_stopAction->setEnabled(generating);
}

void MainWindow::onEngineError(const QString& message) {
    m_banner->showError(message);
    statusBar()->showMessage(tr("Engine error"), kStatusMessageMs);
}

void MainWindow::onSendRequested(const QString& text) {
    m_chat->setStatus(tr("Thinking…"));
    m_engine->send(text, effectiveLimits());
}

void MainWindow::onToolResultRequested(const QString& json) {
    m_chat->setStatus(tr("Sending the tool result…"));
    m_engine->sendToolResult(json, effectiveLimits());
}

void MainWindow::onNewChat() {
    m_engine->newChat();
    m_chat->clearConversation();
    m_latestSnapshot.reset();
    statusBar()->showMessage(tr("New chat"), kStatusMessageMs);
}

void MainWindow::onSettingsChanged(const EngineSettings& settings) {
    const bool rebuild = !settings.sameSession(m_settings.engine);
    m_settings.engine = settings;
    saveSettings();
    if (rebuild) {
        m_engine->stop(); // a rebuild must not wait for a long reply
        statusBar()->showMessage(tr("Rebuilding the session…"));
    }
    m_engine->applySettings(settings);
    if (!rebuild) m_sessions->keepChat(); // a rebuilt session is kept once it is ready
}

void MainWindow::onLimitsChanged(const GenerationLimits& limits) {
    m_settings.limits = limits;
    saveSettings();
    m_sessions->keepChat(); // the session file holds the limits; the engine's session does not
}

void MainWindow::selectKeyPosition(qint64 position) {
    m_heatmap->highlightKeyPosition(position);
    m_kvView->highlightPositions({position});
    // The token is highlighted where tokens are shown: a key picked in the mask or the KV view
    // asks to see exactly which token it is.
    m_chat->showTokensAction()->setChecked(true);
    const bool inPrefix = position < m_layout.prefixLength;
    m_chat->sinkBlock()->highlightToken(inPrefix ? position : -1);
    const qint64 index = inPrefix ? -1 : m_layout.transcriptIndexOf(position);
    m_chat->transcript()->highlightToken(index);
    const QString text = inPrefix ? m_chat->sinkBlock()->tokenText(position)
                                  : m_chat->transcript()->tokenText(index);
    statusBar()->showMessage(tr("Key position %1: “%2”").arg(position).arg(text), kStatusMessageMs);
}

void MainWindow::highlightTool(const QString& tool) {
    const auto span = std::find_if(m_session.toolSpans.cbegin(), m_session.toolSpans.cend(),
                                   [&tool](const ToolSpan& pinned) { return pinned.name == tool; });
    if (span == m_session.toolSpans.cend()) {
        statusBar()->showMessage(tr("%1 is not among the pinned tools.").arg(tool),
                                 kStatusMessageMs);
        return;
    }
    QList<qint64> positions;
    for (qint64 position = span->begin; position < span->end; ++position)
        positions << position;
    m_heatmap->highlightKeyPositions(positions);
    m_kvView->highlightPositions(positions);
    statusBar()->showMessage(tr("%1: key positions %2–%3 (%4)")
                                 .arg(tool)
                                 .arg(span->begin)
                                 .arg(span->end - 1)
                                 .arg(tokenCount(span->count())),
                             kStatusMessageMs);
}

void MainWindow::selectTranscriptToken(qint64 index) {
    const qint64 position = m_layout.positionOf(index);
    if (position < 0) {
        statusBar()->showMessage(tr("That token is no longer in the session."), kStatusMessageMs);
        return;
    }
    selectKeyPosition(position);
}

} // namespace sinkscope::ui
