#include "worker/policy_run.h"

#include "worker/display_text.h"

#include <QMutexLocker>

#include <chrono>
#include <exception>
#include <memory>
#include <stdexcept>
#include <utility>

namespace sinkscope::ui {

namespace {

// BOS once, then the text `repeat` times, tokenized as one text so that the copies join as they
// would in a longer document (the same stream `sinkscope-cli stream-ppl` scores).
std::vector<int32_t> streamTokens(const Tokenizer& tokenizer, const QString& text, int repeat) {
    const std::string utf8 = text.toStdString();
    std::string repeated;
    repeated.reserve(utf8.size() * size_t(repeat));
    for (int i = 0; i < repeat; ++i)
        repeated += utf8;
    return tokenizer.encode(repeated, true);
}

std::vector<std::unique_ptr<PolicyStream>> openStreams(const Model& model,
                                                       const std::vector<int32_t>& tokens,
                                                       const PolicyRunRequest& request) {
    if (request.policies.isEmpty()) throw std::invalid_argument("no policy was chosen");
    StreamEvalOptions options;
    options.window = request.window;
    options.recomputeEvery = request.recomputeEvery;
    std::vector<std::unique_ptr<PolicyStream>> streams;
    for (const Policy& policy : request.policies)
        streams.push_back(std::make_unique<PolicyStream>(model, tokens, policy, options));
    return streams;
}

double secondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// One position of one policy: scores it (unless recompute skips it) and records the NLL.
void stepPolicy(PolicyStream& stream, PolicyResult& result, int policyIndex, quint64 run,
                qint64 stepsDone, qint64 stepsTotal, PolicyRunMailbox& mailbox) {
    const int64_t position = stream.nextPosition();
    const auto start = std::chrono::steady_clock::now();
    const std::optional<double> nll = stream.step();
    result.seconds += secondsSince(start);
    if (!nll) return;
    result.positions.push_back(position);
    result.nll.push_back(*nll);
    mailbox.postPoint(run, PolicyPoint{policyIndex, position, *nll}, stepsDone, stepsTotal);
}

} // namespace

QString policyRunStateText(PolicyRunState state) {
    switch (state) {
    case PolicyRunState::Finished:
        return QStringLiteral("finished");
    case PolicyRunState::Stopped:
        return QStringLiteral("stopped");
    case PolicyRunState::Failed:
        break;
    }
    return QStringLiteral("failed");
}

PolicySummary summarizePolicy(const PolicyResult& result) {
    PolicySummary summary;
    summary.name = QString::fromStdString(policyName(result.policy));
    summary.evaluated = qint64(result.nll.size());
    summary.perplexity = perplexityOf(result.nll);
    summary.tailPerplexity = tailPerplexity(result, kTailPositions);
    summary.tokensPerSecond = positionsPerSecond(result);
    summary.kvBytes = result.kvBytes;
    return summary;
}

void PolicyRunMailbox::postPoint(quint64 run, const PolicyPoint& point, qint64 stepsDone,
                                 qint64 stepsTotal) {
    const QMutexLocker lock(&m_mutex);
    if (m_pending.run != run) m_pending = PolicyRunBatch{run, {}, 0, 0};
    m_pending.points.append(point);
    m_pending.stepsDone = stepsDone;
    m_pending.stepsTotal = stepsTotal;
}

PolicyRunBatch PolicyRunMailbox::take() {
    PolicyRunBatch taken;
    const QMutexLocker lock(&m_mutex);
    std::swap(taken, m_pending);
    return taken;
}

PolicyRunReport runPolicies(const Model& model, quint64 run, const PolicyRunRequest& request,
                            PolicyRunMailbox& mailbox, const std::function<bool()>& cancelled) {
    PolicyRunReport report;
    report.run = run;
    try {
        const std::vector<int32_t> tokens =
            streamTokens(model.tokenizer(), request.text, qMax(1, request.repeat));
        report.streamTokens = qint64(tokens.size());
        std::vector<std::unique_ptr<PolicyStream>> streams = openStreams(model, tokens, request);
        for (const auto& stream : streams)
            report.results.push_back(PolicyResult{stream->policy(), {}, {}, 0, 0, false});

        // Policies advance together, a position at a time, so the chart grows side by side.
        const qint64 positions = streams.front()->positionCount();
        const qint64 stepsTotal = positions * qint64(streams.size());
        qint64 stepsDone = 0;
        bool stopped = false;
        for (qint64 position = 0; position < positions && !stopped; ++position) {
            for (size_t i = 0; i < streams.size(); ++i) {
                if (cancelled()) {
                    stopped = true;
                    break;
                }
                stepPolicy(*streams[i], report.results[i], int(i), run, ++stepsDone, stepsTotal,
                           mailbox);
            }
        }
        for (size_t i = 0; i < streams.size(); ++i) {
            report.results[i].kvBytes = streams[i]->kvBytes();
            report.results[i].stopped = stopped;
        }
        report.state = stopped ? PolicyRunState::Stopped : PolicyRunState::Finished;
    } catch (...) {
        report.state = PolicyRunState::Failed;
        report.error = exceptionText(std::current_exception());
    }
    return report;
}

void registerPolicyRunMetaTypes() {
    qRegisterMetaType<PolicyRunRequest>();
    qRegisterMetaType<PolicyRunBatch>();
    qRegisterMetaType<PolicyRunReport>();
}

} // namespace sinkscope::ui
