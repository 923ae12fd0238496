#include "memory/kv_timeline.h"

namespace sinkscope {

// The bound the playground documents (8 MiB for its 262,144 writes) counts 32 bytes a write.
static_assert(sizeof(KvWrite) == 32);

void KvCounts::add(const KvWrite& write) {
    if (write.sink) {
        ++sinks;
        return;
    }
    ++ringWrites;
    if (write.evictedPosition >= 0) ++evictions;
}

KvTimeline::KvTimeline(size_t capacity) : m_capacity(capacity) {}

void KvTimeline::record(const KvWrite& write) {
    if (m_capacity == 0) return;
    if (m_writes.size() == m_capacity) {
        m_droppedCounts.add(m_writes.front());
        m_writes.pop_front();
        ++m_dropped;
    }
    m_writes.push_back(write);
}

void KvTimeline::clear() {
    m_writes.clear();
    m_dropped = 0;
    m_droppedCounts = {};
}

} // namespace sinkscope
