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

// Holds the model file's hash read while the request runs (ModelHasher::Pause), and emits
// requestDone() however the request ends.
class RequestScope {
public:
    explicit RequestScope(EngineWorker& worker) : m_worker(worker), m_hashPause(worker.m_hasher) {}
    ~RequestScope() { emit m_worker.requestDone(); }
    RequestScope(const RequestScope&) = delete;
    RequestScope& operator=(const RequestScope&) = delete;

private:
    EngineWorker& m_worker;
    ModelHasher::Pause m_hashPause;
};

} // namespace sinkscope::ui
