#include "worker/engine_client.h"

#include "worker/engine_worker.h"
#include "worker/thread_cpu_time.h"

#include <algorithm>
#include <cmath>

namespace sinkscope::ui {

EngineClient::EngineClient(QObject* parent)
    : QObject(parent), m_worker(std::make_unique<EngineWorker>(m_mailbox)) {
    registerEngineMetaTypes();
    registerPolicyRunMetaTypes();
    m_worker->moveToThread(&m_thread);
    m_thread.setObjectName(QStringLiteral("sinkscope-engine"));

    EngineWorker* worker = m_worker.get();
    connect(worker, &EngineWorker::requestDone, this, &EngineClient::onRequestDone);
    connect(worker, &EngineWorker::generationFinished, this, &EngineClient::onGenerationFinished);
    // Each report first takes what the worker posted before it.
    connect(worker, &EngineWorker::modelLoaded, this, [this](const ModelInfo& info) {
        takeMailbox();
        emit modelLoaded(info);
    });
    connect(worker, &EngineWorker::loadFailed, this, [this](const QString& message) {
        takeMailbox();
        emit loadFailed(message);
    });
    connect(worker, &EngineWorker::sessionReady, this, [this](const SessionInfo& info) {
        takeMailbox();
        emit sessionReady(info);
    });
    connect(worker, &EngineWorker::toolsPreviewed, this, [this](const ToolsPreview& preview) {
        if (preview.ticket == m_lastPreview) emit toolsPreviewed(preview);
    });
    connect(worker, &EngineWorker::policyRunFinished, this, [this](const PolicyRunReport& report) {
        takeMailbox();
        emit policyRunFinished(report);
    });
    connect(worker, &EngineWorker::errorOccurred, this, [this](const QString& message) {
        takeMailbox();
        emit errorOccurred(message);
    });
    connect(worker, &EngineWorker::modelHashed, this, &EngineClient::modelHashed);
    connect(worker, &EngineWorker::loadProgress, this, &EngineClient::loadProgress);
    connect(worker, &EngineWorker::kvTimelineExported, this, &EngineClient::kvTimelineExported);
    connect(worker, &EngineWorker::sessionRestoreFailed, this,
            [this](const RestoreFailure& failure) {
                takeMailbox();
                emit sessionRestoreFailed(failure);
            });

    m_refreshTimer.setInterval(kRefreshIntervalMs);
    connect(&m_refreshTimer, &QTimer::timeout, this, [this] {
        takeMailbox();
        paceRefresh();
    });
    m_thread.start();
}

EngineClient::~EngineClient() {
    m_worker->shutDown();
    m_thread.quit();
    m_thread.wait();
    m_worker.reset(); // the thread has stopped: nothing runs in the worker any more
}

template <typename Request> void EngineClient::post(Request request) {
    ++m_requestsInFlight;
    if (!m_refreshTimer.isActive()) m_refreshTimer.start();
    QMetaObject::invokeMethod(m_worker.get(), std::move(request), Qt::QueuedConnection);
}

quint64 EngineClient::openModel(const QString& path, bool installDefault) {
    stop();
    const quint64 load = ++m_lastLoad;
    EngineWorker* worker = m_worker.get();
    post([worker, load, path, installDefault] { worker->openModel(load, path, installDefault); });
    return load;
}

void EngineClient::applySettings(const EngineSettings& settings) {
    EngineWorker* worker = m_worker.get();
    post([worker, settings] { worker->applySettings(settings); });
}

void EngineClient::previewTools(const QString& compactJson) {
    const quint64 ticket = ++m_lastPreview;
    EngineWorker* worker = m_worker.get();
    post([worker, ticket, compactJson] { worker->previewTools(ticket, compactJson); });
}

quint64 EngineClient::applyTools(const QString& compactJson) {
    const quint64 load = ++m_lastLoad;
    EngineWorker* worker = m_worker.get();
    post([worker, load, compactJson] { worker->applyTools(load, compactJson); });
    return load;
}

void EngineClient::setToolsInSystemTurn(bool enabled) {
    stop(); // the chat is built anew: it must not wait for a long reply
    EngineWorker* worker = m_worker.get();
    post([worker, enabled] { worker->setToolsInSystemTurn(enabled); });
}

template <typename Turn> quint64 EngineClient::postTurn(Turn turn) {
    stopPolicyRun(); // a chat turn must not wait behind a long experiment
    const quint64 ticket = ++m_lastTicket;
    if (m_generationsInFlight++ == 0) emit generatingChanged(true);
    m_cpuAtLastTakeMs = threadCpuMs();
    EngineWorker* worker = m_worker.get();
    post([worker, ticket, turn] { turn(*worker, ticket); });
    return ticket;
}

quint64 EngineClient::send(const QString& text, const GenerationLimits& limits) {
    return postTurn([text, limits](EngineWorker& worker, quint64 ticket) {
        worker.generate(ticket, text, limits);
    });
}

quint64 EngineClient::sendToolResult(const QString& resultJson, const GenerationLimits& limits) {
    return postTurn([resultJson, limits](EngineWorker& worker, quint64 ticket) {
        worker.sendToolResult(ticket, resultJson, limits);
    });
}

void EngineClient::stop() {
    m_worker->cancelGenerationsUpTo(m_lastTicket);
    stopPolicyRun();
}

quint64 EngineClient::runPolicies(const PolicyRunRequest& request) {
    const quint64 run = ++m_lastPolicyRun;
    EngineWorker* worker = m_worker.get();
    PolicyRunMailbox* mailbox = &m_policyMailbox;
    post([worker, run, request, mailbox] { worker->runPolicies(run, request, *mailbox); });
    return run;
}

void EngineClient::stopPolicyRun() {
    m_worker->cancelPolicyRunsUpTo(m_lastPolicyRun);
}

void EngineClient::newChat() {
    stop();
    const int epoch = ++m_chatEpoch;
    EngineWorker* worker = m_worker.get();
    post([worker, epoch] { worker->startNewChat(epoch); });
}

quint64 EngineClient::restoreSession(const SessionRestore& restore) {
    stop(); // the session is built anew: it must not wait for a long reply
    const quint64 load = ++m_lastLoad;
    EngineWorker* worker = m_worker.get();
    post([worker, load, restore] { worker->restoreSession(load, restore); });
    return load;
}

void EngineClient::exportKvTimeline(const QString& path) {
    EngineWorker* worker = m_worker.get();
    post([worker, path] { worker->exportKvTimeline(path); });
}

void EngineClient::cancelLoads() {
    m_worker->cancelLoadsUpTo(m_lastLoad);
}

void EngineClient::setLoadHook(std::function<void(const LoadProgress&)> hook) {
    // Queued like a request, so that the engine thread never reads the hook while it changes.
    EngineWorker* worker = m_worker.get();
    QMetaObject::invokeMethod(
        worker, [worker, hook = std::move(hook)] { worker->setLoadHook(hook); },
        Qt::QueuedConnection);
}

qint64 EngineClient::generatedTokenCount() const {
    return m_worker->generatedTokenCount();
}

void EngineClient::takeMailbox() {
    const PolicyRunBatch policyBatch = m_policyMailbox.take();
    if (!policyBatch.isEmpty()) emit policyBatchReady(policyBatch);
    EngineBatch batch = m_mailbox.take();
    // Pieces of a conversation the user has already left are not shown.
    batch.pieces.removeIf(
        [this](const StreamPiece& piece) { return piece.chatEpoch != m_chatEpoch; });
    if (!batch.isEmpty()) emit batchReady(batch);
}

void EngineClient::paceRefresh() {
    const double cpu = threadCpuMs();
    const double spentMs = cpu - m_cpuAtLastTakeMs;
    m_cpuAtLastTakeMs = cpu;
    const int interval = m_generationsInFlight > 0
                             ? std::clamp(int(std::lround(spentMs / kDrawingShare)),
                                          kRefreshIntervalMs, kSlowestRefreshMs)
                             : kRefreshIntervalMs;
    if (interval != m_refreshTimer.interval()) m_refreshTimer.setInterval(interval);
}

void EngineClient::onRequestDone() {
    if (--m_requestsInFlight > 0) return;
    m_refreshTimer.stop();
    takeMailbox();
}

void EngineClient::onGenerationFinished(const GenerationReport& report) {
    takeMailbox();
    --m_generationsInFlight;
    emit generationFinished(report);
    if (m_generationsInFlight > 0) return;
    m_refreshTimer.setInterval(kRefreshIntervalMs);
    emit generatingChanged(false);
}

} // namespace sinkscope::ui
