// A fixed team of threads for the forward pass: the calling thread and threads() - 1 workers,
// started once and kept, that split each matrix product's rows. Dispatching a job allocates
// nothing. Between jobs the workers spin briefly (a decode step dispatches one job per matrix,
// back to back), then sleep until the next one.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace sinkscope {

class ThreadPool {
public:
    // Multiply-adds (about): a job smaller than this is not split (a few microseconds of work,
    // less than handing it over costs). A decode step's products of a model of tens of millions
    // of parameters and up are larger; stories260K's are not.
    static constexpr int64_t kMinParallelWork = 128 * 1024;
    // What one f32 multiply-add counts for in that measure: a quantized product does 16 to 64 of
    // its multiply-adds per instruction, attention's f32 dots 16, with a load per value besides.
    static constexpr int64_t kFloatWorkWeight = 4;

    // threads >= 1 (clamped); 1 runs every job on the calling thread.
    explicit ThreadPool(int threads);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int threads() const { return static_cast<int>(m_workers.size()) + 1; }

    // Calls job(part) once for each part in [0, threads()), part 0 on the calling thread, and
    // returns when all have returned. Jobs must not throw. One job at a time: not reentrant.
    template <typename Job> void run(Job&& job) {
        if (m_workers.empty()) {
            job(0);
            return;
        }
        dispatch(&job, [](void* context, int part) { (*static_cast<Job*>(context))(part); });
    }

    // Splits [0, count) into threads() contiguous ranges and calls job(begin, end) for each
    // non-empty one; `align` rounds the inner boundaries down to its multiples. Work of fewer
    // than kMinParallelWork units in all runs on the calling thread alone: waking the team would
    // cost more than it saves.
    template <typename Job> void forRanges(int64_t count, int64_t align, Job&& job, int64_t work) {
        if (work < kMinParallelWork) {
            job(int64_t{0}, count);
            return;
        }
        const int parts = threads();
        run([&](int part) {
            const int64_t begin = boundary(count, align, part, parts);
            const int64_t end = boundary(count, align, part + 1, parts);
            if (begin < end) job(begin, end);
        });
    }

private:
    using Call = void (*)(void* context, int part);
    static int64_t boundary(int64_t count, int64_t align, int part, int parts);
    void dispatch(void* context, Call call);
    void work(int part);

    std::vector<std::thread> m_workers;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::atomic<uint64_t> m_generation{0}; // one more per job; workers run a job when it moves
    std::atomic<int> m_pending{0};         // workers still running the current job
    std::atomic<bool> m_stopping{false};
    void* m_context = nullptr;
    Call m_call = nullptr;
};

// A value that owns a pool: copying it starts a pool of as many threads (a pool is never shared
// between two owners, which could run jobs at the same time), so that a RunState, and a Session
// with it, stays copyable.
class OwnedThreadPool {
public:
    explicit OwnedThreadPool(int threads) : m_pool(std::make_unique<ThreadPool>(threads)) {}
    OwnedThreadPool(const OwnedThreadPool& other) : OwnedThreadPool(other->threads()) {}
    OwnedThreadPool& operator=(const OwnedThreadPool& other) {
        if (this != &other) m_pool = std::make_unique<ThreadPool>(other->threads());
        return *this;
    }
    OwnedThreadPool(OwnedThreadPool&&) noexcept = default;
    OwnedThreadPool& operator=(OwnedThreadPool&&) noexcept = default;

    ThreadPool* get() const { return m_pool.get(); }
    ThreadPool* operator->() const { return m_pool.get(); }

private:
    std::unique_ptr<ThreadPool> m_pool;
};

} // namespace sinkscope
