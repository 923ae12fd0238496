#include "event_loop_watch.h"

#include "worker/thread_cpu_time.h"

#include <algorithm>

using sinkscope::ui::threadCpuMs;

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
