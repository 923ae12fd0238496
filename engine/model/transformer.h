// The llama forward pass for one token over the bounded KV cache.
#pragma once

#include "memory/kv_cache.h"
#include "memory/snapshot.h"
#include "model/model.h"
#include "model/thread_pool.h"

#include <vector>

namespace sinkscope {

// Mutable activations of one forward pass, sized once per session, and the threads that split
// its matrix products.
struct RunState {
    // threads >= 1: the calling thread and threads - 1 workers
    RunState(const ModelConfig& config, int slotCount, int threads = 1);
    OwnedThreadPool pool;
    std::vector<float> x;         // [n_embd] residual stream
    std::vector<float> xn;        // [n_embd] normalised input of a block
    std::vector<float> q;         // [n_head * head_dim] rotated to the query's position
    std::vector<float> qRaw;      // [n_head * head_dim] before rotation (streaming sinks)
    std::vector<float> qRotated;  // [head_dim] the query rotated for one streaming sink
    std::vector<float> k;         // [kv_dim]
    std::vector<float> v;         // [kv_dim]
    std::vector<float> attnOut;   // [n_head * head_dim]
    std::vector<float> gate;      // [n_ff]
    std::vector<float> up;        // [n_ff]
    std::vector<float> blockOut;  // [n_embd] a block's output before the residual add
    std::vector<float> columns;   // the kept slots' K as columns [kv_dim][kept], then their V as
                                  // rows [kept][kv_dim], dequantized
    std::vector<float> scores;    // [n_head][slots] attention weights over physical slots
    std::vector<int> keptSlots;   // [<= slots] slots the mask admitted, this step
    std::vector<float> keptProbe; // [kept] the probed weights summed over heads and layers
    std::vector<float> probe;     // [slots] the same, scattered to physical slots
    std::vector<float> logits;    // [n_vocab]
    std::vector<float> ropeCos;   // [head_dim / 2] this token's rotation, for every layer
    std::vector<float> ropeSin;   // [head_dim / 2]
    std::vector<float> foldCos;   // [head_dim / 2] a streaming sink's folded rotation
    std::vector<float> foldSin;   // [head_dim / 2]
    std::vector<float> keyRow;    // [kv_dim] a folded streaming sink's key
};

// Where a query sits and how sink distances are folded (memory-architecture.md, section 5).
struct QueryPlacement {
    int64_t position = 0;
    int slot = 0;
    bool streaming = false; // streaming positions: sink j scored at min(q - p_j, W + S - 1 - j)
};

// Runs one token through the model: writes its K/V into `slot`, attends to the slots keep()
// admits, and leaves the next-token logits in state.logits.
void forward(const Model& model, KvCache& cache, RunState& state, int32_t token,
             const QueryPlacement& where, const AttentionProbe& probe);

} // namespace sinkscope
