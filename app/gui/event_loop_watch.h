// Measures how long the GUI thread's event loop goes without running. A timer due every kTickMs
// records, between two of its ticks:
// - the stall: the gap beyond that period, which is what a user feels, including time the thread
//   waited for a CPU;
// - the busy time: the CPU time the GUI thread itself used (the application's own work).
// A long stall with little busy time was the system's scheduling, not the playground's work.
// Used by screenshot mode to report responsiveness during a generation.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

class EventLoopWatch : public QObject {
public:
    explicit EventLoopWatch(QObject* parent = nullptr);
    void start();
    double longestStallMs() const { return m_longestStallMs; }
    double longestBusyMs() const { return m_longestBusyMs; }

private:
    static constexpr int kTickMs = 5;
    QTimer m_timer;
    QElapsedTimer m_clock;    // since the last tick
    double m_threadCpuMs = 0; // the GUI thread's CPU time at the last tick
    double m_longestStallMs = 0;
    double m_longestBusyMs = 0;
};
