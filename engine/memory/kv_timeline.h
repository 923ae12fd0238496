// The KV cache's write log for one session: for every token written (prefill and decode, in
// order), the slot it took and the ring occupant it evicted. A playground's export reads it (the
// per-step snapshots are sampled for display and may be dropped; this is not). 32 bytes a write,
// and at most `capacity` writes are kept: past that the oldest go, their counts kept.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>

namespace sinkscope {

// One token written to the cache.
struct KvWrite {
    int64_t position = -1;
    int64_t evictedPosition = -1; // the ring slot's previous occupant; -1 when it was empty
    int32_t token = -1;
    int32_t evictedToken = -1;
    int32_t slot = -1;
    bool sink = false; // written to a sink slot, pinned
};

// The cache's counters after a run of writes, counted from the writes themselves.
struct KvCounts {
    int64_t sinks = 0;      // writes to sink slots
    int64_t ringWrites = 0; // writes to ring slots
    int64_t evictions = 0;  // ring writes that replaced an occupant
    int64_t windowTokens() const { return ringWrites - evictions; } // ring slots occupied
    void add(const KvWrite& write);
};

class KvTimeline {
public:
    explicit KvTimeline(size_t capacity = 0); // 0 records nothing

    void record(const KvWrite& write);
    void clear();

    size_t capacity() const { return m_capacity; }
    size_t size() const { return m_writes.size(); }
    const KvWrite& operator[](size_t i) const { return m_writes[i]; }
    // Writes before the first kept one (the step of write i is dropped() + i), and their counts.
    int64_t dropped() const { return m_dropped; }
    const KvCounts& droppedCounts() const { return m_droppedCounts; }

private:
    size_t m_capacity = 0;
    std::deque<KvWrite> m_writes;
    int64_t m_dropped = 0;
    KvCounts m_droppedCounts;
};

} // namespace sinkscope
