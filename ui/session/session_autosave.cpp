#include "session/session_autosave.h"

#include <QDir>
#include <QFileInfo>

#include <utility>

namespace sinkscope::ui {

SessionAutosave::SessionAutosave(const QString& restorePath, const QString& lockPath,
                                 QObject* parent)
    : QObject(parent), m_restorePath(restorePath), m_lock(lockPath) {
    m_writer.setMaxThreadCount(1);
    // A window stays open for days: only a lock whose process is gone is stale, never an old one.
    m_lock.setStaleLockTime(0);
}

SessionAutosave::~SessionAutosave() {
    flush();
}

bool SessionAutosave::takeLock() {
    const QString lockPath = m_lock.fileName();
    QDir().mkpath(QFileInfo(lockPath).absolutePath());
    // A lock file still there when it is free to take was left by a run that never unlocked it.
    const bool leftBehind = QFileInfo::exists(lockPath);
    if (!m_lock.tryLock(0)) return false;
    m_previousRunEnded = leftBehind;
    return true;
}

void SessionAutosave::keep(const SessionFile& session) {
    if (!holdsLock()) return;
    const std::lock_guard guard(m_mutex);
    m_queued = session;
    if (m_writing) return; // the writing thread takes it when the write under way ends
    m_writing = true;
    m_writer.start([this] { writeQueued(); });
}

void SessionAutosave::flush() {
    m_writer.waitForDone();
}

void SessionAutosave::writeQueued() {
    QDir().mkpath(QFileInfo(m_restorePath).absolutePath());
    while (true) {
        std::optional<SessionFile> session;
        {
            const std::lock_guard guard(m_mutex);
            if (!m_queued) {
                m_writing = false;
                return;
            }
            session = std::exchange(m_queued, std::nullopt);
        }
        if (QString error; !writeSessionFile(m_restorePath, *session, error))
            emit keepFailed(m_restorePath, error);
    }
}

} // namespace sinkscope::ui
