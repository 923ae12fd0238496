// `sinkscope-cli tokenize` on byte-level BPE vocabularies: llama.cpp's vocabulary files without
// tensors load, BOS follows the vocabulary unless --no-bos, --special parses control tokens, an
// unknown pre-tokenizer is a warning on stderr, and a broken vocabulary is a one-line error.
#include <QtTest>

#include "cli_run.h"
#include "test_support.h"
#include "tokenizer_test_support.h"

#include <QJsonArray>
#include <QTemporaryDir>

using namespace sinkscope;
using sinkscope::test::CliRun;
using sinkscope::test::describe;
using sinkscope::test::runCli;

namespace {

QList<int> idsOf(const QJsonValue& value) {
    QList<int> ids;
    for (const QJsonValue& id : value.toArray())
        ids.push_back(id.toInt());
    return ids;
}

// A twelve-token BPE vocabulary whose pre-tokenizer and merges are given.
QByteArray vocabularyFile(const std::string& pre, const std::vector<std::string>& merges) {
    GgufWriter writer;
    writer.setString("tokenizer.ggml.model", "gpt2");
    writer.setString("tokenizer.ggml.pre", pre);
    writer.setStringArray("tokenizer.ggml.tokens", {"a", "b", "ab", "Ġ", "Ġab", "c", "d", "e", "f",
                                                    "g", "h", "<|endoftext|>"});
    writer.setStringArray("tokenizer.ggml.merges", merges);
    return test::bytesOf(writer);
}

} // namespace

class TestTokenizeCli : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }
    void vocabularyOnlyFile();
    void bosAndSpecialTokens();
    void unknownPreTokenizerWarns();
    void brokenVocabulary();

private:
    // Runs tokenize; on exit 0 parses its JSON.
    QJsonObject tokenize(const QStringList& args, CliRun& run) {
        run = runCli(QStringList{"tokenize"} + args);
        return QJsonDocument::fromJson(run.out).object();
    }
    QString write(const QString& name, const QByteArray& bytes) {
        const QString path = m_dir.filePath(name);
        QFile file(path);
        if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size()) return {};
        return path;
    }

    QTemporaryDir m_dir;
};

void TestTokenizeCli::vocabularyOnlyFile() {
    const QString vocab = test::sharedPath("reference/tokenizers/ggml-vocab-gpt-2.gguf");
    if (!QFileInfo::exists(vocab)) QSKIP(qPrintable("no GPT-2 vocabulary at " + vocab));
    CliRun run;
    const QJsonObject report = tokenize({"--model", vocab, "--text", "Hello, world!"}, run);
    QVERIFY2(run.exitCode == 0, qPrintable(describe(run)));
    QCOMPARE(idsOf(report["ids"]), (QList<int>{15496, 11, 995, 0})); // no BOS for gpt-2
    QCOMPARE(report["pieces"].toArray(), (QJsonArray{"Hello", ",", "Ġworld", "!"}));
    QCOMPARE(run.err, QByteArray());
}

void TestTokenizeCli::bosAndSpecialTokens() {
    const QString model = test::sharedPath("reference/models/llama3-tiny-F16.gguf");
    if (!QFileInfo::exists(model)) QSKIP(qPrintable("no synthetic Llama-3 model at " + model));
    CliRun run;
    const QString text = "<|start_header_id|>user<|end_header_id|>";
    const QJsonObject plain = tokenize({"--model", model, "--text", text}, run);
    QVERIFY2(run.exitCode == 0, qPrintable(describe(run)));
    const QList<int> plainIds = idsOf(plain["ids"]);
    QVERIFY(plainIds.size() > 3);
    QCOMPARE(plainIds.first(), 4000); // <|begin_of_text|>: llama-bpe adds BOS

    const QJsonObject special = tokenize({"--model", model, "--text", text, "--special"}, run);
    QVERIFY2(run.exitCode == 0, qPrintable(describe(run)));
    QCOMPARE(idsOf(special["ids"]), (QList<int>{4000, 4002, 385, 263, 4003}));
    QCOMPARE(special["pieces"].toArray(), (QJsonArray{"<|begin_of_text|>", "<|start_header_id|>",
                                                      "us", "er", "<|end_header_id|>"}));

    const QJsonObject noBos =
        tokenize({"--model", model, "--text", text, "--special", "--no-bos"}, run);
    QVERIFY2(run.exitCode == 0, qPrintable(describe(run)));
    QCOMPARE(idsOf(noBos["ids"]), (QList<int>{4002, 385, 263, 4003}));
}

void TestTokenizeCli::unknownPreTokenizerWarns() {
    const QString path = write("unknown-pre.gguf", vocabularyFile("made-up", {"a b", "Ġ ab"}));
    QVERIFY(!path.isEmpty());
    CliRun run;
    const QJsonObject report = tokenize({"--model", path, "--text", "ab ab"}, run);
    QVERIFY2(run.exitCode == 0, qPrintable(describe(run)));
    QCOMPARE(idsOf(report["ids"]), (QList<int>{2, 4}));
    QCOMPARE(run.err, QByteArray("warning: unknown pre-tokenizer \"made-up\": using the default "
                                 "one\n"));
}

void TestTokenizeCli::brokenVocabulary() {
    const QString path = write("broken.gguf", vocabularyFile("gpt-2", {"a b", "a x"}));
    QVERIFY(!path.isEmpty());
    CliRun run;
    tokenize({"--model", path, "--text", "ab"}, run);
    QCOMPARE(run.exitCode, 3);
    QCOMPARE(QString::fromUtf8(run.err).trimmed(),
             "sinkscope-cli: error: cannot load model '" + path +
                 "': tokenizer.ggml.merges[1] = \"a x\" names \"x\", which is not a token");
}

QTEST_GUILESS_MAIN(TestTokenizeCli)
#include "test_tokenize_cli.moc"
