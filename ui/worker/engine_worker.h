// The one object that touches the model: it owns the Model and the chat with tools pinned as
// sinks (ToolChat) on the engine thread, takes requests as queued calls, posts step snapshots
// and stream pieces to a SnapshotMailbox, and reports the rest as value-type signals. Engine
// exceptions become errorOccurred / loadFailed. The conversation survives new settings, new tools
// and another model; only New chat forgets it.
#pragma once

#include "model/model.h"
#include "session/tool_chat.h"
#include "tools/tool_schema.h"
#include "worker/engine_types.h"
#include "worker/model_hasher.h"
#include "worker/policy_run.h"

#include <QElapsedTimer>
#include <QObject>
#include <QStringDecoder>

#include <atomic>
#include <functional>
#include <memory>
#include <span>

namespace sinkscope::ui {

class SnapshotMailbox;

class EngineWorker : public QObject {
    Q_OBJECT
public:
    explicit EngineWorker(SnapshotMailbox& mailbox, QObject* parent = nullptr);
    ~EngineWorker() override;

    // Thread-safe (atomics only), for the GUI thread while a request runs here.
    void cancelGenerationsUpTo(quint64 ticket); // generations with ticket <= this stop at once
    void shutDown();                            // every running and queued request ends early
    void cancelPolicyRunsUpTo(quint64 run);     // policy runs with run <= this stop at once
    // Loads with ticket <= this stop at their next stage or prefill chunk, changing nothing.
    void cancelLoadsUpTo(quint64 ticket);
    qint64 generatedTokenCount() const { return m_generatedTokens.load(); }

    // For tests: called on the engine thread after each loadProgress report, before the load
    // looks at its cancel flag, so that a test can hold a load at a chosen stage.
    using LoadHook = std::function<void(const LoadProgress&)>;
    void setLoadHook(LoadHook hook) { m_loadHook = std::move(hook); } // engine thread only

    // Requests: run on the engine thread, in the order they were queued. Each ends with
    // requestDone(). The loads (openModel, applyTools, restoreSession: worker_loads.cpp) report
    // their stages with loadProgress, ending with Finished or Cancelled, and can be cancelled.
    void openModel(quint64 load, const QString& path, bool installDefault);
    void applySettings(const sinkscope::ui::EngineSettings& settings);
    void applyTools(quint64 load, const QString& compactJson);
    // Where the model's template has the switch (TemplateInfo::hasSystemTurnOption), writes the
    // tools in the system turn, pinned, instead of the user turn: the chat is built anew with its
    // turns. Kept for later models.
    void setToolsInSystemTurn(bool enabled);
    // Measures what `compactJson` would pin with the current model and settings; nothing changes.
    void previewTools(quint64 ticket, const QString& compactJson);
    void generate(quint64 ticket, const QString& userText,
                  const sinkscope::ui::GenerationLimits& limits);
    // The result of the last call, as JSON text: the assistant continues from it.
    void sendToolResult(quint64 ticket, const QString& resultJson,
                        const sinkscope::ui::GenerationLimits& limits);
    void startNewChat(int chatEpoch);
    // Builds the saved session whole: its model (checked against its hash, loaded when it is not
    // the one open), settings, tools and turns, rendered and tokenised anew; or changes nothing
    // and reports why (sessionRestoreFailed, Cancelled when cancelled).
    void restoreSession(quint64 load, const sinkscope::ui::SessionRestore& restore);
    // Writes the session's KV timeline to `path` as CSV (kv_timeline_csv.h); kvTimelineExported
    // says how it went.
    void exportKvTimeline(const QString& path);
    // The Policies tab's experiment on the current model; ends with policyRunFinished().
    void runPolicies(quint64 run, const sinkscope::ui::PolicyRunRequest& request,
                     sinkscope::ui::PolicyRunMailbox& mailbox);

signals:
    void modelLoaded(const sinkscope::ui::ModelInfo& info);
    void loadFailed(const QString& message);
    void sessionReady(const sinkscope::ui::SessionInfo& info);
    void toolsPreviewed(const sinkscope::ui::ToolsPreview& preview);
    void generationFinished(const sinkscope::ui::GenerationReport& report);
    void errorOccurred(const QString& message);
    void policyRunFinished(const sinkscope::ui::PolicyRunReport& report);
    void modelHashed(const QString& path, const QString& sha256);
    void sessionRestoreFailed(const sinkscope::ui::RestoreFailure& failure);
    void loadProgress(const sinkscope::ui::LoadProgress& progress);
    void kvTimelineExported(const sinkscope::ui::KvTimelineExported& result);
    void requestDone();

private:
    class LoadScope;           // one load's progress reports and cancel checks (worker_loads.cpp)
    friend class RequestScope; // holds m_hasher's read while a request runs (worker_scope.h)

    // A turn of the chat; `watch` sees each step. Returns why it ended when no step stopped it.
    using TurnRunner =
        std::function<StopReason(const StepCallback& watch, GenerationReport& report)>;

    bool isCancelled(quint64 ticket) const;
    bool isLoadCancelled(quint64 load) const;
    // nullptr with `error` set when the file cannot be installed or loaded; nullptr with
    // `loading` cancelled when it was cancelled.
    std::unique_ptr<Model> loadModelFile(const QString& path, bool installDefault,
                                         LoadScope& loading, QString& error) const;
    void hashModel(); // m_modelPath's SHA-256, read in the background, reported by modelHashed
    // The restore's model: the one open when it is the same file, else the file loaded into
    // `loaded`; nullptr after reporting why not.
    const Model* restoreModel(const SessionRestore& restore, std::unique_ptr<Model>& loaded,
                              QString& sha256, LoadScope& loading);
    SessionOptions sessionOptions(const Model& model, const EngineSettings& settings) const;
    // A chat on `model` continuing `earlier`'s turns; `rebuild` collects its snapshots and
    // `onProgress` sees its stages (a cancel throws BuildCancelled).
    std::unique_ptr<ToolChat> buildChat(const Model& model, const EngineSettings& settings,
                                        std::span<const Turn> earlier, QList<StepSnapshot>& rebuild,
                                        const BuildProgressCallback& onProgress = {}) const;
    // The same with these tools and template options instead of those in force.
    std::unique_ptr<ToolChat> buildChat(const Model& model, const EngineSettings& settings,
                                        const ToolSet& tools,
                                        const ModelTemplateOptions& templateOptions,
                                        std::span<const Turn> earlier, QList<StepSnapshot>& rebuild,
                                        const BuildProgressCallback& onProgress = {}) const;
    StepCallback snapshotCollector(QList<StepSnapshot>& snapshots) const;
    // Reports the session m_chat now holds; `snapshots` are its rebuild's newest steps.
    void commitSession(QList<StepSnapshot> snapshots, const QString& reason,
                       bool retokenized = false, bool restored = false);
    // Runs `turn` unless cancelled, without a model or with empty `text`; reports it.
    void runTurn(quint64 ticket, const QString& text, const GenerationLimits& limits,
                 const TurnRunner& turn);
    // Fills the report's call views; returns why the reply ended when no step stopped it.
    StopReason reportReply(const ToolResponse& response, const GenerationLimits& limits,
                           GenerationReport& report) const;
    bool recordStep(const StepSnapshot& step, quint64 ticket, const GenerationLimits& limits,
                    StopReason& stopReason);
    // At a turn's first step: where the template rewrote earlier turns, the steps re-prefilling
    // the window from the new render come first; they are counted off and not shown as pieces.
    void followRerender();

    SnapshotMailbox& m_mailbox;
    std::unique_ptr<Model> m_model;   // declared before the chat: outlives it
    std::unique_ptr<ToolChat> m_chat; // refers to *m_model
    QString m_modelPath;
    EngineSettings m_settings;
    ToolSet m_tools; // the tools in force, also before any model is loaded
    ModelTemplateOptions m_templateOptions;
    int m_chatEpoch = 0;
    QStringDecoder m_streamDecoder{QStringDecoder::Utf8}; // pieces may split UTF-8 characters
    qint64 m_turnBase = 0;   // the transcript index of the current turn's first token
    qint64 m_turnTokens = 0; // tokens of the current turn fed so far
    int m_turnGenerated = 0; // tokens of the current reply written so far
    qint64 m_turnSteps = 0;  // steps seen in the current turn, re-prefill included
    // A rewritten render's rebuild: its steps (the block's tokens that were not taken over from
    // the previous cache, then the kept transcript's) are those at positions before this one.
    qint64 m_replayEnd = 0;
    QElapsedTimer m_decodeClock; // since the prompt's last token

    std::atomic<quint64> m_cancelledTicket{0};
    std::atomic<bool> m_shutDown{false};
    std::atomic<quint64> m_cancelledPolicyRun{0};
    std::atomic<quint64> m_cancelledLoad{0};
    LoadHook m_loadHook;
    std::atomic<qint64> m_generatedTokens{0}; // over the worker's life
    // m_modelPath's SHA-256, read on its own thread; last, so that it stops first.
    ModelHasher m_hasher{
        [this](const QString& path, const QString& sha256) { emit modelHashed(path, sha256); },
        m_shutDown};
};

} // namespace sinkscope::ui
