// Limits the fuzz targets hold every input to, measured so that a loaded machine cannot fake a
// finding: heap through the sanitizer allocator's hooks, time as this thread's CPU time (the
// fuzzers run at low priority beside other work, where wall-clock timeouts fire spuriously).
#pragma once

#include <cstdint>

namespace sinkscope::fuzz {

// The most bytes held at once (allocated and not yet freed) while a HeapPeak lives. One at a time.
class HeapPeak {
public:
    HeapPeak();  // starts counting from zero
    ~HeapPeak(); // stops counting
    HeapPeak(const HeapPeak&) = delete;
    HeapPeak& operator=(const HeapPeak&) = delete;

    int64_t peakBytes() const;
};

// CPU seconds this thread has used since construction.
class CpuClock {
public:
    CpuClock();
    double elapsedSeconds() const;

private:
    double m_start;
};

// The bound: no input may take longer than a second.
inline constexpr double kMaxCpuSecondsPerInput = 1.0;

} // namespace sinkscope::fuzz
