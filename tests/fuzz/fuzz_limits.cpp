#include "fuzz_limits.h"

#include <sanitizer/allocator_interface.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace sinkscope::fuzz {

namespace {

std::atomic<bool> g_counting{false};
std::atomic<int64_t> g_liveBytes{0}; // may dip below 0 when older blocks are freed
std::atomic<int64_t> g_peakBytes{0};

void onMalloc(const volatile void*, size_t size) {
    if (!g_counting.load(std::memory_order_relaxed)) return;
    const auto bytes = static_cast<int64_t>(size);
    const int64_t live = g_liveBytes.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    int64_t peak = g_peakBytes.load(std::memory_order_relaxed);
    while (live > peak && !g_peakBytes.compare_exchange_weak(peak, live, std::memory_order_relaxed))
        ;
}

// Runs before the block is released, so the allocator still knows its size.
void onFree(const volatile void* pointer) {
    if (!pointer || !g_counting.load(std::memory_order_relaxed)) return;
    const auto bytes =
        static_cast<int64_t>(__sanitizer_get_allocated_size(const_cast<const void*>(pointer)));
    g_liveBytes.fetch_sub(bytes, std::memory_order_relaxed);
}

// Without the hooks every peak would read 0 and every bound would pass unchecked: stop instead.
bool installHooks() {
    if (__sanitizer_install_malloc_and_free_hooks(onMalloc, onFree) == 0) {
        std::fprintf(stderr, "HeapPeak: the sanitizer refused the malloc hooks\n");
        std::abort();
    }
    return true;
}

} // namespace

HeapPeak::HeapPeak() {
    static const bool installed = installHooks();
    (void)installed;
    g_liveBytes = 0;
    g_peakBytes = 0;
    g_counting = true;
}

HeapPeak::~HeapPeak() {
    g_counting = false;
}

int64_t HeapPeak::peakBytes() const {
    return g_peakBytes.load();
}

namespace {

double threadCpuSeconds() {
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

} // namespace

CpuClock::CpuClock() : m_start(threadCpuSeconds()) {}

double CpuClock::elapsedSeconds() const {
    return threadCpuSeconds() - m_start;
}

} // namespace sinkscope::fuzz
