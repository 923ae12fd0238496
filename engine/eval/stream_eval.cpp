#include "eval/stream_eval.h"

#include "eval/perplexity.h"
#include "memory/kv_cache.h"
#include "model/transformer.h"
#include "session/session.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <limits>
#include <ostream>
#include <stdexcept>

namespace sinkscope {

namespace {

constexpr std::string_view kSinkPrefix = "sink:";
constexpr std::string_view kStreamingSuffix = ":streaming";
constexpr int kMaxSinks = 1 << 20;

// N of "sink:N", a whole number in [1, kMaxSinks]; nullopt otherwise.
std::optional<int> parseSinkCount(std::string_view text) {
    int count = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), count);
    if (text.empty() || error != std::errc() || end != text.data() + text.size() || count < 1 ||
        count > kMaxSinks)
        return std::nullopt;
    return count;
}

SessionOptions sessionOptionsFor(const Policy& policy, const StreamEvalOptions& options) {
    SessionOptions session;
    session.kvWindow = options.window;
    session.kvBits = options.kvBits;
    session.threads = options.threads;
    session.sinks = SinkMode::None;
    session.positions = PositionMode::Absolute;
    if (policy.kind == PolicyKind::Sinks) {
        session.sinks = SinkMode::FirstN;
        session.firstN = policy.sinks;
        if (policy.streaming) session.positions = PositionMode::Streaming;
    }
    return session;
}

void validate(const Model& model, std::span<const int32_t> tokens,
              const StreamEvalOptions& options) {
    if (tokens.size() < 2)
        throw std::invalid_argument("a stream needs at least 2 tokens to score one, got " +
                                    std::to_string(tokens.size()));
    for (const int32_t token : tokens)
        if (token < 0 || token >= model.config().nVocab)
            throw std::invalid_argument("token id " + std::to_string(token) +
                                        " is outside the vocabulary");
    // The session reads a window of 0 as "the budget window": here it would be a silent default.
    if (options.window < 1)
        throw std::invalid_argument("stream window must be >= 1, got " +
                                    std::to_string(options.window));
    if (options.recomputeEvery < 1)
        throw std::invalid_argument("recompute-every must be >= 1, got " +
                                    std::to_string(options.recomputeEvery));
}

double secondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

std::optional<Policy> parsePolicy(std::string_view text, std::string& error) {
    if (text == "dense") return Policy{PolicyKind::Dense};
    if (text == "window") return Policy{PolicyKind::Window};
    if (text == "recompute") return Policy{PolicyKind::Recompute};
    if (text.starts_with(kSinkPrefix)) {
        std::string_view count = text.substr(kSinkPrefix.size());
        const bool streaming = count.ends_with(kStreamingSuffix);
        if (streaming) count.remove_suffix(kStreamingSuffix.size());
        if (const std::optional<int> sinks = parseSinkCount(count))
            return Policy{PolicyKind::Sinks, *sinks, streaming};
        error = "policy '" + std::string(text) + "': the sink count '" + std::string(count) +
                "' is not a whole number in [1, " + std::to_string(kMaxSinks) + "]";
        return std::nullopt;
    }
    error = "policy '" + std::string(text) +
            "' is not one of dense, window, sink:N, sink:N:streaming, recompute";
    return std::nullopt;
}

std::string policyName(const Policy& policy) {
    switch (policy.kind) {
    case PolicyKind::Dense:
        return "dense";
    case PolicyKind::Window:
        return "window";
    case PolicyKind::Sinks:
        return std::string(kSinkPrefix) + std::to_string(policy.sinks) +
               (policy.streaming ? std::string(kStreamingSuffix) : std::string());
    case PolicyKind::Recompute:
        break;
    }
    return "recompute";
}

std::vector<Policy> defaultPolicies() {
    return {
        {PolicyKind::Dense},    {PolicyKind::Window},         {PolicyKind::Sinks, 1},
        {PolicyKind::Sinks, 4}, {PolicyKind::Sinks, 4, true}, {PolicyKind::Recompute},
    };
}

// Dense keeps every position. A Session caps its window at the budget window (the trained
// context, for stories260K) and dense must run past it, so it drives a cache as long as the
// stream through forward() itself.
struct PolicyStream::DenseState {
    DenseState(const Model& model, int positions, int kvBits, int threads)
        : model(model),
          cache(KvCacheShape{model.config().nLayer, model.config().kvDim(), 0, positions, kvBits}),
          state(model.config(), cache.slotCount(), threads) {}

    // Session::score's work on this cache: one token through forward(), more as one chunk
    // (forwardChunk: the same logits, bit for bit).
    void score(std::span<const int32_t> tokens, const LogitsCallback& onLogits) {
        if (tokens.size() == 1) {
            const int slot = cache.place(tokens[0], position, false);
            forward(model, cache, state, tokens[0], QueryPlacement{position, slot, false}, {});
            ++position;
            onLogits(0, state.logits);
            return;
        }
        chunk.clear();
        for (const int32_t token : tokens) {
            const int slot = cache.place(token, position, false);
            chunk.add(cache, token, QueryPlacement{position, slot, false});
            ++position;
        }
        forwardChunk(model, cache, state, chunk, {});
        for (int t = 0; t < chunk.size(); ++t) {
            chunkLogits(model, state, t);
            onLogits(static_cast<size_t>(t), state.logits);
        }
    }

    const Model& model;
    KvCache cache; // [n_layer][positions][kv]: never evicts within the stream
    RunState state;
    PrefillChunk chunk;
    int64_t position = 0;
};

PolicyStream::PolicyStream(const Model& model, std::vector<int32_t> tokens, const Policy& policy,
                           const StreamEvalOptions& options)
    : m_tokens(std::move(tokens)), m_policy(policy), m_options(options) {
    validate(model, m_tokens, options);
    if (policy.kind == PolicyKind::Dense) {
        if (positionCount() > std::numeric_limits<int>::max())
            throw std::invalid_argument("the stream is too long for a dense cache");
        m_dense = std::make_unique<DenseState>(model, static_cast<int>(positionCount()),
                                               options.kvBits, options.threads);
        return;
    }
    m_session = std::make_unique<Session>(model, sessionOptionsFor(policy, options));
    if (m_session->effectiveWindow() != options.window)
        throw std::invalid_argument("stream window " + std::to_string(options.window) +
                                    " exceeds the model's budget window " +
                                    std::to_string(m_session->budgetWindow()));
}

PolicyStream::~PolicyStream() = default;

bool PolicyStream::evaluates(int64_t position) const {
    return m_policy.kind != PolicyKind::Recompute || position % m_options.recomputeEvery == 0;
}

std::optional<double> PolicyStream::step() {
    if (done()) throw std::logic_error("policy stream: every position is already scored");
    const int64_t position = m_next++;
    if (m_policy.kind == PolicyKind::Recompute) {
        if (!evaluates(position)) return std::nullopt;
        return negativeLogLikelihood(recomputeLogits(position), m_tokens[position + 1]);
    }
    if (m_scored.empty()) scoreAhead(position);
    const double nll = m_scored.front();
    m_scored.pop_front();
    return nll;
}

// The next kScoreAhead positions (at most the stream's rest) run as one prefill; their NLLs wait
// in m_scored for the steps that return them. Session::score places sinks by the session's
// SinkMode, so the first N tokens are pinned as prefill pins them.
void PolicyStream::scoreAhead(int64_t position) {
    const int64_t count = std::min<int64_t>(kScoreAhead, positionCount() - position);
    const std::span<const int32_t> tokens = std::span(m_tokens).subspan(position, count);
    const auto keep = [&](size_t i, std::span<const float> logits) {
        m_scored.push_back(negativeLogLikelihood(logits, m_tokens[position + i + 1]));
        return true;
    };
    if (m_dense)
        m_dense->score(tokens, keep);
    else
        m_session->score(tokens, keep);
}

// The window's raw tokens from position 0 of a fresh cache, as StreamingLLM's "sliding window
// with re-computation" baseline: no BOS is inserted, so the window's oldest token is what its
// queries can lean on. Before the first W positions that is the stream's own prefix, exactly what
// dense computed.
std::span<const float> PolicyStream::recomputeLogits(int64_t position) {
    const int64_t first = std::max<int64_t>(0, position - m_options.window + 1);
    m_session->reset();
    return m_session->prefill(std::span(m_tokens).subspan(first, position - first + 1));
}

int64_t PolicyStream::kvBytes() const {
    return m_dense ? m_dense->cache.bytesAllocated() : m_session->cache().bytesAllocated();
}

PolicyResult evaluatePolicy(PolicyStream& stream, const PositionCallback& onPosition,
                            const std::atomic<bool>* stop) {
    PolicyResult result;
    result.policy = stream.policy();
    result.kvBytes = stream.kvBytes();
    const auto start = std::chrono::steady_clock::now();
    while (!stream.done()) {
        if (stop && stop->load(std::memory_order_relaxed)) {
            result.stopped = true;
            break;
        }
        const int64_t position = stream.nextPosition();
        const std::optional<double> nll = stream.step();
        if (!nll) continue;
        result.positions.push_back(position);
        result.nll.push_back(*nll);
        if (onPosition && !onPosition(position, *nll)) {
            result.stopped = !stream.done();
            break;
        }
    }
    result.seconds = secondsSince(start);
    return result;
}

PolicyResult evaluatePolicy(const Model& model, std::span<const int32_t> tokens,
                            const Policy& policy, const StreamEvalOptions& options,
                            const PositionCallback& onPosition, const std::atomic<bool>* stop) {
    PolicyStream stream(model, std::vector<int32_t>(tokens.begin(), tokens.end()), policy, options);
    return evaluatePolicy(stream, onPosition, stop);
}

double perplexityOf(std::span<const double> nll) {
    if (nll.empty()) return std::numeric_limits<double>::quiet_NaN();
    double sum = 0;
    for (const double value : nll)
        sum += value;
    return std::exp(sum / static_cast<double>(nll.size()));
}

double rangePerplexity(const PolicyResult& result, int64_t first, int64_t end) {
    const auto begin = std::lower_bound(result.positions.begin(), result.positions.end(), first);
    const auto stop = std::lower_bound(begin, result.positions.end(), end);
    return perplexityOf(
        std::span(result.nll).subspan(begin - result.positions.begin(), stop - begin));
}

double tailPerplexity(const PolicyResult& result, int64_t count) {
    if (result.positions.empty()) return std::numeric_limits<double>::quiet_NaN();
    const int64_t last = result.positions.back();
    return rangePerplexity(result, last - count + 1, last + 1);
}

std::vector<double> rollingPerplexity(const PolicyResult& result, int64_t span) {
    std::vector<double> rolling(result.nll.size());
    double sum = 0;
    size_t oldest = 0; // the first index still inside the span
    for (size_t i = 0; i < result.nll.size(); ++i) {
        sum += result.nll[i];
        while (result.positions[oldest] <= result.positions[i] - span)
            sum -= result.nll[oldest++];
        rolling[i] = std::exp(sum / static_cast<double>(i - oldest + 1));
    }
    return rolling;
}

double positionsPerSecond(const PolicyResult& result) {
    return result.seconds > 0 ? static_cast<double>(result.positions.size()) / result.seconds : 0.0;
}

void writeStreamCsv(std::ostream& out, std::span<const PolicyResult> results, int64_t rollingSpan) {
    out << "position,policy,nll,rolling_ppl\n" << std::fixed << std::setprecision(6);
    for (const PolicyResult& result : results) {
        const std::string name = policyName(result.policy);
        const std::vector<double> rolling = rollingPerplexity(result, rollingSpan);
        for (size_t i = 0; i < result.positions.size(); ++i)
            out << result.positions[i] << ',' << name << ',' << result.nll[i] << ',' << rolling[i]
                << '\n';
    }
}

} // namespace sinkscope
