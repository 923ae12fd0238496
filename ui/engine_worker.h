// The one object that touches the model: it owns the Model and Session on the engine thread,
// takes requests as queued calls, posts step snapshots and stream pieces to a SnapshotMailbox, and
// reports the rest as value-type signals. Engine exceptions become errorOccurred / loadFailed.
#pragma once

#include "engine_types.h"
#include "model.h"
#include "policy_run.h"
#include "sampler.h"
#include "session.h"

#include <QElapsedTimer>
#include <QObject>
#include <QStringDecoder>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

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
    qint64 generatedTokenCount() const { return m_generatedTokens.load(); }

    // Requests: run on the engine thread, in the order they were queued. Each ends with
    // requestDone().
    void openModel(const QString& path, bool writeSyntheticIfMissing);
    void applySettings(const sinkscope::ui::EngineSettings& settings);
    void applyTools(const QString& compactJson);
    void generate(quint64 ticket, const QString& userText,
                  const sinkscope::ui::GenerationLimits& limits);
    void startNewChat(int chatEpoch);
    // The Policies tab's experiment on the current model; ends with policyRunFinished().
    void runPolicies(quint64 run, const sinkscope::ui::PolicyRunRequest& request,
                     sinkscope::ui::PolicyRunMailbox& mailbox);

signals:
    void modelLoaded(const sinkscope::ui::ModelInfo& info);
    void loadFailed(const QString& message);
    void sessionReady(const sinkscope::ui::SessionInfo& info);
    void generationFinished(const sinkscope::ui::GenerationReport& report);
    void errorOccurred(const QString& message);
    void policyRunFinished(const sinkscope::ui::PolicyRunReport& report);
    void requestDone();

private:
    struct BuiltSession {
        std::unique_ptr<Session> session;
        SessionInfo info;
        QList<StepSnapshot> snapshots; // the newest of the re-prefill, oldest first
    };

    bool isCancelled(quint64 ticket) const;
    std::unique_ptr<Model> loadModelFile(const QString& path, bool writeSyntheticIfMissing);
    // A session on `model` with BOS, the sink block and the transcript's last W tokens fed.
    BuiltSession buildSession(const Model& model, const EngineSettings& settings,
                              const std::string& toolsJson,
                              const std::vector<int32_t>& transcript) const;
    void commitSession(BuiltSession built, const QString& reason);
    // Rebuilds on the current model with new settings or tools; nothing changes on failure.
    void rebuildSession(const EngineSettings& settings, const std::string& toolsJson,
                        const QString& reason);
    void runGeneration(const std::string& userText, const GenerationLimits& limits,
                       GenerationReport& report);
    bool recordStep(const StepSnapshot& step, quint64 ticket, const GenerationLimits& limits,
                    StopReason& stopReason);

    SnapshotMailbox& m_mailbox;
    std::unique_ptr<Model> m_model;     // declared before the session: outlives it
    std::unique_ptr<Session> m_session; // refers to *m_model
    std::unique_ptr<Sampler> m_sampler;
    EngineSettings m_settings;
    std::string m_toolsJson;
    std::vector<int32_t> m_transcript; // [conversation tokens] everything fed after the prefix
    StreamLayout m_layout;
    int m_chatEpoch = 0;
    QStringDecoder m_streamDecoder{QStringDecoder::Utf8}; // pieces may split UTF-8 characters
    qint64 m_turnTokens = 0;                              // tokens of the current turn fed so far
    int m_turnGenerated = 0;     // tokens of the current reply sampled so far
    QElapsedTimer m_decodeClock; // since the prompt's last token

    std::atomic<quint64> m_cancelledTicket{0};
    std::atomic<bool> m_shutDown{false};
    std::atomic<quint64> m_cancelledPolicyRun{0};
    std::atomic<qint64> m_generatedTokens{0}; // over the worker's life
};

} // namespace sinkscope::ui
