// sinkscope-cli run while its model file is truncated, rewritten in place or deleted: the run goes
// on to the end with the weights it loaded (the model detaches from its file at load, see
// GgufFile::open), printing what a run on a file nobody touched prints, never dying of a signal.
#include "cli_fixture.h"

#include <QProcess>
#include <QtTest>

using namespace sinkscope::test;

namespace {

constexpr int kWaitMs = 300'000;
constexpr const char* kTokens = "6000"; // long enough to be under way when the file changes

} // namespace

class TestCliModelChanges : public QObject, public CliFixture {
    Q_OBJECT

private slots:
    void initTestCase() { makeFiles(); }
    void runOutlivesChangesToTheModelFile_data();
    void runOutlivesChangesToTheModelFile();

private:
    static QStringList runArgs(const QString& model) {
        return {"run",         "--model", model,      "--prompt",    "Once upon a time",
                "--n-predict", kTokens,   "--greedy", "--ignore-eos"};
    }
};

void TestCliModelChanges::runOutlivesChangesToTheModelFile_data() {
    QTest::addColumn<QString>("type");
    QTest::addColumn<QString>("change");
    for (const char* type : {"f32", "q8_0", "q4_0"}) {
        QTest::addRow("%s, truncated", type) << type << "truncate";
        QTest::addRow("%s, rewritten in place", type) << type << "rewrite";
        QTest::addRow("%s, deleted", type) << type << "delete";
    }
}

void TestCliModelChanges::runOutlivesChangesToTheModelFile() {
    QFETCH(QString, type);
    QFETCH(QString, change);
    const QString original = path("model-" + type + ".gguf");
    if (!QFileInfo::exists(original)) {
        QJsonObject made;
        QVERIFY(runJson({"make-model", "--out", original, "--type", type}, made));
    }
    const CliRun expected = runCli(runArgs(original), kWaitMs);
    QVERIFY2(expected.finished && !expected.crashed && expected.exitCode == 0,
             qPrintable(describe(expected)));

    const QString changed = path("changed-" + type + "-" + change + ".gguf");
    QVERIFY(QFile::copy(original, changed));
    QProcess process;
    process.start(QStringLiteral(SINKSCOPE_CLI_PATH), runArgs(changed));
    QVERIFY(process.waitForStarted());
    process.closeWriteChannel();
    QVERIFY(process.waitForReadyRead(kWaitMs)); // the first generated tokens
    QByteArray out = process.readAllStandardOutput();
    QVERIFY(out.size() < expected.out.size());
    if (change == "truncate") {
        QVERIFY(QFile::resize(changed, 0));
    } else if (change == "rewrite") {
        // What cp does: the same inode truncated, then written with another model's bytes.
        QFile file(changed);
        QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
        const QByteArray other = readFile(m_model);
        QCOMPARE(file.write(other), other.size());
    } else {
        QVERIFY(QFile::remove(changed));
    }
    QVERIFY(process.waitForFinished(kWaitMs));
    out += process.readAllStandardOutput();
    QCOMPARE(process.exitStatus(), QProcess::NormalExit);
    QCOMPARE(process.exitCode(), 0);
    QCOMPARE(out, expected.out);
}

QTEST_GUILESS_MAIN(TestCliModelChanges)
#include "test_cli_model_changes.moc"
