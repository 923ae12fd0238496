// The playground window: the chat on the left; the mask heatmap, KV cache, tools, settings and
// stats as tabs on the right. It owns the EngineClient and routes what the engine reports to the
// panels; it never touches the model itself.
#pragma once

#include "views/tools_editor.h"
#include "window/app_settings.h"
#include "worker/engine_types.h"

#include <QMainWindow>
#include <QMap>

#include <memory>
#include <optional>

class QAction;
class QToolButton;
class QTabWidget;

namespace sinkscope::views {
class KvCacheView;
class MemoryGauge;
class MaskHeatmap;
class ToolsEditor;
} // namespace sinkscope::views

namespace sinkscope::ui {

class ChatPanel;
class EngineClient;
class LoadProgressWidget;
class RecentModelsMenu;
class SessionActions;
struct SessionFile;
class PoliciesPanel;
class SettingsPanel;
class StatsPanel;
class StatusBanner;
class ToolsPage;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    struct Options {
        QString modelPath;    // opens this model instead of the configured one
        int maxNewTokens = 0; // > 0: overrides the setting for this run only
        QString preset;       // pins this preset's (name or file) tools instead of the stored ones
        std::optional<CallPolicy> calls; // overrides the setting for this run only
        bool persistSettings = true;     // false: nothing is written to QSettings
    };

    explicit MainWindow(const Options& options, QWidget* parent = nullptr);
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    ChatPanel* chatPanel() const { return m_chat; }
    views::MaskHeatmap* heatmap() const { return m_heatmap; }
    views::KvCacheView* kvCacheView() const { return m_kvView; }
    views::MemoryGauge* memoryGauge() const { return m_memoryGauge; }
    views::ToolsEditor* toolsEditor() const { return m_toolsEditor; }
    ToolsPage* toolsPage() const { return m_toolsPage; }
    SettingsPanel* settingsPanel() const { return m_settingsPanel; }
    StatsPanel* statsPanel() const { return m_stats; }
    PoliciesPanel* policiesPanel() const { return m_policies; }
    SessionActions* sessionActions() const { return m_sessions; }
    QString toolsStatusText() const;
    QString toolsPreviewText() const; // "" while no edited tools wait to be applied
    StatusBanner* banner() const { return m_banner; }
    QTabWidget* tabs() const { return m_tabs; }
    EngineClient* engine() const { return m_engine.get(); }
    LoadProgressWidget* loadProgress() const { return m_loadProgress; }

    bool hasModel() const { return m_model.has_value(); }
    // The loaded model file's SHA-256, read in the background after it loads; "" until then.
    QString modelSha256() const { return m_modelSha256; }
    const ModelInfo* modelInfo() const { return m_model ? &*m_model : nullptr; }
    const SessionInfo& sessionInfo() const { return m_session; }
    const std::optional<StepSnapshot>& latestSnapshot() const { return m_latestSnapshot; }
    QString modelLabelText() const;

    void sendMessage(const QString& text); // as if typed and sent
    // As if chosen in File > Open Model… (or in File > Recent Models, or dropped on the window).
    void openModelFile(const QString& path);
    // As if clicked in a call's attribution: the tool's sink slots and key columns highlighted.
    void highlightTool(const QString& tool);
    // File > Export Chat…'s file: the chat as Markdown (ChatPanel::chatMarkdown), UTF-8; false
    // when it cannot be written.
    bool exportChat(const QString& path) const;

signals:
    void modelReady(const sinkscope::ui::ModelInfo& info);
    void modelLoadFailed(const QString& message);
    void sessionRebuilt(const sinkscope::ui::SessionInfo& info);
    void replyFinished(const sinkscope::ui::GenerationReport& report);

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    static constexpr int kStatusMessageMs = 10000; // how long a status message stays
    void createWidgets();
    void createMenus();
    void createStatusBar();
    void connectEngine();
    bool chooseInitialTools(); // false when there are none to apply
    void applyInitialTools();
    void openInitialModel(const QString& overridePath);
    void openModel(const QString& path, bool installDefault);
    void chooseModelFile();
    void exportHeatmap();
    void chooseChatExport();
    void showModelInfo(); // nothing before a model has loaded
    void saveSettings();
    void setRecentModels(const QStringList& paths); // shown in File > Recent Models and saved
    GenerationLimits effectiveLimits() const;
    std::optional<SessionFile> currentSession() const; // nullopt before a model is loaded
    void adoptSession(const SessionFile& session);     // a restored session's settings and tools

    void onBatch(const EngineBatch& batch);
    void onModelLoaded(const ModelInfo& info);
    void onLoadFailed(const QString& message);
    void onSessionReady(const SessionInfo& info);
    void previewDraftTools(const QString& compactJson); // "" hides the preview
    void onToolsPreviewed(const ToolsPreview& preview);
    void onGenerationFinished(const GenerationReport& report);
    void onGeneratingChanged(bool generating);
    void onEngineError(const QString& message);
    void onSendRequested(const QString& text);
    void onNewChat();
    void onToolResultRequested(const QString& json);
    void onSettingsChanged(const EngineSettings& settings);
    void onLimitsChanged(const GenerationLimits& limits);
    void onToolsApplied(const QString& compactJson);
    // main_window_loads.cpp: the status bar's load progress, and what a cancelled load says and
    // undoes.
    void onLoadProgress(const LoadProgress& progress);
    void followToolsApply(const LoadProgress& progress);
    void selectKeyPosition(qint64 position); // a KV slot, heatmap column or chat token was clicked
    void selectTranscriptToken(qint64 index);
    void refreshFade(const StepSnapshot& latest);

    Options m_options;
    AppSettings m_settings;
    std::optional<ModelInfo> m_model;
    SessionInfo m_session;
    QList<TurnView> m_conversation; // as the worker last reported it
    QString m_modelSha256;          // of the loaded model's file; "" until the worker has read it
    StreamLayout m_layout;
    std::optional<StepSnapshot> m_latestSnapshot;

    StatusBanner* m_banner = nullptr;
    ChatPanel* m_chat = nullptr;
    QTabWidget* m_tabs = nullptr;
    views::MaskHeatmap* m_heatmap = nullptr;
    views::KvCacheView* m_kvView = nullptr;
    views::ToolsEditor* m_toolsEditor = nullptr;
    SettingsPanel* m_settingsPanel = nullptr;
    StatsPanel* m_stats = nullptr;
    PoliciesPanel* m_policies = nullptr;
    ToolsPage* m_toolsPage = nullptr;
    QString m_shownNotice;               // the template's notice last put in the banner
    QString m_draftTools;                // the edited tools being previewed (compact JSON), or ""
    QToolButton* m_modelLabel = nullptr; // flat; a click opens the model information
    LoadProgressWidget* m_loadProgress = nullptr;
    // The tools the worker pins (the editor's applied state and the text kept in the settings),
    // and those of applies sent but not yet carried out: a cancelled apply goes back to them.
    struct ToolsState {
        views::ToolsEditor::Applied applied;
        QString text;
    };
    std::optional<ToolsState> m_toolsInForce;
    QMap<quint64, ToolsState> m_toolsApplies;    // by load ticket
    views::MemoryGauge* m_memoryGauge = nullptr; // the KV memory, always in view
    bool m_stepSinceReset = false; // a snapshot of the current session reached the gauge
    QAction* m_stopAction = nullptr;
    RecentModelsMenu* m_recentModels = nullptr;
    SessionActions* m_sessions = nullptr;

    // Declared last: destroyed first, so the engine thread has stopped before any widget goes.
    std::unique_ptr<EngineClient> m_engine;
};

} // namespace sinkscope::ui
