// What the sinkscope-cli suites share: the synthetic model, bad input files, JSON reports parsed.
#pragma once

#include "cli_run.h"
#include "test_support.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

namespace sinkscope::test {

inline constexpr qint64 kBudgetBytes = 12'058'624;

// The synthetic model initTestCase writes: make-model's defaults.
inline constexpr int kVocab = 512;
inline constexpr int kEmbd = 64;
inline constexpr int kLayers = 2;
inline constexpr int kKvDim = 2 * (64 / 4); // n_head_kv * head_dim
inline constexpr int kFf = 128;
// 12,058,624 / 144 bytes a position, capped by ctx.
inline constexpr int kSyntheticBudgetWindow = 2048;

inline QList<int> toIntList(const QJsonValue& value) {
    QList<int> ids;
    for (const QJsonValue& id : value.toArray())
        ids.append(id.toInt());
    return ids;
}

inline qint64 int8RowBytes(int width) {
    return (width + 31) / 32 * (32 + 4);
}

// Bytes of one cached K (or V) row as kv_cache.h stores it.
inline qint64 rowBytes(int width, int kvBits) {
    return kvBits == 8 ? int8RowBytes(width) : qint64(width) * kvBits / 8;
}

inline void writeFile(const QString& path, const QByteArray& bytes) {
    QFile file(path);
    QVERIFY2(file.open(QIODevice::WriteOnly), qPrintable(path));
    QCOMPARE(file.write(bytes), bytes.size());
}

inline QByteArray readFile(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// The files every CLI suite runs against; each suite's initTestCase calls makeFiles().
class CliFixture {
protected:
    // The synthetic model, and beside it plain text, an empty file, a prompt, a text to stream, a
    // truncated model and a directory.
    void makeFiles();
    // Runs the CLI and parses stdout as one JSON object; false, with the reason logged, unless
    // it exits 0 and prints exactly that.
    bool runJson(const QStringList& args, QJsonObject& report);
    QString path(const QString& name) const { return m_dir.filePath(name); }

    QTemporaryDir m_dir;
    QString m_model;
};

inline void CliFixture::makeFiles() {
    QVERIFY(m_dir.isValid());
    m_model = path("synthetic.gguf");
    QJsonObject made;
    QVERIFY(runJson({"make-model", "--out", m_model}, made));

    writeFile(path("not-gguf.txt"), "this is plain text, not a GGUF file\n");
    writeFile(path("empty.txt"), {});
    writeFile(path("prompt.txt"), "Once upon a time");
    writeFile(path("stream.txt"), "The small robot rolled to the pond and looked at the boat. ");
    const QByteArray model = readFile(m_model);
    QVERIFY(model.size() > 1000);
    writeFile(path("truncated.gguf"), model.left(model.size() / 2));
    QVERIFY(QDir(m_dir.path()).mkdir("a-directory"));
}

inline bool CliFixture::runJson(const QStringList& args, QJsonObject& report) {
    const CliRun run = runCli(args);
    if (!run.finished || run.crashed || run.exitCode != 0) {
        qWarning().noquote() << describe(run);
        return false;
    }
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(run.out, &error);
    if (error.error != QJsonParseError::NoError || !document.isObject()) {
        qWarning().noquote() << "not one JSON object:" << error.errorString()
                             << QString::fromUtf8(run.out);
        return false;
    }
    report = document.object();
    return true;
}

} // namespace sinkscope::test
