// The chat kept for the next start, written while the window is open: after every completed turn,
// tool edit and setting change, so that a killed or crashed process loses at most the reply in
// flight. Writes run on a thread of their own and the newest session wins: a burst of changes is
// one write, and a 50,000-turn chat (2 MB of JSON) never stalls the window. Each write goes beside
// the file and is renamed over it (writeSessionFile), so a full disk leaves the last good copy.
//
// Whether the previous run quit is told by a lock file (QLockFile) held from start to quit: one
// left by a process that is no longer running means that process was killed or crashed. Only the
// process that holds the lock writes while it runs; a second window opened meanwhile writes its
// chat at quit only, as the last window closed wins.
#pragma once

#include "session/session_file.h"

#include <QLockFile>
#include <QObject>
#include <QThreadPool>

#include <mutex>
#include <optional>

namespace sinkscope::ui {

class SessionAutosave : public QObject {
    Q_OBJECT
public:
    // `restorePath`: the file written; `lockPath`: the lock held while this object lives.
    SessionAutosave(const QString& restorePath, const QString& lockPath, QObject* parent);
    ~SessionAutosave() override; // waits for the write in flight

    // Takes the lock; false when another running process holds it (then keep() writes nothing).
    bool takeLock();
    bool holdsLock() const { return m_lock.isLocked(); }
    // Whether the lock taken had been left by a process that is no longer running.
    bool previousRunEnded() const { return m_previousRunEnded; }

    // Queues `session` to be written; it replaces one queued and not yet started.
    void keep(const SessionFile& session);
    // Returns once nothing is queued or being written (before the write at quit, and in tests).
    void flush();

signals:
    // From the writing thread, delivered queued: the file and the system's reason.
    void keepFailed(const QString& path, const QString& error);

private:
    void writeQueued();

    const QString m_restorePath;
    QLockFile m_lock;
    bool m_previousRunEnded = false;
    QThreadPool m_writer; // one thread: writes never overlap and finish in order

    std::mutex m_mutex; // guards the two below, shared with the writing thread
    std::optional<SessionFile> m_queued;
    bool m_writing = false;
};

} // namespace sinkscope::ui
