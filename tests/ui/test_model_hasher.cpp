// The model file's SHA-256, read on the hasher's own thread: the hash reported is the file's, it
// is known only for the current file, starting another file cancels the read in progress (only the
// new file is reported), shutting down cancels it too, a hash known from elsewhere needs no read,
// and the read waits while a pause is held (the engine worker's requests hold one).
#include <QtTest>

#include "worker/file_hash.h"
#include "worker/model_hasher.h"

#include <QTemporaryDir>

#include <atomic>
#include <mutex>

using sinkscope::ui::ModelHasher;
using sinkscope::ui::sha256OfFile;

namespace {

constexpr int kWaitMs = 30000;

// A file of `megabytes` of a repeating pattern.
QString writeFile(const QTemporaryDir& dir, const QString& name, int megabytes) {
    const QString path = dir.filePath(name);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly)) return {};
    QByteArray block(1 << 20, '\0');
    for (int i = 0; i < block.size(); ++i)
        block[i] = char((i * 31 + name.size()) & 0xff);
    for (int m = 0; m < megabytes; ++m)
        file.write(block);
    return path;
}

// What the hasher reported, from its thread.
struct Reports {
    std::mutex mutex;
    QList<std::pair<QString, QString>> list;
    ModelHasher::Done callback() {
        return [this](const QString& path, const QString& sha256) {
            const std::lock_guard lock(mutex);
            list.append({path, sha256});
        };
    }
    qsizetype count() {
        const std::lock_guard lock(mutex);
        return list.size();
    }
};

QString expectedHash(const QString& path) {
    QString error;
    return sha256OfFile(path, error);
}

// A hasher, what it reported, and a folder for the files it reads.
struct HasherRig {
    QTemporaryDir dir;
    std::atomic<bool> shuttingDown = false;
    Reports reports;
    ModelHasher hasher{reports.callback(), shuttingDown};

    QString file(const QString& name, int megabytes) { return writeFile(dir, name, megabytes); }
};

} // namespace

class TestModelHasher : public QObject {
    Q_OBJECT

private slots:
    void reportsTheFilesHash() {
        HasherRig rig;
        const QString path = rig.file(QStringLiteral("model.gguf"), 3);
        rig.hasher.start(path);
        QTRY_COMPARE_WITH_TIMEOUT(rig.reports.count(), qsizetype(1), kWaitMs);
        QCOMPARE(rig.reports.list[0].first, path);
        QCOMPARE(rig.reports.list[0].second, expectedHash(path));
        QCOMPARE(rig.hasher.sha256Of(path), expectedHash(path));
        QCOMPARE(rig.hasher.sha256Of(rig.dir.filePath(QStringLiteral("other.gguf"))), QString());
    }

    void anotherFileCancelsTheRead() {
        HasherRig rig;
        const QString large = rig.file(QStringLiteral("large.gguf"), 128);
        const QString small = rig.file(QStringLiteral("small.gguf"), 1);
        rig.hasher.start(large);
        rig.hasher.start(small);
        QTRY_COMPARE_WITH_TIMEOUT(rig.reports.count(), qsizetype(1), kWaitMs);
        rig.hasher.stop();
        QCOMPARE(rig.reports.count(), qsizetype(1));
        QCOMPARE(rig.reports.list[0].first, small);
        QCOMPARE(rig.hasher.sha256Of(large), QString());
        QCOMPARE(rig.hasher.sha256Of(small), expectedHash(small));
    }

    void shuttingDownCancelsTheRead() {
        HasherRig rig;
        const QString large = rig.file(QStringLiteral("large.gguf"), 128);
        rig.hasher.start(large);
        rig.shuttingDown.store(true);
        rig.hasher.stop();
        QCOMPARE(rig.reports.count(), qsizetype(0));
        QCOMPARE(rig.hasher.sha256Of(large), QString());
    }

    void aPauseHoldsTheReadUntilItEnds() {
        HasherRig rig;
        const QString path = rig.file(QStringLiteral("model.gguf"), 2);
        {
            const ModelHasher::Pause first(rig.hasher);
            const ModelHasher::Pause second(rig.hasher);
            rig.hasher.start(path);
            QTest::qWait(300); // a 2 MB read takes a few milliseconds unpaused
            QCOMPARE(rig.reports.count(), qsizetype(0));
            QCOMPARE(rig.hasher.sha256Of(path), QString());
        }
        QTRY_COMPARE_WITH_TIMEOUT(rig.reports.count(), qsizetype(1), kWaitMs);
        QCOMPARE(rig.hasher.sha256Of(path), expectedHash(path));
    }

    void stoppingEndsAPausedRead() {
        HasherRig rig;
        const QString path = rig.file(QStringLiteral("model.gguf"), 2);
        const ModelHasher::Pause pause(rig.hasher);
        rig.hasher.start(path);
        rig.hasher.stop(); // returns: the waiting read sees the stop
        QCOMPARE(rig.reports.count(), qsizetype(0));
    }

    void aKnownHashNeedsNoRead() {
        HasherRig rig;
        const QString path = QStringLiteral("/no/such/model.gguf");
        const QString sha256(64, QLatin1Char('a'));
        rig.hasher.known(path, sha256);
        QCOMPARE(rig.hasher.sha256Of(path), sha256);
        QCOMPARE(rig.reports.count(), qsizetype(0));
    }
};

QTEST_MAIN(TestModelHasher)
#include "test_model_hasher.moc"
