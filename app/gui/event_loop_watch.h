// Measures how long the GUI thread's event loop goes without running: a timer due every
// kTickMs records the longest gap between its ticks beyond that period. Used by screenshot mode
// to report responsiveness during a generation.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

class EventLoopWatch : public QObject {
public:
    explicit EventLoopWatch(QObject* parent = nullptr);
    void start();
    double longestStallMs() const { return m_longestStallMs; }

private:
    static constexpr int kTickMs = 5;
    QTimer m_timer;
    QElapsedTimer m_clock;
    double m_longestStallMs = 0;
};
