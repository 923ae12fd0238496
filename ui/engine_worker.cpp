#include "engine_worker.h"

#include "budget.h"
#include "chat_format.h"
#include "display_text.h"
#include "snapshot_mailbox.h"
#include "synthetic.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QThread>

#include <algorithm>
#include <exception>
#include <utility>

namespace sinkscope::ui {

namespace {

// The model code runs on the engine thread only; the GUI thread must never wait on it.
void assertEngineThread() {
    Q_ASSERT(QThread::currentThread() != QCoreApplication::instance()->thread());
}

// Emits requestDone() however the request ends.
class RequestScope {
public:
    explicit RequestScope(EngineWorker& worker) : m_worker(worker) {}
    ~RequestScope() { emit m_worker.requestDone(); }
    RequestScope(const RequestScope&) = delete;
    RequestScope& operator=(const RequestScope&) = delete;

private:
    EngineWorker& m_worker;
};

SessionOptions sessionOptionsFor(const ModelConfig& config, const EngineSettings& settings,
                                 int sinkBlockTokens) {
    SessionOptions options;
    options.kvWindow = settings.kvWindow;
    options.kvBits = settings.kvBits;
    options.positions = settings.positions;
    options.sinks = settings.sinks;
    options.firstN = settings.firstN;
    options.sinkCapacity = sinkBlockTokens;
    options.probe = settings.probe;
    // A probe set for a bigger model falls back to the mean rather than failing the session.
    if (options.probe.layer >= config.nLayer) options.probe.layer = -1;
    if (options.probe.head >= config.nHead) options.probe.head = -1;
    return options;
}

ModelInfo modelInfoFor(const Model& model, const QString& path) {
    const ModelConfig& config = model.config();
    ModelInfo info;
    info.path = path;
    info.name = QString::fromStdString(config.name);
    info.architecture = QString::fromStdString(config.architecture);
    info.nVocab = config.nVocab;
    info.nEmbd = config.nEmbd;
    info.nLayer = config.nLayer;
    info.nHead = config.nHead;
    info.nHeadKv = config.nHeadKv;
    info.headDim = config.headDim;
    info.nCtxTrain = config.nCtxTrain;
    info.parameters = model.parameterCount();
    info.fileBytes = QFileInfo(path).size();
    return info;
}

// The prefix's text token by token, decoding UTF-8 across token boundaries.
QStringList prefixPiecesFor(const Tokenizer& tokenizer, const std::vector<int32_t>& begin,
                            const std::vector<int32_t>& sinkBlock) {
    QStringList pieces;
    for (const int32_t token : begin)
        pieces << QString::fromStdString(tokenizer.piece(token, true));
    QStringDecoder decoder(QStringDecoder::Utf8);
    for (const int32_t token : sinkBlock) {
        const std::string piece = tokenizer.piece(token);
        pieces << decoder.decode(QByteArrayView(piece.data(), qsizetype(piece.size())));
    }
    return pieces;
}

} // namespace

EngineWorker::EngineWorker(SnapshotMailbox& mailbox, QObject* parent)
    : QObject(parent), m_mailbox(mailbox),
      m_sampler(std::make_unique<Sampler>(m_settings.sampler)) {}

EngineWorker::~EngineWorker() {
    m_session.reset(); // before the model it refers to
}

void EngineWorker::cancelGenerationsUpTo(quint64 ticket) {
    quint64 current = m_cancelledTicket.load();
    while (current < ticket && !m_cancelledTicket.compare_exchange_weak(current, ticket)) {
    }
}

void EngineWorker::shutDown() {
    m_shutDown.store(true);
}

void EngineWorker::cancelPolicyRunsUpTo(quint64 run) {
    quint64 current = m_cancelledPolicyRun.load();
    while (current < run && !m_cancelledPolicyRun.compare_exchange_weak(current, run)) {
    }
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

void EngineWorker::openModel(const QString& path, bool writeSyntheticIfMissing) {
    const RequestScope scope(*this);
    if (m_shutDown.load()) return;
    assertEngineThread();
    try {
        std::unique_ptr<Model> model = loadModelFile(path, writeSyntheticIfMissing);
        if (!model) return;
        // A new vocabulary: the old transcript's tokens mean nothing to this model.
        BuiltSession built = buildSession(*model, m_settings, m_toolsJson, {});
        if (m_shutDown.load()) return;
        m_transcript.clear();
        m_streamDecoder.resetState();
        m_session.reset(); // refers to the old model
        m_model = std::move(model);
        m_sampler = std::make_unique<Sampler>(m_settings.sampler);
        emit modelLoaded(modelInfoFor(*m_model, path));
        commitSession(std::move(built), QStringLiteral("Model loaded"));
    } catch (...) {
        emit loadFailed(
            QStringLiteral("Could not open %1: %2")
                .arg(QFileInfo(path).fileName(), exceptionText(std::current_exception())));
    }
}

std::unique_ptr<Model> EngineWorker::loadModelFile(const QString& path,
                                                   bool writeSyntheticIfMissing) {
    std::string error;
    if (writeSyntheticIfMissing && !QFileInfo::exists(path)) {
        const QString folder = QFileInfo(path).absolutePath();
        if (!QDir().mkpath(folder)) {
            emit loadFailed(QStringLiteral("Could not create the folder %1 for the synthetic model")
                                .arg(folder));
            return nullptr;
        }
        if (!writeSyntheticModel(SyntheticSpec{}, QFile::encodeName(path).toStdString(), error)) {
            emit loadFailed(QStringLiteral("Could not write the synthetic model to %1: %2")
                                .arg(path, QString::fromStdString(error)));
            return nullptr;
        }
    }
    std::unique_ptr<Model> model = Model::load(QFile::encodeName(path).toStdString(), error);
    if (!model)
        emit loadFailed(QStringLiteral("Could not open %1: %2")
                            .arg(QFileInfo(path).fileName(), QString::fromStdString(error)));
    return model;
}

EngineWorker::BuiltSession
EngineWorker::buildSession(const Model& model, const EngineSettings& settings,
                           const std::string& toolsJson,
                           const std::vector<int32_t>& transcript) const {
    assertEngineThread();
    QElapsedTimer clock;
    clock.start();
    const ChatFormat format(model.tokenizer());
    const std::vector<int32_t> begin = format.beginTokens();
    const std::vector<int32_t> sinkBlock = format.sinkBlockTokens(toolsJson);

    BuiltSession built;
    built.session = std::make_unique<Session>(
        model, sessionOptionsFor(model.config(), settings, int(sinkBlock.size())));
    Session& session = *built.session;
    const qsizetype cap = m_mailbox.snapshotCap();
    const StepCallback record = [&](const StepSnapshot& step) {
        built.snapshots.append(step);
        if (built.snapshots.size() > cap) built.snapshots.removeFirst();
        return !m_shutDown.load();
    };

    session.prefill(begin, record);
    // Under ToolsAndBos the session pins BOS itself and the tool block is pinned here.
    session.prefill(sinkBlock, record, settings.sinks == SinkMode::ToolsAndBos);
    const size_t tailLength = std::min(transcript.size(), size_t(session.effectiveWindow()));
    const std::vector<int32_t> tail(transcript.end() - std::ptrdiff_t(tailLength),
                                    transcript.end());
    session.prefill(tail, record);

    SessionInfo& info = built.info;
    info.seconds = clock.nsecsElapsed() / 1e9;
    info.reprefilledTokens = int(tailLength);
    info.layout.prefixLength = qint64(begin.size() + sinkBlock.size());
    info.layout.transcriptBase = qint64(transcript.size() - tailLength);
    info.prefixPieces = prefixPiecesFor(model.tokenizer(), begin, sinkBlock);
    info.settings = settings;
    info.settings.probe = session.options().probe;
    info.effectiveWindow = session.effectiveWindow();
    info.budgetWindow = session.budgetWindow();
    info.sinkSlots = session.cache().shape().sinkSlots;
    info.sinksUsed = session.cache().sinksUsed();
    info.bytesAllocated = session.cache().bytesAllocated();
    info.budgetBytes = kKvBudgetBytes;
    return built;
}

void EngineWorker::commitSession(BuiltSession built, const QString& reason) {
    m_session = std::move(built.session);
    m_layout = built.info.layout;
    built.info.reason = reason;
    built.info.chatEpoch = m_chatEpoch;
    m_mailbox.postSessionReset(m_layout, std::move(built.snapshots));
    emit sessionReady(built.info);
}

void EngineWorker::rebuildSession(const EngineSettings& settings, const std::string& toolsJson,
                                  const QString& reason) {
    BuiltSession built = buildSession(*m_model, settings, toolsJson, m_transcript);
    if (m_shutDown.load()) return;
    m_settings = settings;
    m_toolsJson = toolsJson;
    commitSession(std::move(built), reason);
}

void EngineWorker::applySettings(const EngineSettings& settings) {
    const RequestScope scope(*this);
    if (m_shutDown.load()) return;
    const bool samplerChanged = !settings.sameSampler(m_settings);
    if (!m_model || settings.sameSession(m_settings)) {
        m_settings = settings;
    } else {
        try {
            rebuildSession(settings, m_toolsJson, QStringLiteral("Settings changed"));
        } catch (...) {
            emit errorOccurred(QStringLiteral("Settings not applied: %1")
                                   .arg(exceptionText(std::current_exception())));
            return;
        }
    }
    if (samplerChanged) m_sampler = std::make_unique<Sampler>(m_settings.sampler);
}

void EngineWorker::applyTools(const QString& compactJson) {
    const RequestScope scope(*this);
    if (m_shutDown.load()) return;
    const std::string toolsJson = compactJson.toStdString();
    if (!m_model) {
        m_toolsJson = toolsJson;
        return;
    }
    try {
        rebuildSession(m_settings, toolsJson, QStringLiteral("Tools applied"));
    } catch (...) {
        emit errorOccurred(
            QStringLiteral("Tools not applied: %1").arg(exceptionText(std::current_exception())));
    }
}

void EngineWorker::startNewChat(int chatEpoch) {
    const RequestScope scope(*this);
    if (m_shutDown.load()) return;
    m_chatEpoch = chatEpoch;
    m_transcript.clear();
    m_streamDecoder.resetState();
    m_sampler = std::make_unique<Sampler>(m_settings.sampler); // the same seed replays a chat
    if (!m_model) return;
    try {
        rebuildSession(m_settings, m_toolsJson, QStringLiteral("New chat"));
    } catch (...) {
        emit errorOccurred(
            QStringLiteral("New chat failed: %1").arg(exceptionText(std::current_exception())));
    }
}

void EngineWorker::generate(quint64 ticket, const QString& userText,
                            const GenerationLimits& limits) {
    const RequestScope scope(*this);
    GenerationReport report;
    report.ticket = ticket;
    if (isCancelled(ticket)) {
        report.reason = StopReason::Stopped;
    } else if (!m_session) {
        emit errorOccurred(QStringLiteral("No model is loaded."));
    } else if (userText.trimmed().isEmpty()) {
        emit errorOccurred(QStringLiteral("Nothing to send: the message is empty."));
    } else {
        assertEngineThread();
        const size_t fedBefore = m_session->history().size();
        try {
            runGeneration(userText.toStdString(), limits, report);
        } catch (...) {
            report.reason = StopReason::Failed;
            emit errorOccurred(QStringLiteral("Generation failed: %1")
                                   .arg(exceptionText(std::current_exception())));
        }
        // Whatever was fed, even before a failure, is part of the conversation now.
        const std::vector<int32_t>& history = m_session->history();
        m_transcript.insert(m_transcript.end(), history.begin() + std::ptrdiff_t(fedBefore),
                            history.end());
        report.tokensSeen = m_session->position();
        report.evictions = m_session->cache().evictions();
    }
    emit generationFinished(report);
}

void EngineWorker::runGeneration(const std::string& userText, const GenerationLimits& limits,
                                 GenerationReport& report) {
    const ChatFormat format(m_model->tokenizer());
    const std::vector<int32_t> prompt =
        format.turnTokens(userText, format.endsAtLineStart(m_transcript));
    m_turnTokens = 0;
    m_turnGenerated = 0;
    m_decodeClock.start();
    StopReason callbackReason = StopReason::Stopped;
    const StepCallback onStep = [&](const StepSnapshot& step) {
        return recordStep(step, report.ticket, limits, callbackReason);
    };
    const GenerationResult result =
        m_session->generate(prompt, limits.maxNewTokens, *m_sampler, onStep, limits.ignoreEos);
    report.promptTokens = result.prefillTokens;
    report.generatedTokens = int(result.tokens.size());
    report.prefillSeconds = result.prefillSeconds;
    report.decodeSeconds = result.decodeSeconds;
    if (result.stoppedByEos)
        report.reason = StopReason::EndOfText;
    else if (result.stoppedByCallback)
        report.reason = callbackReason;
    else
        report.reason = StopReason::MaxTokens;
}

bool EngineWorker::recordStep(const StepSnapshot& step, quint64 ticket,
                              const GenerationLimits& limits, StopReason& stopReason) {
    const std::string piece = m_model->tokenizer().piece(step.queryToken);
    StreamPiece streamed;
    streamed.transcriptIndex = qint64(m_transcript.size()) + m_turnTokens++;
    streamed.text = m_streamDecoder.decode(QByteArrayView(piece.data(), qsizetype(piece.size())));
    streamed.generated = step.generated;
    streamed.chatEpoch = m_chatEpoch;
    m_mailbox.postPiece(std::move(streamed));
    m_mailbox.postSnapshot(step);

    if (step.generated) {
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
    if (step.generated && limits.stopAtNewline && ChatFormat::endsLine(piece)) {
        stopReason = StopReason::Newline;
        return false;
    }
    return true;
}

} // namespace sinkscope::ui
