// One query's attention over the bounded KV cache: the slots the mask admits, the scores, the
// softmax and the weighted values, as ggml computes them (model/kernels/kernel_table.h).
#pragma once

#include "memory/kv_cache.h"
#include "memory/snapshot.h"
#include "model/model.h"
#include "model/thread_pool.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace sinkscope {

// Where a query sits and how sink distances are folded (memory-architecture.md, section 5).
struct QueryPlacement {
    int64_t position = 0;
    int slot = 0;
    bool streaming = false; // streaming positions: sink j scored at min(q - p_j, W + S - 1 - j)
};

// One layer's K and V of the slots its attention read last, decoded and kept between tokens. Past
// the window each token reads the previous token's slots with one of them rewritten, and a chunk
// of a prompt reads its predecessor's plus its own: only rows written since they were decoded
// (KvCache::rowVersion) are decoded again, with the same bits as a fresh decode.
struct DecodedSlots {
    std::vector<int> cacheSlots;    // [decoded] the cache slot of each column, in gather order (not
                                    // named `slots`: a Qt macro)
    std::vector<uint64_t> versions; // [decoded] each slot's row version when it was decoded
    std::vector<float> columns;     // K as columns [kv_dim][slotCount]: column i is cacheSlots[i]
    std::vector<float> values;      // V as rows [slotCount][kv_dim]: row i is cacheSlots[i]
};

// A run of one query's kept slots [first, end) that one rotation of the query scores: the query
// as placed, or for sinks whose streaming distance folds (section 5) the query rotated to
// rotatedTo = p_j + W + S - 1 - j, which sinks placed one after another share.
struct ScoreRun {
    static constexpr int64_t kUnrotated = -1;

    int first = 0;
    int end = 0;
    int64_t rotatedTo = kUnrotated;
    const float* query = nullptr; // [n_head * head_dim] the query the run is scored with
};

// Scratch of one attention, sized once per session for `slotCount` slots.
struct AttentionScratch {
    // Decoded copies of every layer are kept up to this size; past it (very long tool blocks on
    // wide caches) the layers share one copy, which is then decoded afresh for each layer.
    static constexpr size_t kDecodedBudgetBytes = size_t{64} << 20;

    AttentionScratch(const ModelConfig& config, int slotCount);
    DecodedSlots& decoded(int layer) { return decodedLayers[layer % decodedLayers.size()]; }

    int slotCount = 0;                       // every DecodedSlots' column stride
    std::vector<DecodedSlots> decodedLayers; // [n_layer], or [1] past kDecodedBudgetBytes
    // [KernelTable::kMaxScoreTokens][n_head * slotCount] attention weights of up to eight queries
    // at once: query t's [n_head][kept_t] at t * n_head * gathered
    std::vector<float> tokenScores;
    // [KernelTable::kMaxScoreTokens] each query's runs of kept slots, in kept order
    std::vector<std::vector<ScoreRun>> scoreRuns;
    // [rotations][n_head * head_dim] the queries rotated for folded sinks, one a token and folded
    // run (one a token with sinks placed one after another); grows when a group has more
    std::vector<float> qRotated;
    std::vector<float> foldCos; // [head_dim / 2] a streaming sink's folded rotation
    std::vector<float> foldSin; // [head_dim / 2]
};

// One query of a forward pass, as the cache stood when its token was placed.
struct AttentionQuery {
    QueryPlacement where;
    std::span<const int> keptSlots; // the slots keep() admitted, sinks first
    int sinksUsed = 0;              // sinks placed so far (they fold streaming distances)
    float* q = nullptr;             // [n_head * head_dim] rotated (rounded in place for f16)
    const float* qRaw = nullptr;    // [n_head * head_dim] before rotation (streaming only)
    float* out = nullptr;           // [n_head * head_dim] the attention's output
    float* keptProbe = nullptr;     // [kept] probed weights are added here, or nullptr
};

// The slots the query at `position` may read: exactly those keep() admits, appended to `kept`.
// Only occupied slots are visited: the sinks in use, then the part of the ring written so far.
void collectKeptSlots(const KvCache& cache, int64_t position, std::vector<int>& kept);

// Every head's attention for `query` in `layer`; the heads are split among the pool's threads.
void attend(const Model& model, const KvCache& cache, AttentionScratch& scratch, ThreadPool* pool,
            int layer, const AttentionQuery& query, const AttentionProbe& probe);

// attend() in two steps, so that the queries of a prefill chunk can share one gather: the K and V
// of `slots` in `layer` brought up to date in scratch.decoded(layer) (the rows that changed
// decoded, split among the pool's threads when given one and there are enough of them); then a
// query whose kept slots are the first query.keptSlots.size() of those `gathered` slots, in the
// same order (attendChunk: every query of the chunk).
void gatherSlots(const KvCache& cache, int layer, std::span<const int> slots,
                 AttentionScratch& scratch, ThreadPool* pool);
void attendGathered(const Model& model, const KvCache& cache, AttentionScratch& scratch,
                    ThreadPool* pool, int layer, const AttentionQuery& query,
                    const AttentionProbe& probe, int gathered);
// attendGathered for each query of a chunk in order, with the same results; up to
// KernelTable::kMaxScoreTokens queries at a time take one pass over the gathered keys and one
// over the values.
void attendChunk(const Model& model, const KvCache& cache, AttentionScratch& scratch,
                 ThreadPool* pool, int layer, std::span<const AttentionQuery> queries,
                 const AttentionProbe& probe, int gathered);

} // namespace sinkscope
