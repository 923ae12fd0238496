#include "worker/engine_worker.h"

#include "memory/budget.h"
#include "session/session_defaults.h"
#include "worker/default_model.h"
#include "worker/display_text.h"
#include "worker/engine_values.h"
#include "worker/kv_timeline_csv.h"
#include "worker/snapshot_mailbox.h"
#include "worker/worker_scope.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QThread>

#include <algorithm>
#include <exception>
#include <optional>
#include <stdexcept>
#include <utility>

namespace sinkscope::ui {

namespace {

// A cancel "up to" a ticket: the mark only ever rises, whichever thread sets it.
void raiseTo(std::atomic<quint64>& mark, quint64 ticket) {
    quint64 current = mark.load();
    while (current < ticket && !mark.compare_exchange_weak(current, ticket)) {
    }
}

SessionOptions sessionOptionsFor(const ModelConfig& config, const EngineSettings& settings) {
    SessionOptions options = defaultSessionOptions(config);
    if (!settings.useModelHints || config.suggestedKvWindow <= 0)
        options.kvWindow = settings.kvWindow;
    if (!settings.useModelHints || config.suggestedPositionMode.empty())
        options.positions = settings.positions;
    options.kvBits = settings.kvBits;
    options.sinks = settings.sinks;
    options.firstN = settings.firstN;
    options.probe = settings.probe;
    options.threads = settings.threads;
    options.timelineCapacity = kKvTimelineCapacity;
    // A probe set for a bigger model falls back to the mean rather than failing the session.
    if (options.probe.layer >= config.nLayer) options.probe.layer = -1;
    if (options.probe.head >= config.nHead) options.probe.head = -1;
    return options;
}

QList<ToolCallView> callViewsOf(const ToolResponse& response) {
    QList<ToolCallView> views;
    for (size_t i = 0; i < response.functionCalls.size(); ++i) {
        ToolCallView view = callViewOf(response.functionCalls[i]);
        if (i < response.attribution.size()) {
            const CallAttribution& attribution = response.attribution[i];
            for (const ToolShare& share : attribution.tools)
                view.toolShares.append({QString::fromStdString(share.tool), share.share});
            view.otherShare = attribution.other;
            view.attributed = true;
        }
        views.append(view);
    }
    return views;
}

// With ignoreEos the reply is free-running text (no calls): the window can be watched sliding.
RespondOptions respondOptionsFor(const EngineSettings& settings, const GenerationLimits& limits) {
    RespondOptions options;
    options.sampler = settings.sampler;
    options.calls = limits.ignoreEos ? CallPolicy::None : limits.calls;
    options.maxTokens = limits.maxNewTokens;
    options.ignoreEndOfText = limits.ignoreEos;
    options.argumentsFromMessage = limits.argumentsFromMessage;
    return options;
}

} // namespace

EngineWorker::EngineWorker(SnapshotMailbox& mailbox, QObject* parent)
    : QObject(parent), m_mailbox(mailbox) {}

EngineWorker::~EngineWorker() {
    m_chat.reset(); // before the model it refers to
}

void EngineWorker::cancelGenerationsUpTo(quint64 ticket) {
    raiseTo(m_cancelledTicket, ticket);
}

void EngineWorker::shutDown() {
    m_shutDown.store(true);
}

void EngineWorker::cancelPolicyRunsUpTo(quint64 run) {
    raiseTo(m_cancelledPolicyRun, run);
}

void EngineWorker::cancelLoadsUpTo(quint64 ticket) {
    raiseTo(m_cancelledLoad, ticket);
}

void EngineWorker::runPolicies(quint64 run, const PolicyRunRequest& request,
                               PolicyRunMailbox& mailbox) {
    const RequestScope scope(*this);
    assertEngineThread();
    const auto cancelled = [this, run] {
        return m_shutDown.load() || run <= m_cancelledPolicyRun.load();
    };
    PolicyRunReport report;
    report.run = run;
    if (cancelled())
        report.state = PolicyRunState::Stopped;
    else if (!m_model)
        report.error = QStringLiteral("no model is loaded");
    else
        report = sinkscope::ui::runPolicies(*m_model, run, request, mailbox, cancelled);
    emit policyRunFinished(report);
}

bool EngineWorker::isCancelled(quint64 ticket) const {
    return m_shutDown.load() || ticket <= m_cancelledTicket.load();
}

bool EngineWorker::isLoadCancelled(quint64 load) const {
    return m_shutDown.load() || load <= m_cancelledLoad.load();
}

// After the session is reported: the chat answers while the file is read on the hasher's thread.
// A stop leaves the hash unknown (""), and a restore then reads the file again.
void EngineWorker::hashModel() {
    m_hasher.start(m_modelPath);
}

SessionOptions EngineWorker::sessionOptions(const Model& model,
                                            const EngineSettings& settings) const {
    return sessionOptionsFor(model.config(), settings);
}

StepCallback EngineWorker::snapshotCollector(QList<StepSnapshot>& snapshots) const {
    const qsizetype cap = m_mailbox.snapshotCap();
    return [this, &snapshots, cap](const StepSnapshot& step) {
        snapshots.append(step);
        if (snapshots.size() > cap) snapshots.removeFirst();
        return !m_shutDown.load();
    };
}

std::unique_ptr<ToolChat> EngineWorker::buildChat(const Model& model,
                                                  const EngineSettings& settings,
                                                  std::span<const Turn> earlier,
                                                  QList<StepSnapshot>& rebuild,
                                                  const BuildProgressCallback& onProgress) const {
    return buildChat(model, settings, m_tools, m_templateOptions, earlier, rebuild, onProgress);
}

std::unique_ptr<ToolChat>
EngineWorker::buildChat(const Model& model, const EngineSettings& settings, const ToolSet& tools,
                        const ModelTemplateOptions& templateOptions, std::span<const Turn> earlier,
                        QList<StepSnapshot>& rebuild,
                        const BuildProgressCallback& onProgress) const {
    assertEngineThread();
    return std::make_unique<ToolChat>(model, sessionOptions(model, settings), tools, std::string(),
                                      earlier, snapshotCollector(rebuild), std::nullopt,
                                      templateOptions, onProgress);
}

void EngineWorker::commitSession(QList<StepSnapshot> snapshots, const QString& reason,
                                 bool retokenized, bool restored) {
    const Session& session = m_chat->session();
    const RebuildReport& rebuild = m_chat->lastRebuild();
    SessionInfo info;
    info.reason = reason;
    info.seconds = rebuild.seconds;
    info.reprefilledTokens = rebuild.replayedTokens;
    info.reusedSinkTokens = rebuild.reusedSinkTokens;
    info.layout.prefixLength = qint64(m_chat->toolBlock().tokens.size());
    info.layout.transcriptBase = qint64(rebuild.transcriptTokens - rebuild.replayedTokens);
    info.prefixPieces = piecesOf(m_model->tokenizer(), m_chat->toolBlock().tokens);
    info.prefixIds = idsOf(m_chat->toolBlock().tokens);
    info.settings = m_settings;
    info.settings.probe = session.options().probe;
    info.effectiveWindow = session.effectiveWindow();
    info.positions = session.options().positions;
    info.budgetWindow = session.budgetWindow();
    info.sinkSlots = session.cache().shape().sinkSlots;
    info.sinksUsed = session.cache().sinksUsed();
    info.bytesAllocated = session.cache().bytesAllocated();
    info.budgetBytes = kKvBudgetBytes;
    info.chatEpoch = m_chatEpoch;
    info.chatLayout = QString::fromLatin1(chatLayoutName(m_chat->chatTemplate().layout()));
    info.chatTemplate = templateInfoOf(*m_chat);
    info.toolSpans = toolSpansOf(m_chat->toolBlock());
    info.sinkBudget = sinkBudgetInfo(m_chat->budget());
    info.transcriptTokens = rebuild.transcriptTokens;
    info.retokenized = retokenized;
    info.conversation = turnViewsOf(m_chat->conversation());
    info.restored = restored;
    if (restored || retokenized) {
        const std::vector<int32_t> transcript = m_chat->conversation().transcriptTokens();
        info.transcriptPieces = piecesOf(m_model->tokenizer(), transcript);
        info.transcriptIds = idsOf(transcript);
    }
    m_mailbox.postSessionReset(info.layout, std::move(snapshots));
    emit sessionReady(info);
}

void EngineWorker::applySettings(const EngineSettings& settings) {
    const RequestScope scope(*this);
    if (m_shutDown.load()) return;
    if (!m_chat || settings.sameSession(m_settings)) {
        // Sampler settings apply from the next turn on; a thread count at once.
        if (m_chat && settings.threads != m_chat->session().threads()) {
            try {
                m_chat->setThreads(settings.threads);
            } catch (...) {
                emit errorOccurred(QStringLiteral("Threads not changed: %1")
                                       .arg(exceptionText(std::current_exception())));
                return;
            }
        }
        m_settings = settings;
        return;
    }
    try {
        QList<StepSnapshot> snapshots;
        m_chat->rebuild(sessionOptions(*m_model, settings), snapshotCollector(snapshots));
        if (m_shutDown.load()) return;
        m_settings = settings;
        commitSession(std::move(snapshots), QStringLiteral("Settings changed"));
    } catch (...) {
        emit errorOccurred(QStringLiteral("Settings not applied: %1")
                               .arg(exceptionText(std::current_exception())));
    }
}

void EngineWorker::setToolsInSystemTurn(bool enabled) {
    const RequestScope scope(*this);
    if (m_shutDown.load() || enabled == m_templateOptions.toolsInSystemTurn) return;
    const ModelTemplateOptions previous = m_templateOptions;
    m_templateOptions.toolsInSystemTurn = enabled;
    if (!m_chat) return;
    try {
        // The template's options are fixed when a chat is made: its turns are rendered anew.
        const std::span<const Turn> earlier = m_chat->conversation().turns();
        QList<StepSnapshot> snapshots;
        std::unique_ptr<ToolChat> chat = buildChat(*m_model, m_settings, earlier, snapshots);
        if (m_shutDown.load()) return;
        m_streamDecoder.resetState();
        m_chat = std::move(chat);
        commitSession(std::move(snapshots), QStringLiteral("Template option changed"),
                      !m_chat->conversation().turns().empty());
    } catch (...) {
        m_templateOptions = previous;
        emit errorOccurred(QStringLiteral("Template option not applied: %1")
                               .arg(exceptionText(std::current_exception())));
    }
}

void EngineWorker::previewTools(quint64 ticket, const QString& compactJson) {
    const RequestScope scope(*this);
    if (m_shutDown.load() || !m_chat) return;
    const ToolsParseResult parsed = parseToolsText(compactJson);
    if (!parsed.ok()) return; // the editor reports the error on Apply
    try {
        const ToolBlock block = m_chat->chatTemplate().toolBlock(*parsed.tools);
        ToolsPreview preview;
        preview.ticket = ticket;
        preview.compactJson = compactJson;
        preview.sinksUsed = int(block.tokens.size());
        preview.toolSpans = toolSpansOf(block);
        preview.sinkBudget =
            sinkBudgetInfo(sinkBudget(m_model->config(), m_chat->session().options(), block));
        emit toolsPreviewed(preview);
    } catch (...) {
        // A block that cannot be rendered fails the same way on Apply, which reports it.
    }
}

void EngineWorker::exportKvTimeline(const QString& path) {
    const RequestScope scope(*this);
    KvTimelineExported result;
    result.path = path;
    if (!m_chat) {
        result.error = QStringLiteral("no model is loaded, so there is no session to export");
    } else {
        const KvTimeline& timeline = m_chat->session().timeline();
        QSaveFile file(path);
        if (file.open(QIODevice::WriteOnly) && writeKvTimelineCsv(m_chat->session(), file) &&
            file.commit()) {
            result.rows = qint64(timeline.size());
            result.dropped = timeline.dropped();
        } else {
            result.error = file.errorString();
        }
    }
    emit kvTimelineExported(result);
}

void EngineWorker::startNewChat(int chatEpoch) {
    const RequestScope scope(*this);
    if (m_shutDown.load()) return;
    m_chatEpoch = chatEpoch;
    m_streamDecoder.resetState();
    if (!m_model) return;
    try {
        QList<StepSnapshot> snapshots;
        std::unique_ptr<ToolChat> chat = buildChat(*m_model, m_settings, {}, snapshots);
        if (m_shutDown.load()) return;
        m_chat = std::move(chat);
        commitSession(std::move(snapshots), QStringLiteral("New chat"));
    } catch (...) {
        emit errorOccurred(
            QStringLiteral("New chat failed: %1").arg(exceptionText(std::current_exception())));
    }
}

void EngineWorker::generate(quint64 ticket, const QString& userText,
                            const GenerationLimits& limits) {
    const std::string text = userText.trimmed().toStdString();
    runTurn(ticket, userText, limits, [&](const StepCallback& watch, GenerationReport& report) {
        const ToolResponse response =
            m_chat->ask(text, respondOptionsFor(m_settings, limits), watch);
        return reportReply(response, limits, report);
    });
}

void EngineWorker::sendToolResult(quint64 ticket, const QString& resultJson,
                                  const GenerationLimits& limits) {
    const QByteArray bytes = resultJson.toUtf8();
    runTurn(ticket, resultJson, limits, [&](const StepCallback& watch, GenerationReport& report) {
        const JsonDocument result =
            parseJsonDocument(std::string_view(bytes.constData(), size_t(bytes.size())));
        if (result.syntaxError)
            throw std::invalid_argument("The tool result is not JSON: " +
                                        result.syntaxError->text());
        report.toolResultTurn = true;
        const ToolResponse response =
            m_chat->sendToolResult(result.value, respondOptionsFor(m_settings, limits), watch);
        return reportReply(response, limits, report);
    });
}

StopReason EngineWorker::reportReply(const ToolResponse& response, const GenerationLimits& limits,
                                     GenerationReport& report) const {
    report.calls = callViewsOf(response);
    report.confidence = response.confidence;
    report.callError = QString::fromStdString(response.error);
    if (response.type == ResponseType::Call) return StopReason::ToolCall;
    return m_turnGenerated >= limits.maxNewTokens ? StopReason::MaxTokens : StopReason::EndOfText;
}

// Everything but the turn itself: the checks, the step watcher, the report and its counts.
void EngineWorker::runTurn(quint64 ticket, const QString& text, const GenerationLimits& limits,
                           const TurnRunner& turn) {
    const RequestScope scope(*this);
    GenerationReport report;
    report.ticket = ticket;
    if (isCancelled(ticket)) {
        report.reason = StopReason::Stopped;
        emit generationFinished(report);
        return;
    }
    if (!m_chat) {
        emit errorOccurred(QStringLiteral("No model is loaded."));
        emit generationFinished(report);
        return;
    }
    if (text.trimmed().isEmpty()) {
        emit errorOccurred(QStringLiteral("Nothing to send: the message is empty."));
        emit generationFinished(report);
        return;
    }
    assertEngineThread();
    m_turnBase = qint64(m_chat->conversation().tokenCount());
    m_turnTokens = 0;
    m_turnGenerated = 0;
    m_turnSteps = 0;
    m_replayEnd = 0;
    m_decodeClock.start();
    std::optional<StopReason> stoppedBy;
    const StepCallback watch = [&](const StepSnapshot& step) {
        StopReason reason = StopReason::Stopped;
        if (recordStep(step, ticket, limits, reason)) return true;
        stoppedBy = reason;
        return false;
    };
    try {
        const StopReason ended = turn(watch, report);
        report.reason = stoppedBy.value_or(ended);
        const TurnTiming& timing = m_chat->lastTurn();
        report.promptTokens = timing.promptTokens;
        report.prefillSeconds = timing.prefillSeconds;
        report.decodeSeconds = timing.decodeSeconds;
        report.rerendered = timing.rerendered;
        report.rerenderReason = QString::fromStdString(timing.rerenderReason);
        report.replayedTokens = timing.replayedTokens;
    } catch (...) {
        report.reason = StopReason::Failed;
        emit errorOccurred(
            QStringLiteral("Generation failed: %1").arg(exceptionText(std::current_exception())));
    }
    report.generatedTokens = m_turnGenerated;
    report.conversation = turnViewsOf(m_chat->conversation());
    report.tokensSeen = m_chat->session().position();
    report.evictions = m_chat->session().cache().evictions();
    emit generationFinished(report);
}

// `step.generated`: the assistant's turn wrote it, forced tokens included (assistant_turn.h).
bool EngineWorker::recordStep(const StepSnapshot& step, quint64 ticket,
                              const GenerationLimits& limits, StopReason& stopReason) {
    if (m_turnSteps++ == 0) followRerender();
    if (step.queryPosition < m_replayEnd) {
        // Not a piece of the conversation: the new render's tokens already shown. The rebuild
        // runs to its end so that the session stays whole.
        m_mailbox.postSnapshot(step);
        return !m_shutDown.load();
    }
    const bool assistant = step.generated;
    const std::string piece = m_model->tokenizer().piece(step.queryToken, true);
    StreamPiece streamed;
    streamed.transcriptIndex = m_turnBase + m_turnTokens++;
    streamed.text = m_streamDecoder.decode(QByteArrayView(piece.data(), qsizetype(piece.size())));
    streamed.generated = assistant;
    streamed.control = m_model->tokenizer().type(step.queryToken) == TokenType::Control;
    streamed.tokenId = step.queryToken;
    streamed.position = step.queryPosition;
    streamed.chatEpoch = m_chatEpoch;
    m_mailbox.postPiece(std::move(streamed));
    m_mailbox.postSnapshot(step);

    if (assistant) {
        ++m_generatedTokens;
        ++m_turnGenerated;
        m_mailbox.postProgress({m_turnGenerated, m_decodeClock.nsecsElapsed() / 1e9});
    } else {
        m_decodeClock.restart();
    }
    if (isCancelled(ticket)) {
        stopReason = StopReason::Stopped;
        return false;
    }
    // Only the plain layout (and free-running text) has no marker that ends a reply.
    const bool endsAtNewline =
        limits.ignoreEos || m_chat->chatTemplate().layout() == ChatLayout::Plain;
    if (assistant && limits.stopAtNewline && endsAtNewline &&
        piece.find('\n') != std::string::npos) {
        stopReason = StopReason::Newline;
        return false;
    }
    return true;
}

void EngineWorker::followRerender() {
    const TranscriptChange& change = m_chat->conversation().lastChange();
    if (!change.rerendered) return;
    // tool_chat.cpp rebuildSession: the block, then the last W of the unchanged tokens.
    const qint64 kept = qint64(change.kept);
    const qint64 replayed = std::min<qint64>(m_chat->session().effectiveWindow(), kept);
    StreamLayout layout;
    layout.prefixLength = qint64(m_chat->toolBlock().tokens.size());
    layout.transcriptBase = kept - replayed;
    m_replayEnd = layout.prefixLength + replayed;
    m_turnBase = kept;
    m_mailbox.postTranscriptRewrite(layout, kept);
}

} // namespace sinkscope::ui
