// Reads the open model file's SHA-256 (what a saved session names its model by) on a thread of
// its own: a model of gigabytes takes seconds to read, and the engine worker must answer a message
// sent the moment the model opened. Starting another file, or destroying the hasher, cancels the
// read in progress. While a Pause is held (the engine worker holds one for each request it runs)
// the read waits between chunks: prefill and decoding read the weights as fast as memory allows,
// and a read beside them takes part of that bandwidth even at the lowest priority.
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

    // Holds the read (any thread); reads go on when every Pause is gone.
    class Pause {
    public:
        explicit Pause(ModelHasher& hasher) : m_hasher(hasher) { m_hasher.m_pauses.fetch_add(1); }
        ~Pause() { m_hasher.m_pauses.fetch_sub(1); }
        Pause(const Pause&) = delete;
        Pause& operator=(const Pause&) = delete;

    private:
        ModelHasher& m_hasher;
    };

private:
    Done m_done;
    const std::atomic<bool>& m_shuttingDown;
    std::thread m_thread;
    std::atomic<bool> m_cancelled{false};
    std::atomic<int> m_pauses{0};
    mutable std::mutex m_mutex;
    QString m_path;   // guarded by m_mutex: the current file
    QString m_sha256; // guarded by m_mutex: its hash, "" until read
};

} // namespace sinkscope::ui
