// What a long chat costs the playground's GUI thread, on needle-nano (the embedded model). For
// each size it writes a session of that many short turns, opens it with File > Open Session and
// then restores it at a start, and streams a 64-token reply into it; a fresh chat's reply is the
// baseline. Reported per size: the GUI thread's CPU time to open and to start with the restore,
// the longest event-loop stall meanwhile, the reply's tokens/s as the chat receives it against
// the fresh chat's, the longest stall while it streams, and the process's RSS. Not a test: run it
// by hand, on the offscreen platform or a display,
//   QT_QPA_PLATFORM=offscreen build/tests/bench_chat_view [turns...]   (500 2000 10000 50000)
// Prints one JSON object per line.
#include "panels/process_memory.h"
#include "ui/chat/long_session_support.h"
#include "worker/engine_client.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QTimer>

#include <cstdio>
#include <ctime>

using namespace sinkscope;
using namespace sinkscope::ui;
using namespace sinkscope::test;

namespace {

constexpr int kReplyTokens = 64;
constexpr int kBenchWaitMs = 600000;

double threadCpuMs() {
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return double(now.tv_sec) * 1e3 + double(now.tv_nsec) / 1e6;
}

// The longest time the event loop went without running a 1 ms timer: how long the window could
// not answer a click.
class StallProbe {
public:
    StallProbe() {
        m_timer.setTimerType(Qt::PreciseTimer);
        m_timer.setInterval(1);
        QObject::connect(&m_timer, &QTimer::timeout,
                         [this] { m_longest = qMax(m_longest, m_since.restart()); });
        reset();
        m_timer.start();
    }
    void reset() {
        m_since.start();
        m_longest = 0;
    }
    qint64 longestMs() const { return qMax(m_longest, m_since.elapsed()); }

private:
    QTimer m_timer;
    QElapsedTimer m_since;
    qint64 m_longest = 0;
};

// Lets the window lay out and paint what it was given.
void settle() {
    QTest::qWait(300);
}

struct Reply {
    double tokensPerSecond = 0;       // generated tokens over the time from the first to the end
    double decodeTokensPerSecond = 0; // the engine's own figure (GenerationReport)
    qint64 longestStallMs = 0;
};

Reply streamReply(MainWindow& window, StallProbe& probe) {
    QSignalSpy replies(&window, &MainWindow::replyFinished);
    QElapsedTimer sinceFirst;
    int generated = 0;
    const QMetaObject::Connection counting =
        QObject::connect(window.engine(), &EngineClient::batchReady, [&](const EngineBatch& batch) {
            for (const StreamPiece& piece : batch.pieces)
                if (piece.generated && generated++ == 0) sinceFirst.start();
        });
    typeMessage(window, QStringLiteral("and the hall light?"));
    probe.reset();
    const GenerationReport report = waitForReply(replies);
    const qint64 stall = probe.longestMs();
    QObject::disconnect(counting);
    settle();
    Reply reply;
    reply.longestStallMs = stall;
    reply.decodeTokensPerSecond = report.tokensPerSecond();
    if (generated > 1) reply.tokensPerSecond = (generated - 1) / (sinceFirst.nsecsElapsed() / 1e9);
    if (report.reason == StopReason::Failed) reply.tokensPerSecond = 0;
    return reply;
}

void saveBenchSettings(bool restoreAtStart) {
    QSettings(QStringLiteral("Sinkscope"), QStringLiteral("sinkscope")).clear();
    AppSettings settings;
    settings.modelPath = defaultModelPath();
    settings.limits.maxNewTokens = kReplyTokens;
    settings.limits.stopAtNewline = false;
    settings.limits.ignoreEos = true;
    settings.restoreLastSession = restoreAtStart;
    settings.save();
}

} // namespace

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QTemporaryDir dir;
    useTemporaryAppFolders(dir);
    QList<int> sizes;
    for (int i = 1; i < argc; ++i)
        sizes << QString::fromLocal8Bit(argv[i]).toInt();
    if (sizes.isEmpty()) sizes = {500, 2000, 10000, 50000};

    saveBenchSettings(false);
    StallProbe probe;
    std::unique_ptr<MainWindow> fresh = openLoadedWindow(kBenchWaitMs);
    if (!fresh) return 1;
    const Reply baseline = streamReply(*fresh, probe);
    std::printf("{\"turns\": 0, \"reply_tokens_per_s\": %.1f, \"decode_tokens_per_s\": %.1f, "
                "\"reply_longest_stall_ms\": %lld, \"rss_mib\": %.0f}\n",
                baseline.tokensPerSecond, baseline.decodeTokensPerSecond,
                qint64(baseline.longestStallMs), residentSetBytes() / 1048576.0);
    std::fflush(stdout);

    for (const int turns : sizes) {
        saveBenchSettings(false);
        std::unique_ptr<MainWindow> window = openLoadedWindow(kBenchWaitMs);
        if (!window) return 1;
        const QString path = dir.filePath(QStringLiteral("bench-%1.sinkscope-session").arg(turns));
        QString error;
        if (!writeLongSession(*window, path, turns, error)) {
            std::fprintf(stderr, "%s\n", qPrintable(error));
            return 1;
        }
        probe.reset();
        double cpu = threadCpuMs();
        QElapsedTimer wall;
        wall.start();
        const SessionInfo opened = openSession(*window, path, kBenchWaitMs);
        if (!opened.restored) return 1;
        const double openWallMs = wall.elapsed();
        settle();
        const double openCpuMs = threadCpuMs() - cpu;
        const qint64 openStallMs = probe.longestMs();
        const Reply reply = streamReply(*window, probe);
        const double rssMib = residentSetBytes() / 1048576.0;
        window.reset();

        // The same session kept at quit, restored by the next start.
        QFile::remove(SessionActions::lastSessionPath());
        QFile::copy(path, SessionActions::lastSessionPath());
        saveBenchSettings(true);
        probe.reset();
        cpu = threadCpuMs();
        auto restoring = std::make_unique<MainWindow>();
        QSignalSpy sessions(restoring.get(), &MainWindow::sessionRebuilt);
        restoring->show();
        bool restored = false;
        while (!restored && (!sessions.isEmpty() || sessions.wait(kBenchWaitMs)))
            restored = sessions.takeFirst().at(0).value<SessionInfo>().restored;
        settle();
        const double startCpuMs = threadCpuMs() - cpu;
        const qint64 startStallMs = probe.longestMs();
        restoring.reset();

        std::printf(
            "{\"turns\": %d, \"open_gui_cpu_ms\": %.0f, \"open_wall_ms\": %.0f, "
            "\"open_longest_stall_ms\": %lld, \"start_restored_gui_cpu_ms\": %.0f, "
            "\"start_longest_stall_ms\": %lld, \"restored\": %s, "
            "\"reply_tokens_per_s\": %.1f, \"decode_tokens_per_s\": %.1f, "
            "\"of_fresh\": %.2f, "
            "\"reply_longest_stall_ms\": %lld, \"rss_mib\": %.0f}\n",
            turns, openCpuMs, openWallMs, qint64(openStallMs), startCpuMs, qint64(startStallMs),
            restored ? "true" : "false", reply.tokensPerSecond, reply.decodeTokensPerSecond,
            baseline.tokensPerSecond > 0 ? reply.tokensPerSecond / baseline.tokensPerSecond : 0.0,
            qint64(reply.longestStallMs), rssMib);
        std::fflush(stdout);
    }
    return 0;
}
