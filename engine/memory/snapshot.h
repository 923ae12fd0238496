// What the engine reports after each token: the UI's only view of the session
// (docs: shared/docs/memory-architecture.md, section 6). Plain values, safe to copy across threads.
#pragma once

#include "memory/kv_cache.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sinkscope {

// Which attention weights a snapshot carries: one layer and head, or a mean (-1 = all of them).
struct AttentionProbe {
    bool enabled = false;
    int layer = -1;
    int head = -1;
};

struct SlotView {
    int32_t token = -1;
    std::string piece; // the token's text ("" for empty slots)
    int64_t position = -1;
    SlotKind kind = SlotKind::Empty;
    bool kept = false;   // keep(query, position) admitted this slot
    float attention = 0; // weight from the probe (0 when not kept or no probe)
};

struct StepSnapshot {
    int64_t queryPosition = -1;
    int32_t queryToken = -1;
    std::string queryPiece;
    bool generated = false; // sampled by the model (false: prefilled from the prompt)
    int querySlot = -1;     // where the query's own K/V went
    // [sinkSlots + window], physical order: sinks, then the ring. (Not named `slots`: that word
    // is a Qt macro.)
    std::vector<SlotView> cacheSlots;
    bool hasAttention = false;
    int attentionLayer = -1;
    int attentionHead = -1;
    int64_t tokensSeen = 0;
    int64_t evictions = 0;
    int64_t bytesAllocated = 0;
    int64_t budgetBytes = 0;
    int64_t effectiveWindow = 0;
    int64_t budgetWindow = 0;
    int sinkSlots = 0;
    int sinksUsed = 0;
    int ringHead = 0;
    int kvBits = 8;
};

} // namespace sinkscope
