// The Policies tab's experiment as it crosses threads: a request from the GUI, the per-position
// NLLs the engine thread posts while it runs (taken by the GUI at most ~30 times a second), and
// the report at the end. The evaluation itself (runPolicies) runs on the engine thread only.
#pragma once

#include "eval/stream_eval.h"
#include "model/model.h"

#include <QList>
#include <QMetaType>
#include <QMutex>
#include <QString>

#include <functional>
#include <vector>

namespace sinkscope::ui {

struct PolicyRunRequest {
    QString text;           // the stream's text; BOS is prepended, the text repeated `repeat` times
    int repeat = 1;         // >= 1
    int window = 128;       // W, at most the model's budget window
    int recomputeEvery = 1; // recompute scores positions p with p % k == 0 only
    QList<Policy> policies; // run side by side, a position at a time
};

// One scored position: NLL of the token after `position` under policies[policy].
struct PolicyPoint {
    int policy = 0;
    qint64 position = 0;
    double nll = 0;
};

// What the GUI takes at each refresh: every point posted since the last one, and the progress.
struct PolicyRunBatch {
    quint64 run = 0;
    QList<PolicyPoint> points;
    qint64 stepsDone = 0;  // positions stepped, over all policies
    qint64 stepsTotal = 0; // positionCount * policies
    bool isEmpty() const { return points.isEmpty() && stepsTotal == 0; }
};

enum class PolicyRunState { Finished, Stopped, Failed };

QString policyRunStateText(PolicyRunState state); // "finished", "stopped", "failed"

struct PolicyRunReport {
    quint64 run = 0;
    PolicyRunState state = PolicyRunState::Failed;
    QString error;                     // PolicyRunState::Failed
    qint64 streamTokens = 0;           // BOS included
    std::vector<PolicyResult> results; // [policies] what was scored before the end
};

// The final figures of one policy, as the table shows them.
struct PolicySummary {
    QString name;
    qint64 evaluated = 0;
    double perplexity = 0;     // over every evaluated position
    double tailPerplexity = 0; // over the last kTailPositions positions
    double tokensPerSecond = 0;
    qint64 kvBytes = 0;
};

inline constexpr qint64 kTailPositions = 1000;

PolicySummary summarizePolicy(const PolicyResult& result);

// Worker side posts, the GUI takes; every point is kept (the chart needs them all).
class PolicyRunMailbox {
public:
    void postPoint(quint64 run, const PolicyPoint& point, qint64 stepsDone, qint64 stepsTotal);
    PolicyRunBatch take();

private:
    QMutex m_mutex;
    PolicyRunBatch m_pending; // guarded by m_mutex
};

// Tokenizes the request's text (BOS, then the text `repeat` times) and steps every policy one
// position at a time, posting each NLL; `cancelled` is checked before every step. Engine thread
// only. Errors (an empty text, a window past the budget) end as PolicyRunState::Failed.
PolicyRunReport runPolicies(const Model& model, quint64 run, const PolicyRunRequest& request,
                            PolicyRunMailbox& mailbox, const std::function<bool()>& cancelled);

void registerPolicyRunMetaTypes();

} // namespace sinkscope::ui

Q_DECLARE_METATYPE(sinkscope::ui::PolicyRunRequest)
Q_DECLARE_METATYPE(sinkscope::ui::PolicyRunBatch)
Q_DECLARE_METATYPE(sinkscope::ui::PolicyRunReport)
