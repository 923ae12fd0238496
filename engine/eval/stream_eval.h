// The attention-sink experiment (StreamingLLM, Xiao et al. 2024): one long token stream scored
// token by token under several KV policies, as a chat would see it. Shared by `sinkscope-cli
// stream-ppl` and the playground's Policies tab.
//
// Position p is the query: the token at p is fed, and the logits that come out score the token at
// p + 1 (they are read before anything else is appended). A stream of n tokens has the positions
// 0 .. n-2.
#pragma once

#include "model/model.h"

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sinkscope {

class Session;

enum class PolicyKind {
    Dense,     // every position kept, absolute positions, no cap (breaks past the trained context)
    Window,    // the last W positions only, no sinks
    Sinks,     // the last W positions plus the first N tokens pinned (SinkMode::FirstN)
    Recompute, // each position re-run from scratch over its last W tokens: the quality ceiling
};

struct Policy {
    PolicyKind kind = PolicyKind::Dense;
    int sinks = 0;          // PolicyKind::Sinks: N >= 1
    bool streaming = false; // PolicyKind::Sinks: streaming positions (memory-architecture.md §5)
    bool operator==(const Policy&) const = default;
};

// "dense", "window", "sink:N", "sink:N:streaming" or "recompute"; nullopt and a one-line `error`
// for anything else.
std::optional<Policy> parsePolicy(std::string_view text, std::string& error);
// The text parsePolicy reads back: "sink:4:streaming".
std::string policyName(const Policy& policy);
// dense, window, sink:1, sink:4, sink:4:streaming, recompute.
std::vector<Policy> defaultPolicies();

struct StreamEvalOptions {
    int window = 128;       // W: ring positions of window and sinks, tokens re-run by recompute
    int kvBits = 32;        // f32 by default, so that the figures measure the policy, not rounding
    int recomputeEvery = 1; // recompute scores only the positions p with p % k == 0
    int threads = 1;        // threads that split each matrix product (SessionOptions::threads)
};

// One policy's pass over a stream, a position at a time, so that a caller can interleave several
// policies (the Policies tab draws them side by side) or stop between any two positions.
class PolicyStream {
public:
    // Throws std::invalid_argument for fewer than 2 tokens, a token outside the vocabulary, a
    // window outside [1, the model's budget window], recomputeEvery < 1, or options the session
    // rejects (kv bits).
    PolicyStream(const Model& model, std::vector<int32_t> tokens, const Policy& policy,
                 const StreamEvalOptions& options);
    ~PolicyStream();
    PolicyStream(const PolicyStream&) = delete;
    PolicyStream& operator=(const PolicyStream&) = delete;

    const Policy& policy() const { return m_policy; }
    int64_t positionCount() const { return static_cast<int64_t>(m_tokens.size()) - 1; }
    int64_t nextPosition() const { return m_next; }
    bool done() const { return m_next >= positionCount(); }
    bool evaluates(int64_t position) const; // false for the positions recompute skips

    // Feeds the token at nextPosition() and returns the NLL of the token after it, or nullopt at a
    // position recompute skips (nothing is run then). Throws std::logic_error when done(). All but
    // recompute run the next 64 positions as one batched prefill when a step finds none run
    // ahead (the logits of feeding them one by one, bit for bit), so most steps return at once.
    std::optional<double> step();

    // K and V bytes this policy holds: flat for all but dense, whose cache spans the stream.
    int64_t kvBytes() const;

private:
    struct DenseState;
    // Positions scored ahead in one prefill by the policies that keep their cache.
    static constexpr int64_t kScoreAhead = 64;
    void scoreAhead(int64_t position);
    std::span<const float> recomputeLogits(int64_t position);

    std::vector<int32_t> m_tokens;
    Policy m_policy;
    StreamEvalOptions m_options;
    std::unique_ptr<Session> m_session;  // window, sinks and recompute
    std::unique_ptr<DenseState> m_dense; // dense
    std::deque<double> m_scored;         // NLLs of positions m_next, m_next + 1, ... already run
    int64_t m_next = 0;
};

struct PolicyResult {
    Policy policy;
    std::vector<int64_t> positions; // [evaluated] query positions, ascending
    std::vector<double> nll;        // [evaluated] NLL of the token after each position
    int64_t kvBytes = 0;
    double seconds = 0;   // spent stepping the policy
    bool stopped = false; // ended early by the callback or the stop flag
};

// Called after each evaluated position; return false to stop.
using PositionCallback = std::function<bool(int64_t position, double nll)>;

// Runs the stream's remaining positions, checking `stop` before each one.
PolicyResult evaluatePolicy(PolicyStream& stream, const PositionCallback& onPosition = {},
                            const std::atomic<bool>* stop = nullptr);
// The same over a fresh stream (PolicyStream's exceptions).
PolicyResult evaluatePolicy(const Model& model, std::span<const int32_t> tokens,
                            const Policy& policy, const StreamEvalOptions& options,
                            const PositionCallback& onPosition = {},
                            const std::atomic<bool>* stop = nullptr);

// exp(mean NLL); NaN for no values.
double perplexityOf(std::span<const double> nll);
// Over the evaluated positions in [first, end).
double rangePerplexity(const PolicyResult& result, int64_t first, int64_t end);
// Over the evaluated positions among the last `count` up to the last one evaluated.
double tailPerplexity(const PolicyResult& result, int64_t count);
// [evaluated] at each evaluated position p, the perplexity of the evaluated positions in
// (p - span, p].
std::vector<double> rollingPerplexity(const PolicyResult& result, int64_t span);
// Positions scored per second (0 when nothing was timed).
double positionsPerSecond(const PolicyResult& result);

inline constexpr int64_t kRollingSpan = 256;
// "position,policy,nll,rolling_ppl", then one row per policy per evaluated position, policy by
// policy.
void writeStreamCsv(std::ostream& out, std::span<const PolicyResult> results,
                    int64_t rollingSpan = kRollingSpan);

} // namespace sinkscope
