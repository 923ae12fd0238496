// The GUI thread's handle on the engine: owns the engine thread and its EngineWorker, queues
// requests to it, and takes the worker's mailbox at most ~30 times a second (batchReady; less
// often while a reply decodes, when drawing costs more than its share: kDrawingShare). Every
// worker signal is preceded by a final take, so a handler sees all the steps that came before it.
// Destroying the client stops any generation, quits the thread and waits for it.
#pragma once

#include "worker/engine_types.h"
#include "worker/policy_run.h"
#include "worker/snapshot_mailbox.h"

#include <QObject>
#include <QThread>
#include <QTimer>

#include <functional>
#include <memory>

namespace sinkscope::ui {

class EngineWorker;

class EngineClient : public QObject {
    Q_OBJECT
public:
    static constexpr int kRefreshIntervalMs = 33;
    // While a chat reply decodes, the GUI draws at most this share of one core: the decoding
    // threads use every core, so each frame's drawing is time they lose. When a frame costs more
    // than kDrawingShare * kRefreshIntervalMs (slow machine, heavy tab) the takes space out, up
    // to kSlowestRefreshMs apart. Policy runs keep the full rate: their worker waits on the GUI.
    static constexpr double kDrawingShare = 0.05;
    static constexpr int kSlowestRefreshMs = 100;

    explicit EngineClient(QObject* parent = nullptr);
    ~EngineClient() override;

    // Loads (a model, a saved session, edited tools) return their ticket; they report their
    // stages with loadProgress and stop at cancelLoads(), changing nothing.
    // Loading stops a running generation first; the previous model stays on failure.
    quint64 openModel(const QString& path, bool installDefault = false);
    void applySettings(const EngineSettings& settings);
    quint64 applyTools(const QString& compactJson);
    // The template's switch for the tools in the system turn (EngineWorker::setToolsInSystemTurn).
    void setToolsInSystemTurn(bool enabled);
    // Queues a measurement of edited tools; only the latest request's answer is reported
    // (toolsPreviewed).
    void previewTools(const QString& compactJson);
    // Queues one user turn; returns its ticket (generationFinished reports it).
    quint64 send(const QString& text, const GenerationLimits& limits);
    // Queues the result of the last call (JSON text); the assistant continues. Returns its ticket.
    quint64 sendToolResult(const QString& resultJson, const GenerationLimits& limits);
    // Stops the running generation within one token, and any still queued (and any policy run).
    void stop();
    // Queues the Policies tab's experiment; returns its run id (policyRunFinished reports it).
    quint64 runPolicies(const PolicyRunRequest& request);
    // Stops the running policy run within one position, and any still queued.
    void stopPolicyRun();
    // Stops, forgets the conversation and rebuilds the session with the same sinks.
    void newChat();
    // Stops, then replaces the model (when it is another file), settings, tools and conversation
    // with a saved session's: sessionReady (restored) or sessionRestoreFailed, nothing changed.
    quint64 restoreSession(const SessionRestore& restore);
    // Queues the writing of the session's KV timeline as CSV (kvTimelineExported says how it went).
    void exportKvTimeline(const QString& path);
    // Stops the running load at its next stage or prefill chunk, and every load still queued.
    void cancelLoads();
    // For tests: EngineWorker::setLoadHook, from the next request on.
    void setLoadHook(std::function<void(const LoadProgress&)> hook);

    bool isGenerating() const { return m_generationsInFlight > 0; }
    bool isBusy() const { return m_requestsInFlight > 0; }
    int refreshIntervalMs() const { return m_refreshTimer.interval(); }
    int chatEpoch() const { return m_chatEpoch; }
    qint64 generatedTokenCount() const; // tokens sampled over the worker's life (thread-safe)

signals:
    void batchReady(const sinkscope::ui::EngineBatch& batch);
    void modelLoaded(const sinkscope::ui::ModelInfo& info);
    void loadFailed(const QString& message);
    void sessionReady(const sinkscope::ui::SessionInfo& info);
    void toolsPreviewed(const sinkscope::ui::ToolsPreview& preview);
    void generationFinished(const sinkscope::ui::GenerationReport& report);
    void errorOccurred(const QString& message);
    // The SHA-256 of the model file last loaded, read after its session was reported.
    void modelHashed(const QString& path, const QString& sha256);
    void sessionRestoreFailed(const sinkscope::ui::RestoreFailure& failure);
    void loadProgress(const sinkscope::ui::LoadProgress& progress);
    void kvTimelineExported(const sinkscope::ui::KvTimelineExported& result);
    void generatingChanged(bool generating);
    void policyBatchReady(const sinkscope::ui::PolicyRunBatch& batch);
    void policyRunFinished(const sinkscope::ui::PolicyRunReport& report);

private:
    template <typename Request> void post(Request request);
    template <typename Turn> quint64 postTurn(Turn turn); // a generation: ticket, generating
    void takeMailbox();
    void paceRefresh(); // while a chat reply decodes: the interval from the GUI's CPU per take
    void onRequestDone();
    void onGenerationFinished(const GenerationReport& report);

    SnapshotMailbox m_mailbox;
    PolicyRunMailbox m_policyMailbox;
    QThread m_thread;
    std::unique_ptr<EngineWorker> m_worker; // lives on m_thread; deleted after it stops
    QTimer m_refreshTimer;
    quint64 m_lastTicket = 0;
    int m_requestsInFlight = 0;
    int m_generationsInFlight = 0;
    double m_cpuAtLastTakeMs = 0; // the GUI thread's CPU time at the last take (threadCpuMs)
    int m_chatEpoch = 0;
    quint64 m_lastPolicyRun = 0;
    quint64 m_lastPreview = 0; // the newest previewTools request
    quint64 m_lastLoad = 0;
};

} // namespace sinkscope::ui
