// The llama forward pass over the bounded KV cache: one token (decode), or a chunk of tokens whose
// matrix products run as matrix-matrix products (batched prefill) with the same results.
#pragma once

#include "memory/kv_cache.h"
#include "memory/snapshot.h"
#include "model/attention.h"
#include "model/model.h"
#include "model/thread_pool.h"

#include <span>
#include <vector>

namespace sinkscope {

// The activations of a chunk of tokens, row t for token t; grown to the largest chunk run.
struct ChunkActivations {
    void reserve(const ModelConfig& config, int tokens);
    int capacity = 0;
    std::vector<float> x;        // [tokens][n_embd] residual streams
    std::vector<float> xn;       // [tokens][n_embd] normalised inputs of a block
    std::vector<float> q;        // [tokens][n_head * head_dim]
    std::vector<float> qRaw;     // [tokens][n_head * head_dim] before rotation (streaming sinks)
    std::vector<float> k;        // [tokens][kv_dim]
    std::vector<float> v;        // [tokens][kv_dim]
    std::vector<float> attnOut;  // [tokens][n_head * head_dim]
    std::vector<float> gate;     // [tokens][n_ff]
    std::vector<float> up;       // [tokens][n_ff]
    std::vector<float> blockOut; // [tokens][n_embd] a block's outputs before the residual add
    std::vector<float> ropeCos;  // [tokens][head_dim / 2] each token's rotation, for every layer
    std::vector<float> ropeSin;  // [tokens][head_dim / 2]
};

// Mutable activations of a forward pass, sized once per session, and the threads that split its
// matrix products.
struct RunState {
    // threads >= 1: the calling thread and threads - 1 workers
    RunState(const ModelConfig& config, int slotCount, int threads = 1);
    OwnedThreadPool pool;
    AttentionScratch attention;
    std::vector<float> x;         // [n_embd] residual stream
    std::vector<float> xn;        // [n_embd] normalised input of a block
    std::vector<float> q;         // [n_head * head_dim] rotated to the query's position
    std::vector<float> qRaw;      // [n_head * head_dim] before rotation (streaming sinks)
    std::vector<float> k;         // [kv_dim]
    std::vector<float> v;         // [kv_dim]
    std::vector<float> attnOut;   // [n_head * head_dim]
    std::vector<float> gate;      // [n_ff]
    std::vector<float> up;        // [n_ff]
    std::vector<float> blockOut;  // [n_embd] a block's output before the residual add
    std::vector<int> keptSlots;   // [<= slots] slots the mask admitted, this step
    std::vector<float> keptProbe; // [kept] the probed weights summed over heads and layers
    std::vector<float> probe;     // [slots] the same, scattered to physical slots
    std::vector<float> logits;    // [n_vocab]
    std::vector<float> ropeCos;   // [head_dim / 2] this token's rotation, for every layer
    std::vector<float> ropeSin;   // [head_dim / 2]
    ChunkActivations chunk;       // batched prefill's, empty until the first chunk
};

// Runs one token through the model: writes its K/V into `slot`, attends to the slots keep()
// admits, and leaves the next-token logits in state.logits.
void forward(const Model& model, KvCache& cache, RunState& state, int32_t token,
             const QueryPlacement& where, const AttentionProbe& probe);

// The tokens of one batched-prefill chunk, each placed in the cache in turn, with what its query
// may read as the cache stood right after its placement. The caller places a token and adds it
// before placing the next, so that within the chunk the mask is applied exactly as token by token.
class PrefillChunk {
public:
    void clear();
    // After cache.place() gave `token` the slot where.slot.
    void add(const KvCache& cache, int32_t token, const QueryPlacement& where);
    int size() const { return static_cast<int>(m_tokens.size()); }
    int32_t token(int t) const { return m_tokens[t]; }
    const QueryPlacement& place(int t) const { return m_places[t]; }
    // Query t as attention reads it; q, out and keptProbe point into the given buffers.
    AttentionQuery query(int t, float* q, const float* qRaw, float* out, bool probed);
    // Token t's kept slots.
    std::span<const int> keptOf(int t) const;
    // Whether every token's kept slots are the first ones of the last token's, in the same order,
    // with no slot of the chunk evicted after its first token's placement: then each token reads
    // exactly what it would token by token once the whole chunk's K/V is written, and one gather
    // serves them all (pinning a tool block; a ring still filling).
    bool sharesKeptSlots() const;
    // Token t's probed weights after a probed forwardChunk, scattered to physical slots: probe
    // [slots], zero where not kept.
    void scatterProbe(int t, std::span<float> probe) const;

private:
    std::vector<int32_t> m_tokens;
    std::vector<QueryPlacement> m_places;
    std::vector<int> m_sinksUsed;   // [tokens]
    std::vector<int> m_keptBegin;   // [tokens + 1] token t's kept slots: [begin[t], begin[t + 1])
    std::vector<int> m_kept;        // the kept slots of every token, in token order
    std::vector<float> m_keptProbe; // [m_kept.size()] the probed weights, as RunState::keptProbe
    int64_t m_evictionsAfterFirst = 0; // the cache's evictions once the first token was placed
    bool m_evictedInside = false;      // a later token's placement evicted a slot
};

// Runs every token of `chunk` through the model, exactly as forward() would one after the other:
// each layer's projections as matrix-matrix products over the chunk, then each token's K/V write
// and attention in order (a later token's write may evict a slot an earlier token reads). Leaves
// the last token's probe in state.probe and its final residual stream in state.chunk; no logits
// are computed (a prompt needs only its last token's, a scored stream every token's: chunkLogits).
void forwardChunk(const Model& model, KvCache& cache, RunState& state, PrefillChunk& chunk,
                  const AttentionProbe& probe);
// The next-token logits after token t of the chunk forwardChunk ran last, into state.logits:
// forward()'s for that token.
void chunkLogits(const Model& model, RunState& state, int t);

} // namespace sinkscope
