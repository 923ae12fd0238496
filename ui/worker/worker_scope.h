// What the worker's request files (engine_worker.cpp, worker_loads.cpp) share: the engine-thread
// check and the scope that ends every request with requestDone().
#pragma once

#include "worker/engine_worker.h"

#include <QCoreApplication>
#include <QThread>

namespace sinkscope::ui {

// The model code runs on the engine thread only; the GUI thread must never wait on it.
inline void assertEngineThread() {
    Q_ASSERT(QThread::currentThread() != QCoreApplication::instance()->thread());
}

// Emits requestDone() however the request ends.
class RequestScope {
public:
    explicit RequestScope(EngineWorker& worker) : m_worker(worker) {}
    ~RequestScope() { emit m_worker.requestDone(); }
    RequestScope(const RequestScope&) = delete;
    RequestScope& operator=(const RequestScope&) = delete;

private:
    EngineWorker& m_worker;
};

} // namespace sinkscope::ui
