// The model file's SHA-256, read on the hasher's own thread: the hash reported is the file's, it
// is known only for the current file, starting another file cancels the read in progress (only the
// new file is reported), shutting down cancels it too, and a hash known from elsewhere needs no
// read.
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

} // namespace

class TestModelHasher : public QObject {
    Q_OBJECT

private slots:
    void reportsTheFilesHash() {
        QTemporaryDir dir;
        const QString path = writeFile(dir, QStringLiteral("model.gguf"), 3);
        std::atomic<bool> shuttingDown = false;
        Reports reports;
        ModelHasher hasher(reports.callback(), shuttingDown);
        hasher.start(path);
        QTRY_COMPARE_WITH_TIMEOUT(reports.count(), qsizetype(1), kWaitMs);
        QCOMPARE(reports.list[0].first, path);
        QCOMPARE(reports.list[0].second, expectedHash(path));
        QCOMPARE(hasher.sha256Of(path), expectedHash(path));
        QCOMPARE(hasher.sha256Of(dir.filePath(QStringLiteral("other.gguf"))), QString());
    }

    void anotherFileCancelsTheRead() {
        QTemporaryDir dir;
        const QString large = writeFile(dir, QStringLiteral("large.gguf"), 128);
        const QString small = writeFile(dir, QStringLiteral("small.gguf"), 1);
        std::atomic<bool> shuttingDown = false;
        Reports reports;
        ModelHasher hasher(reports.callback(), shuttingDown);
        hasher.start(large);
        hasher.start(small);
        QTRY_COMPARE_WITH_TIMEOUT(reports.count(), qsizetype(1), kWaitMs);
        hasher.stop();
        QCOMPARE(reports.count(), qsizetype(1));
        QCOMPARE(reports.list[0].first, small);
        QCOMPARE(hasher.sha256Of(large), QString());
        QCOMPARE(hasher.sha256Of(small), expectedHash(small));
    }

    void shuttingDownCancelsTheRead() {
        QTemporaryDir dir;
        const QString large = writeFile(dir, QStringLiteral("large.gguf"), 128);
        std::atomic<bool> shuttingDown = false;
        Reports reports;
        ModelHasher hasher(reports.callback(), shuttingDown);
        hasher.start(large);
        shuttingDown.store(true);
        hasher.stop();
        QCOMPARE(reports.count(), qsizetype(0));
        QCOMPARE(hasher.sha256Of(large), QString());
    }

    void aKnownHashNeedsNoRead() {
        std::atomic<bool> shuttingDown = false;
        Reports reports;
        ModelHasher hasher(reports.callback(), shuttingDown);
        const QString sha256(64, QLatin1Char('a'));
        hasher.known(QStringLiteral("/no/such/model.gguf"), sha256);
        QCOMPARE(hasher.sha256Of(QStringLiteral("/no/such/model.gguf")), sha256);
        QCOMPARE(reports.count(), qsizetype(0));
    }
};

QTEST_MAIN(TestModelHasher)
#include "test_model_hasher.moc"
