#include "session/session.h"

#include "memory/budget.h"
#include "memory/mask.h"

#include <chrono>
#include <stdexcept>
#include <string>

namespace sinkscope {

const char* positionModeName(PositionMode mode) {
    return mode == PositionMode::Streaming ? "streaming" : "absolute";
}

const char* sinkModeName(SinkMode mode) {
    switch (mode) {
    case SinkMode::ToolsAndBos:
        return "tools+bos";
    case SinkMode::FirstN:
        return "first-n";
    case SinkMode::None:
        break;
    }
    return "none";
}

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

int64_t budgetWindowFor(const ModelConfig& c) {
    return budgetWindow(BudgetShape{c.nLayer, c.nHeadKv, c.headDim, c.nEmbd, 0, c.nCtxTrain});
}

void requireThreadCount(int threads) {
    if (threads < 1 || threads > kMaxThreads)
        throw std::invalid_argument("threads must be 1 to " + std::to_string(kMaxThreads) +
                                    ", got " + std::to_string(threads));
}

KvCacheShape cacheShapeFor(const ModelConfig& c, const SessionOptions& o) {
    if (o.kvWindow < 0)
        throw std::invalid_argument("kv window must be >= 0 (0 = the budget window), got " +
                                    std::to_string(o.kvWindow));
    if (o.firstN < 0 || o.sinkCapacity < 0) throw std::invalid_argument("sink counts must be >= 0");
    requireThreadCount(o.threads);
    if (o.prefillChunk < 1 || o.prefillChunk > kMaxPrefillChunk)
        throw std::invalid_argument("prefill chunk must be 1 to " +
                                    std::to_string(kMaxPrefillChunk) + " tokens, got " +
                                    std::to_string(o.prefillChunk));
    if (o.probe.enabled && (o.probe.layer >= c.nLayer || o.probe.head >= c.nHead))
        throw std::invalid_argument("attention probe layer/head out of range");
    int sinkSlots = 0;
    switch (o.sinks) {
    case SinkMode::ToolsAndBos:
        sinkSlots = 1 + o.sinkCapacity;
        break;
    case SinkMode::FirstN:
        sinkSlots = o.firstN;
        break;
    case SinkMode::None:
        break;
    }
    const int window = static_cast<int>(effectiveWindow(budgetWindowFor(c), o.kvWindow));
    return KvCacheShape{c.nLayer, c.kvDim(), sinkSlots, window, o.kvBits};
}

} // namespace

Session::Session(const Model& model, const SessionOptions& options)
    : m_model(model), m_options(options), m_budgetWindow(budgetWindowFor(model.config())),
      m_cache(cacheShapeFor(model.config(), options)),
      m_state(model.config(), m_cache.slotCount(), options.threads),
      m_chunkProbe(static_cast<size_t>(m_cache.slotCount())), m_timeline(options.timelineCapacity),
      m_slotPieces(static_cast<size_t>(m_cache.slotCount())),
      m_pieceTokens(static_cast<size_t>(m_cache.slotCount()), -1) {}

void Session::setThreads(int threads) {
    requireThreadCount(threads);
    m_state.pool = OwnedThreadPool(threads);
    m_options.threads = threads;
}

bool Session::isSinkByMode(int32_t token, int64_t position) const {
    switch (m_options.sinks) {
    case SinkMode::ToolsAndBos:
        return position == 0 && token == m_model.tokenizer().bos();
    case SinkMode::FirstN:
        return position < m_options.firstN;
    case SinkMode::None:
        break;
    }
    return false;
}

void Session::requireToken(int32_t token) const {
    if (token < 0 || token >= m_model.config().nVocab)
        throw std::out_of_range("token id " + std::to_string(token) + " is outside the vocabulary");
}

int Session::place(int32_t token, bool sink) {
    const int slot = m_cache.place(token, m_position, sink);
    if (m_options.recordHistory) m_history.push_back(token);
    const SlotInfo& evicted = m_cache.lastEvicted();
    m_timeline.record(
        KvWrite{m_position, evicted.position, token, evicted.token, slot,
                m_cache.slotInfos()[static_cast<size_t>(slot)].kind == SlotKind::Sink});
    m_lastToken = token;
    m_lastSlot = slot;
    m_lastGenerated = false;
    ++m_position;
    return slot;
}

std::span<const float> Session::feed(int32_t token, bool sink) {
    requireToken(token);
    const int64_t position = m_position;
    const int slot = place(token, sink);
    const QueryPlacement where{position, slot, m_options.positions == PositionMode::Streaming};
    forward(m_model, m_cache, m_state, token, where, m_options.probe);
    return m_state.logits;
}

bool Session::prefillChunk(std::span<const int32_t> tokens, const StepCallback& onStep, bool pin) {
    for (const int32_t token : tokens)
        requireToken(token); // before the cache changes
    m_chunk.clear();
    m_chunkSteps.clear();
    for (const int32_t token : tokens) {
        const int64_t position = m_position;
        const int slot = place(token, pin || isSinkByMode(token, position));
        m_chunk.add(m_cache, token,
                    QueryPlacement{position, slot, m_options.positions == PositionMode::Streaming});
        if (onStep) m_chunkSteps.push_back(snapshot()); // its attention comes after the chunk
    }
    forwardChunk(m_model, m_cache, m_state, m_chunk, m_options.probe);
    for (size_t t = 0; t < m_chunkSteps.size(); ++t) {
        StepSnapshot& step = m_chunkSteps[t];
        if (m_options.probe.enabled) {
            m_chunk.scatterProbe(static_cast<int>(t), m_chunkProbe);
            for (size_t i = 0; i < step.cacheSlots.size(); ++i)
                step.cacheSlots[i].attention = m_chunkProbe[i];
        }
        if (!onStep(step)) return false;
    }
    return true;
}

std::span<const float> Session::prefill(std::span<const int32_t> tokens, const StepCallback& onStep,
                                        bool pin, const ChunkCallback& onChunk) {
    const auto chunkSize = static_cast<size_t>(m_options.prefillChunk);
    bool chunkLast = false; // the last token fed went through a chunk: its logits are owed
    for (size_t done = 0; done < tokens.size();) {
        const std::span<const int32_t> chunk =
            tokens.subspan(done, std::min(chunkSize, tokens.size() - done));
        done += chunk.size();
        chunkLast = chunk.size() > 1;
        if (!chunkLast) {
            feed(chunk[0], pin || isSinkByMode(chunk[0], m_position));
            if (onStep && !onStep(snapshot())) break;
        } else if (!prefillChunk(chunk, onStep, pin)) {
            break;
        }
        if (onChunk && !onChunk(done)) break;
    }
    if (chunkLast) chunkLogits(m_model, m_state, m_chunk.size() - 1);
    return m_state.logits;
}

void Session::score(std::span<const int32_t> tokens, const LogitsCallback& onLogits) {
    const auto chunkSize = static_cast<size_t>(m_options.prefillChunk);
    for (size_t done = 0; done < tokens.size();) {
        const std::span<const int32_t> chunk =
            tokens.subspan(done, std::min(chunkSize, tokens.size() - done));
        bool keepGoing = true;
        if (chunk.size() == 1) {
            keepGoing = onLogits(done, feed(chunk[0], isSinkByMode(chunk[0], m_position)));
        } else {
            prefillChunk(chunk, {}, false);
            for (size_t t = 0; t < chunk.size() && keepGoing; ++t) {
                chunkLogits(m_model, m_state, static_cast<int>(t));
                keepGoing = onLogits(done + t, m_state.logits);
            }
        }
        if (!keepGoing) return;
        done += chunk.size();
    }
}

void Session::adoptSinks(const Session& from, int count) {
    const auto& fromSlots = from.m_cache.slotInfos();
    if (&from.m_model != &m_model) throw std::invalid_argument("sinks of another model");
    if (m_position != 0) throw std::invalid_argument("sinks are adopted by an empty session only");
    if (count < 0 || count > from.m_cache.sinksUsed() || count > m_cache.shape().sinkSlots)
        throw std::invalid_argument("cannot adopt " + std::to_string(count) + " sinks");
    for (int i = 0; i < count; ++i) {
        const SlotInfo& sink = fromSlots[static_cast<size_t>(i)];
        if (sink.kind != SlotKind::Sink || sink.position != i)
            throw std::invalid_argument("slot " + std::to_string(i) + " is not the sink at " +
                                        "position " + std::to_string(i));
    }
    m_cache.copyRows(from.m_cache, count); // throws before any placement when the rows differ
    for (int i = 0; i < count; ++i)
        place(fromSlots[static_cast<size_t>(i)].token, true);
}

GenerationResult Session::generate(std::span<const int32_t> prompt, int maxTokens, Sampler& sampler,
                                   const StepCallback& onStep, bool ignoreEos) {
    if (prompt.empty() && m_position == 0)
        throw std::invalid_argument("empty prompt: nothing to continue from");
    GenerationResult result;
    bool keepGoing = true;
    const StepCallback watch = [&](const StepSnapshot& step) {
        keepGoing = !onStep || onStep(step);
        return keepGoing;
    };

    auto start = Clock::now();
    std::span<const float> logits = m_state.logits;
    if (!prompt.empty()) logits = prefill(prompt, onStep ? watch : StepCallback{});
    result.prefillTokens = static_cast<int>(prompt.size());
    result.prefillSeconds = secondsSince(start);

    start = Clock::now();
    for (int i = 0; i < maxTokens && keepGoing; ++i) {
        const int32_t token = sampler.sample(logits);
        if (token == m_model.tokenizer().eos() && !ignoreEos) {
            result.stoppedByEos = true;
            break;
        }
        result.tokens.push_back(token);
        logits = feed(token);
        m_lastGenerated = true;
        if (onStep) watch(snapshot());
    }
    result.stoppedByCallback = !keepGoing;
    result.decodeSeconds = secondsSince(start);
    result.text = m_model.tokenizer().decode(result.tokens);
    return result;
}

StepSnapshot Session::snapshot() const {
    const Tokenizer& tokenizer = m_model.tokenizer();
    const KvCache& cache = m_cache;
    StepSnapshot s;
    s.queryPosition = m_position - 1;
    s.queryToken = m_lastToken;
    s.queryPiece = s.queryToken >= 0 ? tokenizer.piece(s.queryToken, true) : std::string();
    s.generated = m_lastGenerated;
    s.querySlot = m_lastSlot;
    s.cacheSlots.reserve(cache.slotInfos().size());
    for (size_t i = 0; i < cache.slotInfos().size(); ++i) {
        const SlotInfo& info = cache.slotInfos()[i];
        SlotView& view = s.cacheSlots.emplace_back();
        view.token = info.token;
        view.position = info.position;
        view.kind = info.kind;
        if (info.kind == SlotKind::Empty) continue;
        if (m_pieceTokens[i] != info.token) {
            m_slotPieces[i] = tokenizer.piece(info.token, true);
            m_pieceTokens[i] = info.token;
        }
        view.piece = m_slotPieces[i];
        view.kept =
            keep(s.queryPosition, info.position, cache.shape().window, info.kind == SlotKind::Sink);
        view.attention = m_options.probe.enabled ? m_state.probe[i] : 0.0f;
    }
    s.hasAttention = m_options.probe.enabled;
    s.attentionLayer = m_options.probe.layer;
    s.attentionHead = m_options.probe.head;
    s.tokensSeen = m_position;
    s.evictions = cache.evictions();
    s.bytesAllocated = cache.bytesAllocated();
    s.budgetBytes = kKvBudgetBytes;
    s.effectiveWindow = cache.shape().window;
    s.budgetWindow = m_budgetWindow;
    s.sinkSlots = cache.shape().sinkSlots;
    s.sinksUsed = cache.sinksUsed();
    s.ringHead = cache.ringHead();
    s.kvBits = cache.shape().kvBits;
    return s;
}

void Session::reset() {
    m_cache.clear();
    m_history.clear();
    m_timeline.clear();
    m_lastToken = -1;
    m_position = 0;
    m_lastSlot = -1;
    m_lastGenerated = false;
}

} // namespace sinkscope
