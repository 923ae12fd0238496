// One conversation with a model over a bounded KV cache: the token stream, its sinks, and the
// per-token snapshots. Not thread-safe; the UI owns one on its worker thread.
#pragma once

#include "memory/kv_cache.h"
#include "memory/kv_timeline.h"
#include "memory/snapshot.h"
#include "model/model.h"
#include "model/transformer.h"
#include "session/sampler.h"

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace sinkscope {

enum class PositionMode { Absolute, Streaming };
enum class SinkMode {
    ToolsAndBos, // BOS plus the tool block given to setSinkBlock (Needle 2's default)
    FirstN,      // the first N tokens of the stream (StreamingLLM)
    None,
};

const char* positionModeName(PositionMode mode);
const char* sinkModeName(SinkMode mode);

struct SessionOptions {
    int kvWindow = 256; // 0 = the budget window
    int kvBits = 8;     // 32, 16 or 8
    PositionMode positions = PositionMode::Absolute;
    SinkMode sinks = SinkMode::ToolsAndBos;
    int firstN = 4;       // for SinkMode::FirstN
    int sinkCapacity = 0; // for ToolsAndBos: tool-block tokens to reserve beyond BOS
    AttentionProbe probe; // attention weights to report in snapshots
    // Keep every fed token in history() (tests, debugging): 4 bytes a token, without bound, so
    // off by default; the cache itself stays fixed-size either way.
    bool recordHistory = false;
    // Cache writes kept in timeline(), the newest (32 bytes each; memory/kv_timeline.h); 0 keeps
    // none. The playground keeps a bounded log for its KV timeline export.
    size_t timelineCapacity = 0;
    // Threads that split each matrix product (1 to kMaxThreads); the results are the same for any
    // count.
    int threads = 1;
    // Tokens per batched-prefill chunk (1 to kMaxPrefillChunk; 1 feeds prompts token by token).
    // The logits are the same for any size; a larger chunk reads the weights fewer times.
    int prefillChunk = 64;
};

inline constexpr int kMaxThreads = 256;
inline constexpr int kMaxPrefillChunk = 512;

// Called after each token; return false to stop generating.
using StepCallback = std::function<bool(const StepSnapshot&)>;
// Called after each prefill chunk with the tokens of that prefill done so far; return false to
// stop there (a build's progress and its Cancel: tool_chat.h BuildProgressCallback).
using ChunkCallback = std::function<bool(size_t done)>;
// Called with the next-token logits after tokens[index] ([n_vocab], valid during the call);
// return false to stop after the chunk that token is in.
using LogitsCallback = std::function<bool(size_t index, std::span<const float> logits)>;

struct GenerationResult {
    std::vector<int32_t> tokens; // generated, in order
    std::string text;
    bool stoppedByEos = false;
    bool stoppedByCallback = false;
    double prefillSeconds = 0;
    double decodeSeconds = 0;
    int prefillTokens = 0;
};

class Session {
public:
    // Throws std::invalid_argument when options are invalid for the model.
    Session(const Model& model, const SessionOptions& options);

    const Model& model() const { return m_model; }
    const SessionOptions& options() const { return m_options; }
    int64_t budgetWindow() const { return m_budgetWindow; }
    int64_t effectiveWindow() const { return m_cache.shape().window; }
    const KvCache& cache() const { return m_cache; }
    int threads() const { return m_state.pool->threads(); }
    // Replaces the thread team (1 to kMaxThreads; throws std::invalid_argument otherwise). The
    // cache and the logits stay: the results are the same for any count.
    void setThreads(int threads);
    int64_t position() const { return m_position; } // the next token's position
    // Every token fed, in order; empty unless SessionOptions::recordHistory.
    const std::vector<int32_t>& history() const { return m_history; }
    // Every cache write, in order (its slot and what it evicted); empty unless
    // SessionOptions::timelineCapacity.
    const KvTimeline& timeline() const { return m_timeline; }

    // Feeds one token and returns the logits for the next one ([n_vocab], valid until the next
    // call). `sink` asks to pin it (honoured while sink slots remain).
    std::span<const float> feed(int32_t token, bool sink = false);
    // Feeds tokens; sinks follow the session's SinkMode (BOS and first-N decided here), or every
    // token is pinned when `pin` (the tool block). The tokens run in chunks of
    // SessionOptions::prefillChunk (forwardChunk: the same logits as one by one); onStep sees
    // every token's snapshot, in order, once its chunk has run. When onStep returns false it is
    // not called again and prefill stops at the end of that chunk; so does it when onChunk, called
    // after each chunk's steps, returns false. Returns the last token's logits.
    std::span<const float> prefill(std::span<const int32_t> tokens, const StepCallback& onStep = {},
                                   bool pin = false, const ChunkCallback& onChunk = {});
    // Feeds tokens as prefill does (sinks by the session's SinkMode, in chunks) and hands onLogits
    // every token's next-token logits, in order, once its chunk has run: feed()'s logits, bit for
    // bit, for a perplexity or a scored stream at prefill's speed. When onLogits returns false it
    // is not called again, and the tokens after that chunk are not fed.
    void score(std::span<const int32_t> tokens, const LogitsCallback& onLogits);
    // Takes over the first `count` pinned sinks of `from`, a session of the same model whose cache
    // rows have this one's encoding, instead of computing them: they are placed as prefill pins
    // them and their K and V rows copied, bit for bit what prefill would write (a sink's rows
    // depend only on the model and the tokens up to it: every earlier token is a sink, which
    // every window keeps). For an empty session only; nothing is reported to a StepCallback and
    // the logits are not computed (prefill what follows). Throws std::invalid_argument when
    // `from` does not hold `count` sinks at positions 0 to count - 1, the model or the rows
    // differ, or this session is not empty or has fewer sink slots.
    void adoptSinks(const Session& from, int count);
    // Prefills `prompt` then samples up to maxTokens, stopping at EOS unless ignoreEos.
    GenerationResult generate(std::span<const int32_t> prompt, int maxTokens, Sampler& sampler,
                              const StepCallback& onStep = {}, bool ignoreEos = false);

    // The snapshot of the last fed token (slot pieces filled in; costs O(slots)).
    StepSnapshot snapshot() const;
    void reset(); // empty stream, same allocation

private:
    bool isSinkByMode(int32_t token, int64_t position) const;
    void requireToken(int32_t token) const;
    // Places `token` at the next position and records it as the last one fed; returns its slot.
    int place(int32_t token, bool sink);
    // One batched chunk; false when onStep asked to stop.
    bool prefillChunk(std::span<const int32_t> tokens, const StepCallback& onStep, bool pin);

    const Model& m_model;
    SessionOptions m_options;
    int64_t m_budgetWindow = 0;
    KvCache m_cache;
    RunState m_state;
    PrefillChunk m_chunk;
    std::vector<StepSnapshot> m_chunkSteps; // [chunk] the snapshots a chunk owes onStep
    std::vector<float> m_chunkProbe;        // [slots] one chunk token's probe, scattered
    int64_t m_position = 0;
    std::vector<int32_t> m_history; // only with recordHistory
    KvTimeline m_timeline;          // only with timelineCapacity
    int32_t m_lastToken = -1;
    int m_lastSlot = -1;
    bool m_lastGenerated = false;
    // The display piece of each slot's token, filled by snapshot() for slots whose token changed
    // since the last snapshot, so that neither feed() (the decode hot path) nor a snapshot
    // decodes every slot's token again. [slots]; m_pieceTokens: the token each piece is of.
    mutable std::vector<std::string> m_slotPieces;
    mutable std::vector<int32_t> m_pieceTokens;
};

} // namespace sinkscope
