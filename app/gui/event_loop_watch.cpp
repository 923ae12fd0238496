#include "event_loop_watch.h"

#include <algorithm>
#include <ctime>

namespace {

// CPU time of the calling thread, in milliseconds (0 where the clock is not available).
double threadCpuMs() {
    timespec now{};
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now) != 0) return 0;
    return double(now.tv_sec) * 1e3 + double(now.tv_nsec) / 1e6;
}

} // namespace

EventLoopWatch::EventLoopWatch(QObject* parent) : QObject(parent) {
    m_timer.setInterval(kTickMs);
    m_timer.setTimerType(Qt::PreciseTimer);
    connect(&m_timer, &QTimer::timeout, this, [this] {
        const double sinceLastTick = double(m_clock.nsecsElapsed()) / 1e6;
        const double cpu = threadCpuMs();
        m_longestStallMs = std::max(m_longestStallMs, sinceLastTick - kTickMs);
        m_longestBusyMs = std::max(m_longestBusyMs, cpu - m_threadCpuMs);
        m_threadCpuMs = cpu;
        m_clock.restart();
    });
}

void EventLoopWatch::start() {
    m_longestStallMs = 0;
    m_longestBusyMs = 0;
    m_threadCpuMs = threadCpuMs();
    m_clock.start();
    m_timer.start();
}
