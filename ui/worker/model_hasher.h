// Reads the open model file's SHA-256 (what a saved session names its model by) on a thread of
// its own: a model of gigabytes takes seconds to read, and the engine worker must answer a message
// sent the moment the model opened. Starting another file, or destroying the hasher, cancels the
// read in progress.
#pragma once

#include <QString>

#include <atomic>
#include <functional>
#include <mutex>
#include <thread>

namespace sinkscope::ui {

class ModelHasher {
public:
    // `done(path, sha256)` is called on the hashing thread when a read completes; `shuttingDown`
    // cancels reads too.
    using Done = std::function<void(const QString& path, const QString& sha256)>;
    ModelHasher(Done done, const std::atomic<bool>& shuttingDown);
    ~ModelHasher();
    ModelHasher(const ModelHasher&) = delete;
    ModelHasher& operator=(const ModelHasher&) = delete;

    // Start, known and stop are called from one thread (the engine worker's).
    void start(const QString& path);
    // A hash read elsewhere (a restored session's check): no read needed.
    void known(const QString& path, const QString& sha256);
    void stop();

    // The file's hash when it has been read and is still the current file; "" otherwise.
    QString sha256Of(const QString& path) const;

private:
    Done m_done;
    const std::atomic<bool>& m_shuttingDown;
    std::thread m_thread;
    std::atomic<bool> m_cancelled{false};
    mutable std::mutex m_mutex;
    QString m_path;   // guarded by m_mutex: the current file
    QString m_sha256; // guarded by m_mutex: its hash, "" until read
};

} // namespace sinkscope::ui
