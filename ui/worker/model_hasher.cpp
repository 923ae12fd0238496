#include "worker/model_hasher.h"

#include "worker/file_hash.h"

#include <chrono>

#ifdef __linux__
#include <sys/resource.h>
#include <unistd.h>
#endif

namespace sinkscope::ui {

namespace {

// How often a paused read looks whether it may go on.
constexpr auto kPausePoll = std::chrono::milliseconds(20);

// The read is background work: while a reply decodes, its threads use every core, and the hash
// is needed only when a session is saved or restored. At the lowest priority the read takes what
// the cores leave, and runs at full speed once the engine is idle.
void lowerThisThreadsPriority() {
#ifdef __linux__
    setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 19);
#endif
}

} // namespace

ModelHasher::ModelHasher(Done done, const std::atomic<bool>& shuttingDown)
    : m_done(std::move(done)), m_shuttingDown(shuttingDown) {}

ModelHasher::~ModelHasher() {
    stop();
}

void ModelHasher::start(const QString& path) {
    stop();
    {
        const std::lock_guard lock(m_mutex);
        m_path = path;
        m_sha256.clear();
    }
    m_cancelled.store(false);
    m_thread = std::thread([this, path] {
        lowerThisThreadsPriority();
        QString error;
        const auto stopping = [this] { return m_cancelled.load() || m_shuttingDown.load(); };
        const QString sha256 = sha256OfFile(path, error, [&] {
            while (m_pauses.load() > 0 && !stopping())
                std::this_thread::sleep_for(kPausePoll);
            return stopping();
        });
        if (sha256.isEmpty()) return; // cancelled or unreadable: a restore reads it again
        {
            const std::lock_guard lock(m_mutex);
            if (m_path != path) return;
            m_sha256 = sha256;
        }
        m_done(path, sha256);
    });
}

void ModelHasher::known(const QString& path, const QString& sha256) {
    stop();
    const std::lock_guard lock(m_mutex);
    m_path = path;
    m_sha256 = sha256;
}

void ModelHasher::stop() {
    m_cancelled.store(true);
    if (m_thread.joinable()) m_thread.join();
}

QString ModelHasher::sha256Of(const QString& path) const {
    const std::lock_guard lock(m_mutex);
    return path == m_path ? m_sha256 : QString();
}

} // namespace sinkscope::ui
