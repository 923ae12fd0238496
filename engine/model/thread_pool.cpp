#include "model/thread_pool.h"

#include <algorithm>
#include <chrono>

namespace sinkscope {

namespace {

// How long a worker spins for the next job before it sleeps: long enough to bridge the gap
// between two matrix products of a decode step or of a prefill chunk (norms, RoPE, a chunk's
// attention on the calling thread; waking a sleeping worker costs tens of microseconds on a
// virtual machine), short enough that an idle session gives its cores back at once.
constexpr auto kSpinTime = std::chrono::microseconds(1000);

constexpr int kSpinsBeforeYield = 4096;

void pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

} // namespace

ThreadPool::ThreadPool(int threads) {
    const int workers = std::max(threads, 1) - 1;
    m_workers.reserve(static_cast<size_t>(workers));
    for (int part = 1; part <= workers; ++part)
        m_workers.emplace_back([this, part] { work(part); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard lock(m_mutex);
        m_stopping.store(true, std::memory_order_release);
        m_generation.fetch_add(1, std::memory_order_release);
    }
    m_wake.notify_all();
    for (std::thread& worker : m_workers)
        worker.join();
}

int64_t ThreadPool::boundary(int64_t count, int64_t align, int part, int parts) {
    if (part >= parts) return count;
    const int64_t even = count * part / parts;
    return align > 1 ? even / align * align : even;
}

void ThreadPool::dispatch(void* context, Call call) {
    m_context = context;
    m_call = call;
    m_pending.store(static_cast<int>(m_workers.size()), std::memory_order_relaxed);
    {
        // Under the mutex, so that a worker about to sleep either sees the new generation or is
        // already waiting when the notification comes.
        std::lock_guard lock(m_mutex);
        m_generation.fetch_add(1, std::memory_order_release);
    }
    m_wake.notify_all();
    call(context, 0);
    // The other parts end about when this one does; a worker that is not running (more threads
    // than free cores) gets the core sooner when this thread yields.
    for (int spins = 0; m_pending.load(std::memory_order_acquire) != 0; ++spins) {
        if (spins < kSpinsBeforeYield)
            pause();
        else
            std::this_thread::yield();
    }
}

void ThreadPool::work(int part) {
    uint64_t seen = 0;
    for (;;) {
        const auto spinUntil = std::chrono::steady_clock::now() + kSpinTime;
        uint64_t generation = m_generation.load(std::memory_order_acquire);
        for (int spins = 0; generation == seen; ++spins) {
            pause();
            if (spins % 64 == 63 && std::chrono::steady_clock::now() > spinUntil) {
                std::unique_lock lock(m_mutex);
                m_wake.wait(lock,
                            [&] { return m_generation.load(std::memory_order_acquire) != seen; });
            }
            generation = m_generation.load(std::memory_order_acquire);
        }
        seen = generation;
        if (m_stopping.load(std::memory_order_acquire)) return;
        m_call(m_context, part);
        m_pending.fetch_sub(1, std::memory_order_acq_rel);
    }
}

} // namespace sinkscope
