#include "event_loop_watch.h"

#include <algorithm>

EventLoopWatch::EventLoopWatch(QObject* parent) : QObject(parent) {
    m_timer.setInterval(kTickMs);
    m_timer.setTimerType(Qt::PreciseTimer);
    connect(&m_timer, &QTimer::timeout, this, [this] {
        const double sinceLastTick = double(m_clock.nsecsElapsed()) / 1e6;
        m_longestStallMs = std::max(m_longestStallMs, sinceLastTick - kTickMs);
        m_clock.restart();
    });
}

void EventLoopWatch::start() {
    m_longestStallMs = 0;
    m_clock.start();
    m_timer.start();
}
