// sinkscope-cli as scripts see it: exit status, one-line errors, and the JSON each command prints,
// checked against the budget table, llama.cpp's reference outputs and the cache's invariants.
#include "cli_run.h"
#include "test_support.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include <algorithm>
#include <cmath>

namespace {

using sinkscope::test::CliRun;
using sinkscope::test::describe;
using sinkscope::test::runCli;

using sinkscope::test::sharedPath;

constexpr qint64 kBudgetBytes = 12'058'624;

// The synthetic model initTestCase writes: make-model's defaults.
constexpr int kVocab = 512;
constexpr int kEmbd = 64;
constexpr int kLayers = 2;
constexpr int kKvDim = 2 * (64 / 4); // n_head_kv * head_dim
constexpr int kFf = 128;
constexpr int kSyntheticBudgetWindow = 2048; // 12,058,624 / 144 bytes a position, capped by ctx

QList<int> toIntList(const QJsonValue& value) {
    QList<int> ids;
    for (const QJsonValue& id : value.toArray())
        ids.append(id.toInt());
    return ids;
}

qint64 int8RowBytes(int width) {
    return (width + 31) / 32 * (32 + 4);
}

// Bytes of one cached K (or V) row as kv_cache.h stores it.
qint64 rowBytes(int width, int kvBits) {
    return kvBits == 8 ? int8RowBytes(width) : qint64(width) * kvBits / 8;
}

void writeFile(const QString& path, const QByteArray& bytes) {
    QFile file(path);
    QVERIFY2(file.open(QIODevice::WriteOnly), qPrintable(path));
    QCOMPARE(file.write(bytes), bytes.size());
}

QByteArray readFile(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

} // namespace

class TestCli : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();

    void helpPrintsUsage_data();
    void helpPrintsUsage();
    void noArgumentsIsUsageError();
    void rejectsBadInput_data();
    void rejectsBadInput();

    void makeModelReportsFileAndParameters();
    void makeModelIsDeterministic();
    void syntheticVariantsRun_data();
    void syntheticVariantsRun();

    void runJsonReportsCacheFigures_data();
    void runJsonReportsCacheFigures();
    void kvBytesDoNotGrowWithLength();
    void streamedTextMatchesJsonText();
    void samplingFollowsTheSeed();

    void budgetMatchesSpecTable_data();
    void budgetMatchesSpecTable();
    void budgetOfModelFiles();

    void tokenizeMatchesLlamaCpp();
    void perplexityOfSyntheticModel();
    void perplexityMatchesLlamaCpp_data();
    void perplexityMatchesLlamaCpp();
    void greedyRunMatchesLlamaCpp();
    void benchReportsSpeeds();
    void streamPplReportsEveryPolicy();
    void streamPplPrintsTable();
    void soakKeepsInvariantsAndFlatMemory_data();
    void soakKeepsInvariantsAndFlatMemory();
    void soakReportsRssEveryTenThousandTokens();

private:
    // Runs the CLI and parses stdout as one JSON object; false, with the reason logged, unless
    // it exits 0 and prints exactly that.
    bool runJson(const QStringList& args, QJsonObject& report);
    QString path(const QString& name) const { return m_dir.filePath(name); }
    QStringList withPlaceholders(QStringList args) const;
    QStringList runArgs(const QStringList& extra) const;
    QStringList streamPplArgs() const;

    QTemporaryDir m_dir;
    QString m_model;
};

void TestCli::initTestCase() {
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

bool TestCli::runJson(const QStringList& args, QJsonObject& report) {
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

// @MODEL@ and friends stand for the files initTestCase made, so the data table reads plainly.
QStringList TestCli::withPlaceholders(QStringList args) const {
    const QList<std::pair<QString, QString>> names = {
        {"@MODEL@", m_model},
        {"@TEXT@", path("not-gguf.txt")},
        {"@EMPTY@", path("empty.txt")},
        {"@PROMPT@", path("prompt.txt")},
        {"@TRUNCATED@", path("truncated.gguf")},
        {"@DIR@", path("a-directory")},
        {"@MISSING@", path("missing.gguf")},
    };
    for (QString& arg : args)
        for (const auto& [placeholder, value] : names)
            arg.replace(placeholder, value);
    return args;
}

QStringList TestCli::runArgs(const QStringList& extra) const {
    return QStringList{"run", "--model", m_model, "--json"} + extra;
}

void TestCli::helpPrintsUsage_data() {
    QTest::addColumn<QStringList>("args");
    QTest::newRow("help") << QStringList{"help"};
    QTest::newRow("--help") << QStringList{"--help"};
    QTest::newRow("run --help") << QStringList{"run", "--help"};
}

void TestCli::helpPrintsUsage() {
    QFETCH(QStringList, args);
    const CliRun run = runCli(args);
    QVERIFY2(run.exitCode == 0, qPrintable(describe(run)));
    QVERIFY(run.err.isEmpty());
    QVERIFY(run.out.startsWith("usage: sinkscope-cli"));
    for (const char* command :
         {"run", "budget", "tokenize", "perplexity", "bench", "make-model", "eval-tools"})
        QVERIFY2(run.out.contains(QByteArray("\n  ") + command + ' '), command);
}

void TestCli::noArgumentsIsUsageError() {
    const CliRun run = runCli({});
    QCOMPARE(run.exitCode, 2);
    QVERIFY(run.out.isEmpty());
    QVERIFY(run.err.startsWith("usage: sinkscope-cli"));
}

void TestCli::rejectsBadInput_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("message");

    const QStringList run = {"run", "--model", "@MODEL@"};
    const QStringList hi = run + QStringList{"--prompt", "hi"};
    QTest::newRow("unknown command")
        << QStringList{"frobnicate"} << 2 << "unknown command 'frobnicate'";
    QTest::newRow("unknown option")
        << hi + QStringList{"--bogus"} << 2 << "unknown option '--bogus' for 'run'";
    QTest::newRow("option of another command")
        << QStringList{"budget", "--model", "@MODEL@", "--prompt", "x"} << 2
        << "unknown option '--prompt' for 'budget'";
    QTest::newRow("stray argument")
        << hi + QStringList{"extra"} << 2 << "unexpected argument 'extra'";
    QTest::newRow("repeated option") << hi + QStringList{"--n-predict", "1", "--n-predict", "2"}
                                     << 2 << "'--n-predict' given more than once";
    QTest::newRow("flag with a value")
        << hi + QStringList{"--json=yes"} << 2 << "'--json' takes no value";
    QTest::newRow("missing prompt value")
        << run + QStringList{"--prompt"} << 2 << "option '--prompt' needs a value";
    QTest::newRow("missing window value")
        << hi + QStringList{"--kv-window"} << 2 << "option '--kv-window' needs a value";
    QTest::newRow("missing model")
        << QStringList{"run", "--prompt", "hi"} << 2 << "'run' needs option '--model'";
    QTest::newRow("n-predict not a number")
        << hi + QStringList{"--n-predict", "ten"} << 2 << "'ten' is not a whole number";
    QTest::newRow("n-predict trailing junk")
        << hi + QStringList{"--n-predict", "12x"} << 2 << "'12x' is not a whole number";
    QTest::newRow("n-predict fraction")
        << hi + QStringList{"--n-predict", "1.5"} << 2 << "'1.5' is not a whole number";
    QTest::newRow("n-predict overflows")
        << hi + QStringList{"--n-predict", "99999999999999999999"} << 2 << "is out of range";
    QTest::newRow("negative n-predict")
        << hi + QStringList{"--n-predict", "-1"} << 2 << "'--n-predict': '-1' is out of range";
    QTest::newRow("negative kv-window")
        << hi + QStringList{"--kv-window", "-5"} << 2 << "'--kv-window': '-5' is out of range";
    QTest::newRow("kv-bits 4") << hi + QStringList{"--kv-bits", "4"} << 2
                               << "'--kv-bits': 4 is not 8, 16 or 32";
    QTest::newRow("kv-bits 12") << hi + QStringList{"--kv-bits", "12"} << 2
                                << "'--kv-bits': 12 is not 8, 16 or 32";
    QTest::newRow("kv-bits word") << hi + QStringList{"--kv-bits", "eight"} << 2
                                  << "'eight' is not a whole number";
    QTest::newRow("empty prompt") << run + QStringList{"--prompt", ""} << 2 << "empty prompt";
    QTest::newRow("empty prompt file")
        << run + QStringList{"--prompt-file", "@EMPTY@"} << 2 << "empty prompt";
    QTest::newRow("prompt and prompt file") << hi + QStringList{"--prompt-file", "@PROMPT@"} << 2
                                            << "exactly one of --prompt and --prompt-file";
    QTest::newRow("no prompt") << run << 2 << "exactly one of --prompt and --prompt-file";
    QTest::newRow("greedy with temperature")
        << hi + QStringList{"--greedy", "--temp", "0.5"} << 2 << "'--greedy' excludes";
    QTest::newRow("temperature not a number")
        << hi + QStringList{"--temp", "hot"} << 2 << "'hot' is not a number";
    QTest::newRow("temperature nan")
        << hi + QStringList{"--temp", "nan"} << 2 << "'nan' is not a number";
    QTest::newRow("top-p above 1")
        << hi + QStringList{"--top-p", "1.5"} << 2 << "'--top-p': '1.5' is out of range";
    QTest::newRow("unknown positions") << hi + QStringList{"--positions", "sideways"} << 2
                                       << "'sideways' is not one of absolute, streaming";
    QTest::newRow("unknown sinks")
        << hi + QStringList{"--sinks", "all"} << 2 << "'all' is not one of bos, first:N, none";
    QTest::newRow("sinks first:x")
        << hi + QStringList{"--sinks", "first:x"} << 2 << "'x' is not a whole number";
    QTest::newRow("sinks first:0")
        << hi + QStringList{"--sinks", "first:0"} << 2 << "'0' is out of range";
    QTest::newRow("budget without shape")
        << QStringList{"budget"} << 2 << "'budget' needs --model FILE or --layers";
    QTest::newRow("budget partial shape")
        << QStringList{"budget", "--layers", "27", "--kv-heads", "6"} << 2
        << "'budget' needs option '--head-dim'";
    QTest::newRow("budget model and shape")
        << QStringList{"budget", "--model", "@MODEL@", "--layers", "2"} << 2 << "not both";
    QTest::newRow("budget zero layers")
        << QStringList{"budget",     "--layers",  "0",         "--kv-heads", "6",
                       "--head-dim", "64",        "--d-model", "768",        "--sites",
                       "2",          "--max-seq", "2048"}
        << 2 << "'--layers': '0' is out of range";
    QTest::newRow("bench threads")
        << QStringList{"bench", "--model", "@MODEL@", "--threads", "2"} << 2
        << "the engine decodes on one thread";
    QTest::newRow("tokenize without text")
        << QStringList{"tokenize", "--model", "@MODEL@"} << 2 << "'tokenize' needs option '--text'";
    QTest::newRow("perplexity without ctx")
        << QStringList{"perplexity", "--model", "@MODEL@", "--file", "@PROMPT@"} << 2
        << "'perplexity' needs option '--ctx'";
    QTest::newRow("perplexity ctx 3")
        << QStringList{"perplexity", "--model", "@MODEL@", "--file", "@PROMPT@", "--ctx", "3"} << 2
        << "'--ctx': '3' is out of range";
    QTest::newRow("bench -p word") << QStringList{"bench", "--model", "@MODEL@", "-p", "abc"} << 2
                                   << "'-p': 'abc' is not a whole number";
    QTest::newRow("bench zero repeats")
        << QStringList{"bench", "--model", "@MODEL@", "--repeat", "0"} << 2
        << "'--repeat': '0' is out of range";
    QTest::newRow("make-model without out")
        << QStringList{"make-model"} << 2 << "'make-model' needs option '--out'";
    QTest::newRow("make-model unknown type")
        << QStringList{"make-model", "--out", "@MISSING@", "--type", "q5_1"} << 2
        << "'q5_1' is not one of f32, f16, q8_0, q4_0";
    QTest::newRow("make-model unknown rope")
        << QStringList{"make-model", "--out", "@MISSING@", "--rope", "spiral"} << 2
        << "'spiral' is not one of adjacent, neox";
    QTest::newRow("make-model heads do not divide embd")
        << QStringList{"make-model", "--out", "@MISSING@", "--embd", "60", "--heads", "8"} << 2
        << "even head size";
    QTest::newRow("make-model kv-heads do not divide heads")
        << QStringList{"make-model", "--out", "@MISSING@", "--heads", "4", "--kv-heads", "3"} << 2
        << "multiple of --kv-heads 3";
    QTest::newRow("make-model q4_0 unaligned")
        << QStringList{"make-model", "--out",   "@MISSING@", "--type",     "q4_0", "--embd",
                       "48",         "--heads", "4",         "--kv-heads", "2"}
        << 2 << "multiples of 32";

    const QStringList streamPpl = {"stream-ppl", "--model", "@MODEL@", "--file", "@PROMPT@"};
    QTest::newRow("stream-ppl policy sink:x")
        << streamPpl + QStringList{"--policy", "dense", "--policy", "sink:x"} << 2
        << "option '--policy': policy 'sink:x': the sink count 'x' is not a whole number";
    QTest::newRow("stream-ppl unknown policy")
        << streamPpl + QStringList{"--policy=lru"} << 2
        << "policy 'lru' is not one of dense, window, sink:N, sink:N:streaming, recompute";
    QTest::newRow("stream-ppl policy without value")
        << streamPpl + QStringList{"--policy"} << 2 << "option '--policy' needs a value";
    QTest::newRow("stream-ppl window 0")
        << streamPpl + QStringList{"--window", "0"} << 2 << "'--window': '0' is out of range";
    QTest::newRow("stream-ppl window past the budget")
        << streamPpl + QStringList{"--window", "4096", "--policy", "sink:4"} << 2
        << "exceeds the model's budget window 2048";
    QTest::newRow("stream-ppl recompute-every 0")
        << streamPpl + QStringList{"--recompute-every", "0"} << 2
        << "'--recompute-every': '0' is out of range";
    QTest::newRow("stream-ppl kv-bits 4")
        << streamPpl + QStringList{"--kv-bits", "4"} << 2 << "'--kv-bits': 4 is not 8, 16 or 32";
    QTest::newRow("stream-ppl repeat 0")
        << streamPpl + QStringList{"--repeat", "0"} << 2 << "'--repeat': '0' is out of range";
    QTest::newRow("stream-ppl session option") << streamPpl + QStringList{"--sinks", "none"} << 2
                                               << "unknown option '--sinks' for 'stream-ppl'";
    QTest::newRow("stream-ppl without file") << QStringList{"stream-ppl", "--model", "@MODEL@"} << 2
                                             << "'stream-ppl' needs option '--file'";
    QTest::newRow("stream-ppl missing text")
        << QStringList{"stream-ppl", "--model", "@MODEL@", "--file", "@MISSING@"} << 3
        << "text file";
    QTest::newRow("stream-ppl empty text")
        << QStringList{"stream-ppl", "--model", "@MODEL@", "--file", "@EMPTY@"} << 3
        << "gives no token to score";
    QTest::newRow("stream-ppl truncated model")
        << QStringList{"stream-ppl", "--model", "@TRUNCATED@", "--file", "@PROMPT@"} << 3
        << "cannot load model";
    QTest::newRow("stream-ppl csv into a missing folder")
        << streamPpl + QStringList{"--csv", "@DIR@/no/such/folder/out.csv"} << 3
        << "cannot write CSV file";

    QTest::newRow("soak without --tokens")
        << QStringList{"soak", "--model", "@MODEL@"} << 2 << "'soak' needs option '--tokens'";
    QTest::newRow("soak of zero tokens")
        << QStringList{"soak", "--model", "@MODEL@", "--tokens", "0"} << 2
        << "option '--tokens': '0' is out of range";
    QTest::newRow("soak with truncated model")
        << QStringList{"soak", "--model", "@TRUNCATED@", "--tokens", "10"} << 3
        << "cannot load model";

    QTest::newRow("missing model file")
        << QStringList{"run", "--model", "@MISSING@", "--prompt", "hi"} << 3
        << "model '" + path("missing.gguf") + "' does not exist";
    QTest::newRow("model is a directory")
        << QStringList{"run", "--model", "@DIR@", "--prompt", "hi"} << 3 << "is a directory";
    QTest::newRow("model is plain text")
        << QStringList{"run", "--model", "@TEXT@", "--prompt", "hi"} << 3
        << "cannot load model '" + path("not-gguf.txt") + "': ";
    QTest::newRow("model is empty")
        << QStringList{"run", "--model", "@EMPTY@", "--prompt", "hi"} << 3 << "cannot load model";
    QTest::newRow("model is truncated")
        << QStringList{"run", "--model", "@TRUNCATED@", "--prompt", "hi"} << 3
        << "cannot load model";
    QTest::newRow("budget of plain text")
        << QStringList{"budget", "--model", "@TEXT@"} << 3 << "cannot load model";
    QTest::newRow("tokenize with truncated model")
        << QStringList{"tokenize", "--model", "@TRUNCATED@", "--text", "hi"} << 3
        << "cannot load model";
    QTest::newRow("perplexity with truncated model")
        << QStringList{"perplexity", "--model", "@TRUNCATED@", "--file", "@PROMPT@", "--ctx", "16"}
        << 3 << "cannot load model";
    QTest::newRow("bench on a directory")
        << QStringList{"bench", "--model", "@DIR@"} << 3 << "is a directory";
    QTest::newRow("missing prompt file")
        << run + QStringList{"--prompt-file", "@MISSING@"} << 3
        << "prompt file '" + path("missing.gguf") + "' does not exist";
    QTest::newRow("prompt file is a directory")
        << run + QStringList{"--prompt-file", "@DIR@"} << 3 << "prompt file";
    QTest::newRow("missing perplexity text")
        << QStringList{"perplexity", "--model", "@MODEL@", "--file", "@MISSING@", "--ctx", "16"}
        << 3 << "text file";
    QTest::newRow("perplexity text shorter than ctx")
        << QStringList{"perplexity", "--model", "@MODEL@", "--file", "@PROMPT@", "--ctx", "256"}
        << 3 << "fewer than one chunk";
    QTest::newRow("make-model into a missing folder")
        << QStringList{"make-model", "--out", "@DIR@/no/such/folder/model.gguf"} << 3
        << "cannot write model";
}

void TestCli::rejectsBadInput() {
    QFETCH(QStringList, args);
    QFETCH(int, exitCode);
    QFETCH(QString, message);
    args = withPlaceholders(args);
    const CliRun run = runCli(args);
    QVERIFY2(run.finished && !run.crashed, qPrintable(describe(run)));
    QVERIFY2(run.exitCode == exitCode, qPrintable(describe(run)));
    QVERIFY2(run.out.isEmpty(), run.out.constData());
    const QString err = QString::fromUtf8(run.err);
    QVERIFY2(err.startsWith("sinkscope-cli: error: "), qPrintable(err));
    QVERIFY2(err.endsWith('\n') && err.count('\n') == 1, qPrintable(err));
    QVERIFY2(err.contains(message), qPrintable(err));
}

void TestCli::makeModelReportsFileAndParameters() {
    const QString untied = path("params.gguf");
    const QString tied = path("params-tied.gguf");
    QJsonObject report;
    QJsonObject tiedReport;
    QVERIFY(runJson({"make-model", "--out", untied}, report));
    QVERIFY(runJson({"make-model", "--out", tied, "--tied"}, tiedReport));
    QCOMPARE(report["path"].toString(), untied);
    QCOMPARE(report["bytes"].toInteger(), QFileInfo(untied).size());
    QCOMPARE(tiedReport["bytes"].toInteger(), QFileInfo(tied).size());
    // Embedding, per layer two norms + wq, wk, wv, wo + gate, up, down, final norm, output.
    const qint64 perLayer = 2 * kEmbd + 2 * kEmbd * kEmbd + 2 * kKvDim * kEmbd + 3 * kFf * kEmbd;
    const qint64 expected = 2 * qint64(kVocab) * kEmbd + kLayers * perLayer + kEmbd;
    QCOMPARE(report["parameters"].toInteger(), expected);
    QCOMPARE(tiedReport["parameters"].toInteger(), expected - qint64(kVocab) * kEmbd);
    QCOMPARE(report["tied"].toBool(), false);
    QCOMPARE(tiedReport["tied"].toBool(), true);
}

void TestCli::makeModelIsDeterministic() {
    QJsonObject report;
    QVERIFY(runJson({"make-model", "--out", path("seed3-a.gguf"), "--seed", "3"}, report));
    QVERIFY(runJson({"make-model", "--out", path("seed3-b.gguf"), "--seed", "3"}, report));
    QVERIFY(runJson({"make-model", "--out", path("seed4.gguf"), "--seed", "4"}, report));
    const QByteArray a = readFile(path("seed3-a.gguf"));
    QVERIFY(!a.isEmpty());
    QCOMPARE(readFile(path("seed3-b.gguf")), a);
    const QByteArray other = readFile(path("seed4.gguf"));
    QCOMPARE(other.size(), a.size());
    QVERIFY(other != a);
}

void TestCli::syntheticVariantsRun_data() {
    QTest::addColumn<QStringList>("makeArgs");
    QTest::newRow("f16") << QStringList{"--type", "f16"};
    QTest::newRow("q8_0") << QStringList{"--type", "q8_0"};
    QTest::newRow("q4_0 neox") << QStringList{"--type", "q4_0", "--rope", "neox"};
    QTest::newRow("tied, wide heads")
        << QStringList{"--tied",   "--embd", "96",      "--heads", "6",     "--kv-heads", "3",
                       "--layers", "3",      "--vocab", "300",     "--ctx", "128"};
}

// Every weight type and shape make-model offers loads and generates the tokens asked for.
void TestCli::syntheticVariantsRun() {
    QFETCH(QStringList, makeArgs);
    const QString model = path(QStringLiteral("variant-%1.gguf").arg(QTest::currentDataTag()));
    QJsonObject made;
    QVERIFY(runJson(QStringList{"make-model", "--out", model} + makeArgs, made));
    QVERIFY(made["parameters"].toInteger() > 0);
    QJsonObject report;
    QVERIFY(runJson({"run", "--model", model, "--json", "--prompt", "abc", "--greedy",
                     "--ignore-eos", "--n-predict", "12"},
                    report));
    QCOMPARE(report["generated_ids"].toArray().size(), 12);
}

void TestCli::runJsonReportsCacheFigures_data() {
    QTest::addColumn<int>("kvWindow");
    QTest::addColumn<int>("kvBits");
    QTest::addColumn<QString>("sinks");
    QTest::addColumn<QString>("positions");
    QTest::addColumn<int>("nPredict");
    QTest::addColumn<int>("sinkSlots");
    QTest::newRow("window 8, int8, bos") << 8 << 8 << "bos"
                                         << "absolute" << 40 << 1;
    QTest::newRow("window 16, f16, first:4, streaming") << 16 << 16 << "first:4"
                                                        << "streaming" << 40 << 4;
    QTest::newRow("budget window, f32, no sinks") << 0 << 32 << "none"
                                                  << "absolute" << 10 << 0;
    QTest::newRow("window larger than the stream") << 300 << 8 << "none"
                                                   << "streaming" << 20 << 0;
}

void TestCli::runJsonReportsCacheFigures() {
    QFETCH(int, kvWindow);
    QFETCH(int, kvBits);
    QFETCH(QString, sinks);
    QFETCH(QString, positions);
    QFETCH(int, nPredict);
    QFETCH(int, sinkSlots);
    QJsonObject report;
    QVERIFY(runJson(
        runArgs({"--prompt", "Once upon a time there was a robot", "--greedy", "--ignore-eos",
                 "--n-predict", QString::number(nPredict), "--kv-window", QString::number(kvWindow),
                 "--kv-bits", QString::number(kvBits), "--sinks", sinks, "--positions", positions}),
        report));
    for (const char* field :
         {"text", "prompt_ids", "generated_ids", "budget_window", "effective_window", "sink_slots",
          "kv_bytes", "kv_budget_bytes", "evictions", "prefill_tokens_per_s", "decode_tokens_per_s",
          "peak_rss_bytes", "kv_bits", "positions", "sinks", "tokens_seen"})
        QVERIFY2(report.contains(field), field);

    const QList<int> promptIds = toIntList(report["prompt_ids"]);
    const QList<int> generatedIds = toIntList(report["generated_ids"]);
    QVERIFY(promptIds.size() > 3);
    QCOMPARE(promptIds.front(), 1); // BOS
    QCOMPARE(generatedIds.size(), nPredict);
    QVERIFY(std::ranges::all_of(generatedIds, [](int id) { return id >= 0 && id < kVocab; }));

    QCOMPARE(report["budget_window"].toInteger(), kSyntheticBudgetWindow);
    const qint64 window =
        kvWindow > 0 ? std::min(kvWindow, kSyntheticBudgetWindow) : kSyntheticBudgetWindow;
    QCOMPARE(report["effective_window"].toInteger(), window);
    QCOMPARE(report["sink_slots"].toInt(), sinkSlots);
    QCOMPARE(report["kv_bytes"].toInteger(),
             2 * kLayers * (sinkSlots + window) * rowBytes(kKvDim, kvBits));
    QCOMPARE(report["kv_budget_bytes"].toInteger(), kBudgetBytes);
    QCOMPARE(report["kv_bits"].toInt(), kvBits);
    QCOMPARE(report["positions"].toString(), positions);
    QCOMPARE(report["sinks"].toString(), sinks);

    // Every prompt and generated token went through the cache; the sinks are never evicted.
    const qint64 tokensSeen = report["tokens_seen"].toInteger();
    QCOMPARE(tokensSeen, qint64(promptIds.size() + generatedIds.size()));
    const qint64 sinksUsed = std::min<qint64>(sinkSlots, tokensSeen);
    QCOMPARE(report["sinks_used"].toInteger(), sinksUsed);
    QCOMPARE(report["evictions"].toInteger(), std::max<qint64>(0, tokensSeen - sinksUsed - window));

    QVERIFY(report["prefill_tokens_per_s"].toDouble() > 0);
    QVERIFY(report["decode_tokens_per_s"].toDouble() > 0);
    QVERIFY(report["peak_rss_bytes"].toInteger() > 1'000'000);
}

// The cache is allocated once: a longer generation evicts more but allocates nothing more.
void TestCli::kvBytesDoNotGrowWithLength() {
    const QStringList common = {"--prompt", "abc", "--greedy", "--ignore-eos", "--kv-window", "16"};
    QJsonObject shortRun;
    QJsonObject longRun;
    QVERIFY(runJson(runArgs(common + QStringList{"--n-predict", "1"}), shortRun));
    QVERIFY(runJson(runArgs(common + QStringList{"--n-predict", "80"}), longRun));
    QCOMPARE(longRun["kv_bytes"].toInteger(), shortRun["kv_bytes"].toInteger());
    QCOMPARE(shortRun["evictions"].toInteger(), 0);
    QVERIFY(longRun["evictions"].toInteger() > 60);
    // Greedy decoding is deterministic: the long run starts with the short run's token.
    QCOMPARE(toIntList(longRun["generated_ids"]).front(),
             toIntList(shortRun["generated_ids"]).front());
}

void TestCli::streamedTextMatchesJsonText() {
    const QStringList args = {
        "run",      "--model",     m_model, "--prompt-file", path("prompt.txt"),
        "--greedy", "--n-predict", "30",    "--ignore-eos"};
    const CliRun streamed = runCli(args);
    QVERIFY2(streamed.exitCode == 0, qPrintable(describe(streamed)));
    QVERIFY(streamed.err.isEmpty());
    QJsonObject report;
    QVERIFY(runJson(args + QStringList{"--json"}, report));
    QCOMPARE(QString::fromUtf8(streamed.out), report["text"].toString());
}

void TestCli::samplingFollowsTheSeed() {
    const QStringList sampling = {"--prompt", "abc",     "--ignore-eos", "--n-predict",
                                  "40",       "--temp",  "1.5",          "--top-k",
                                  "50",       "--top-p", "0.95"};
    QJsonObject seed5;
    QJsonObject seed5Again;
    QJsonObject seed6;
    QVERIFY(runJson(runArgs(sampling + QStringList{"--seed", "5"}), seed5));
    QVERIFY(runJson(runArgs(sampling + QStringList{"--seed", "5"}), seed5Again));
    QVERIFY(runJson(runArgs(sampling + QStringList{"--seed", "6"}), seed6));
    QCOMPARE(seed5["generated_ids"].toArray().size(), 40);
    QCOMPARE(seed5Again["generated_ids"], seed5["generated_ids"]);
    QVERIFY(seed6["generated_ids"] != seed5["generated_ids"]);

    // Temperature 0 is greedy decoding.
    const QStringList greedyArgs = {"--prompt", "abc", "--ignore-eos", "--n-predict", "40"};
    QJsonObject zeroTemperature;
    QJsonObject greedy;
    QVERIFY(runJson(runArgs(greedyArgs + QStringList{"--temp", "0"}), zeroTemperature));
    QVERIFY(runJson(runArgs(greedyArgs + QStringList{"--greedy"}), greedy));
    QCOMPARE(zeroTemperature["generated_ids"], greedy["generated_ids"]);
}

void TestCli::budgetMatchesSpecTable_data() {
    QTest::addColumn<QStringList>("shape"); // layers, kv heads, head dim, d_model, sites, max seq
    QTest::addColumn<int>("kvWindow");      // -1: not given
    QTest::addColumn<qint64>("perPos");
    QTest::addColumn<qint64>("budgetWindow");
    QTest::addColumn<qint64>("effectiveWindow");
    const QStringList needle = {"27", "6", "64", "768", "2", "2048"};
    const QStringList base = {"27", "4", "64", "512", "2", "2048"};
    QTest::newRow("needle") << needle << -1 << 25056LL << 480LL << 480LL;
    QTest::newRow("needle, kv-window 256") << needle << 256 << 25056LL << 480LL << 256LL;
    QTest::newRow("base") << base << -1 << 16704LL << 704LL << 704LL;
    QTest::newRow("base, kv-window 256") << base << 256 << 16704LL << 704LL << 256LL;
    QTest::newRow("base, kv-window 0 = budget") << base << 0 << 16704LL << 704LL << 704LL;
    QTest::newRow("base, kv-window above budget") << base << 5000 << 16704LL << 704LL << 704LL;
    QTest::newRow("stories260K shape")
        << QStringList{"5", "4", "8", "64", "0", "2048"} << -1 << 360LL << 2048LL << 2048LL;
    // 1000 * (2*8192 + 2*256*4) bytes a position: the budget holds none, the floor is 160.
    QTest::newRow("over budget: floor 160") << QStringList{"1000", "64", "128", "8192", "0", "4096"}
                                            << -1 << 18432000LL << 160LL << 160LL;
    QTest::newRow("short max-seq: floor 160")
        << QStringList{"5", "4", "8", "64", "0", "100"} << -1 << 360LL << 160LL << 160LL;
}

void TestCli::budgetMatchesSpecTable() {
    QFETCH(QStringList, shape);
    QFETCH(int, kvWindow);
    QFETCH(qint64, perPos);
    QFETCH(qint64, budgetWindow);
    QFETCH(qint64, effectiveWindow);
    QStringList args = {"budget"};
    const QStringList names = {"--layers",  "--kv-heads", "--head-dim",
                               "--d-model", "--sites",    "--max-seq"};
    for (qsizetype i = 0; i < names.size(); ++i)
        args << names[i] << shape[i];
    if (kvWindow >= 0) args << "--kv-window" << QString::number(kvWindow);
    QJsonObject report;
    QVERIFY(runJson(args, report));
    QCOMPARE(report["per_pos"].toInteger(), perPos);
    QCOMPARE(report["budget_window"].toInteger(), budgetWindow);
    QCOMPARE(report["effective_window"].toInteger(), effectiveWindow);
}

void TestCli::budgetOfModelFiles() {
    // make-model's default: 2 layers * 2 * (32 + 4) bytes; the trained context caps the window.
    QJsonObject synthetic;
    QVERIFY(runJson({"budget", "--model", m_model, "--kv-window", "100"}, synthetic));
    QCOMPARE(synthetic["per_pos"].toInteger(), 144);
    QCOMPARE(synthetic["budget_window"].toInteger(), kSyntheticBudgetWindow);
    QCOMPARE(synthetic["effective_window"].toInteger(), 100);

    SINKSCOPE_REQUIRE_STORIES();
    QJsonObject stories;
    QVERIFY(runJson({"budget", "--model", sinkscope::test::storiesModelPath()}, stories));
    QCOMPARE(stories["per_pos"].toInteger(), 360);
    QCOMPARE(stories["budget_window"].toInteger(), 2048);
    QCOMPARE(stories["effective_window"].toInteger(), 2048);
}

void TestCli::tokenizeMatchesLlamaCpp() {
    SINKSCOPE_REQUIRE_STORIES();
    const QString model = sinkscope::test::storiesModelPath();
    QJsonObject hello;
    QVERIFY(runJson({"tokenize", "--model", model, "--text", "Hello, world!"}, hello));
    QCOMPARE(toIntList(hello["ids"]), (QList<int>{1, 346, 306, 414, 432, 263, 304, 341, 443}));
    const QJsonArray pieces = hello["pieces"].toArray();
    QCOMPARE(pieces.size(), 9);
    QCOMPARE(pieces.first().toString(), QStringLiteral("<s>"));

    const QJsonObject reference =
        QJsonDocument::fromJson(readFile(sharedPath("reference/stories260K-llamacpp.json")))
            .object();
    const QJsonArray cases = reference["tokenize"].toArray();
    QVERIFY(cases.size() >= 2);
    for (const QJsonValue& entry : cases) {
        const QString text = entry["text"].toString();
        QJsonObject report;
        QVERIFY(runJson({"tokenize", "--model", model, "--text", text}, report));
        QVERIFY2(report["ids"] == entry["ids"], qPrintable(text));
    }
}

// Chunk bookkeeping, and the window only matters once the chunk outgrows it.
void TestCli::perplexityOfSyntheticModel() {
    QByteArray text;
    for (int i = 0; i < 12; ++i)
        text += "The small robot rolled to the pond and looked at the boat. ";
    writeFile(path("synthetic-eval.txt"), text);
    const QStringList args = {
        "perplexity", "--model", m_model,     "--file", path("synthetic-eval.txt"),
        "--ctx",      "16",      "--kv-bits", "32"};
    QJsonObject report;
    QVERIFY(runJson(args, report));
    const qint64 textTokens = report["text_tokens"].toInteger();
    QVERIFY(textTokens > 48);
    QCOMPARE(report["chunks"].toInteger(), textTokens / 16);
    QCOMPARE(report["tokens"].toInteger(), report["chunks"].toInteger() * (16 - 1 - 8));
    const double ppl = report["ppl"].toDouble();
    QVERIFY2(std::isfinite(ppl) && ppl > 1, qPrintable(QString::number(ppl)));
    QCOMPARE(report["effective_window"].toInteger(), kSyntheticBudgetWindow);

    // 15 tokens are fed per chunk: a window of 15 holds them all and changes nothing.
    QJsonObject fits;
    QVERIFY(runJson(args + QStringList{"--kv-window", "15"}, fits));
    QVERIFY(std::abs(fits["ppl"].toDouble() - ppl) < 1e-9);
    QJsonObject narrow;
    QVERIFY(runJson(args + QStringList{"--kv-window", "4"}, narrow));
    QVERIFY(narrow["ppl"].toDouble() != ppl);
}

void TestCli::perplexityMatchesLlamaCpp_data() {
    QTest::addColumn<QStringList>("extra");
    QTest::addColumn<int>("kvBits");
    QTest::addColumn<double>("tolerance");
    QTest::newRow("default: f32 cache") << QStringList{} << 32 << 0.002;
    QTest::newRow("f16 cache, as llama-perplexity")
        << QStringList{"--kv-bits", "16"} << 16 << 0.002;
    // int8 keys and values cost about 0.008 here; the bound keeps that loss small.
    QTest::newRow("int8 cache") << QStringList{"--kv-bits", "8"} << 8 << 0.02;
}

void TestCli::perplexityMatchesLlamaCpp() {
    QFETCH(QStringList, extra);
    QFETCH(int, kvBits);
    QFETCH(double, tolerance);
    SINKSCOPE_REQUIRE_STORIES();
    QJsonObject report;
    QVERIFY(runJson(QStringList{"perplexity", "--model", sinkscope::test::storiesModelPath(),
                                "--file", sharedPath("text/stories-eval.txt"), "--ctx", "256"} +
                        extra,
                    report));
    const double ppl = report["ppl"].toDouble();
    QVERIFY2(std::abs(ppl - 4.9200) < tolerance, qPrintable(QString::number(ppl, 'f', 5)));
    QCOMPARE(report["kv_bits"].toInt(), kvBits);
    QCOMPARE(report["effective_window"].toInteger(), 2048);
    QCOMPARE(report["chunks"].toInteger(), report["text_tokens"].toInteger() / 256);
    QVERIFY(report["chunks"].toInteger() >= 1);
    QCOMPARE(report["tokens"].toInteger(), report["chunks"].toInteger() * 127);
}

void TestCli::greedyRunMatchesLlamaCpp() {
    SINKSCOPE_REQUIRE_STORIES();
    const QJsonObject reference =
        QJsonDocument::fromJson(readFile(sharedPath("reference/stories260K-llamacpp.json")))
            .object();
    const QJsonArray cases = reference["greedy"].toObject()["cases"].toArray();
    QVERIFY(!cases.isEmpty());
    for (const QJsonValue& entry : cases) {
        const QString prompt = entry["prompt"].toString();
        QJsonObject report;
        QVERIFY(runJson({"run", "--model", sinkscope::test::storiesModelPath(), "--json",
                         "--prompt", prompt, "--greedy", "--n-predict", "64", "--kv-window", "0",
                         "--kv-bits", "32"},
                        report));
        QVERIFY2(report["prompt_ids"] == entry["prompt_ids"], qPrintable(prompt));
        QVERIFY2(report["generated_ids"] == entry["generated_ids"], qPrintable(prompt));
        QCOMPARE(report["text"].toString(), entry["continuation"].toString());
    }
}

void TestCli::benchReportsSpeeds() {
    QJsonObject report;
    QVERIFY(runJson(
        {"bench", "--model", m_model, "-p", "16", "-n", "8", "--threads", "1", "--repeat", "2"},
        report));
    QCOMPARE(report["n_prompt"].toInt(), 16);
    QCOMPARE(report["n_gen"].toInt(), 8);
    QCOMPARE(report["threads"].toInt(), 1);
    QVERIFY(report["prefill_tokens_per_s"].toDouble() > 0);
    QVERIFY(report["decode_tokens_per_s"].toDouble() > 0);
    QVERIFY(report["peak_rss_bytes"].toInteger() > 1'000'000);
    QCOMPARE(report["effective_window"].toInteger(), kSyntheticBudgetWindow);
    QCOMPARE(report["kv_bytes"].toInteger(),
             2 * kLayers * (1 + kSyntheticBudgetWindow) * rowBytes(kKvDim, 8));
}

QStringList TestCli::streamPplArgs() const {
    const QStringList policies = {"--policy",         "dense",    "--policy=sink:2", "--policy",
                                  "sink:2:streaming", "--policy", "recompute"};
    return QStringList{"stream-ppl", "--model", m_model, "--file", path("stream.txt")} +
           QStringList{"--policy", "window", "--repeat", "3", "--window", "16"} + policies +
           QStringList{"--recompute-every", "3", "--kv-bits", "8"};
}

// The policies asked for, in the order given, each over the whole repeated stream (recompute over
// every third position), with the cache each holds; the CSV has a row per evaluated position.
void TestCli::streamPplReportsEveryPolicy() {
    const QString csvPath = path("stream.csv");
    QJsonObject report;
    QVERIFY(runJson(streamPplArgs() + QStringList{"--csv", csvPath, "--json"}, report));
    QCOMPARE(report["repeat"].toInt(), 3);
    QCOMPARE(report["window"].toInt(), 16);
    QCOMPARE(report["kv_bits"].toInt(), 8);
    QCOMPARE(report["recompute_every"].toInt(), 3);
    QCOMPARE(report["rolling_span"].toInt(), 256);
    QCOMPARE(report["csv"].toString(), csvPath);
    const qint64 textTokens = report["text_tokens"].toInteger();
    const qint64 streamTokens = report["stream_tokens"].toInteger();
    QVERIFY(textTokens > 10);
    // BOS + three copies, tokenized as one text: the joins may merge a piece or two.
    QVERIFY2(std::abs(streamTokens - (1 + 3 * textTokens)) <= 3,
             qPrintable(QString::number(streamTokens)));

    const qint64 positions = streamTokens - 1;
    const qint64 row = rowBytes(kKvDim, 8);
    const QList<std::tuple<QString, qint64, qint64>> expected = {
        // policy, positions evaluated, cache slots
        {"window", positions, 16},
        {"dense", positions, positions},
        {"sink:2", positions, 18},
        {"sink:2:streaming", positions, 18},
        {"recompute", (positions + 2) / 3, 16},
    };
    const QJsonArray policies = report["policies"].toArray();
    QCOMPARE(policies.size(), expected.size());
    qint64 rows = 0;
    for (qsizetype i = 0; i < policies.size(); ++i) {
        const QJsonObject policy = policies[i].toObject();
        const auto& [name, evaluated, slotCount] = expected[i];
        QCOMPARE(policy["policy"].toString(), name);
        QCOMPARE(policy["positions_evaluated"].toInteger(), evaluated);
        QCOMPARE(policy["kv_bytes"].toInteger(), 2 * kLayers * slotCount * row);
        const double ppl = policy["ppl"].toDouble();
        QVERIFY2(std::isfinite(ppl) && ppl > 1, qPrintable(name));
        // Fewer than 1,000 positions: the last 1,000 are all of them.
        QCOMPARE(policy["ppl_last_1000"].toDouble(), ppl);
        QVERIFY(policy["tokens_per_s"].toDouble() > 0);
        QCOMPARE(policy.contains("every"), name == "recompute");
        rows += evaluated;
    }
    // Up to the window, window and dense see the same tokens; past it, not.
    QVERIFY(policies[0].toObject()["ppl"] != policies[1].toObject()["ppl"]);

    const QList<QByteArray> lines = readFile(csvPath).split('\n');
    QCOMPARE(lines.front(), QByteArray("position,policy,nll,rolling_ppl"));
    QCOMPARE(lines.back(), QByteArray()); // ends with a newline
    QCOMPARE(lines.size() - 2, rows);
    QCOMPARE(lines[1].split(',').mid(0, 2), (QList<QByteArray>{"0", "window"}));
}

void TestCli::streamPplPrintsTable() {
    const QStringList args = streamPplArgs();
    const CliRun run = runCli(args);
    QVERIFY2(run.exitCode == 0, qPrintable(describe(run)));
    QVERIFY(run.err.isEmpty());
    const QString table = QString::fromUtf8(run.out);
    QVERIFY2(table.contains("repeated 3 times"), qPrintable(table));
    QVERIFY2(table.contains("recompute (every 3 positions)"), qPrintable(table));
    for (const char* column : {"policy", "ppl", "last 1000", "tokens/s", "kv_bytes"})
        QVERIFY2(table.contains(column), column);
    for (const char* name : {"\ndense ", "\nwindow ", "\nsink:2 ", "\nsink:2:streaming "})
        QVERIFY2(table.contains(name), name);

    const CliRun help = runCli({"help"});
    QVERIFY(help.out.contains("\n  stream-ppl --model FILE --file TEXT"));
}

void TestCli::soakKeepsInvariantsAndFlatMemory_data() {
    QTest::addColumn<QStringList>("options");
    QTest::addColumn<int>("window");
    QTest::addColumn<int>("sinkSlots");
    QTest::addColumn<int>("kvBits");
    QTest::newRow("defaults: window 64, BOS sink, int8") << QStringList{} << 64 << 1 << 8;
    QTest::newRow("first:4 sinks, f16, streaming")
        << QStringList{"--sinks", "first:4", "--kv-bits", "16", "--positions", "streaming"} << 64
        << 4 << 16;
    QTest::newRow("no sinks, window 7, f32")
        << QStringList{"--sinks", "none", "--kv-window", "7", "--kv-bits", "32"} << 7 << 0 << 32;
}

// Every step's cache checked against the spec inside the CLI; the report's own figures agree
// with the formulas, and memory after warm-up stays within the issue's 1 MiB.
void TestCli::soakKeepsInvariantsAndFlatMemory() {
    QFETCH(QStringList, options);
    QFETCH(int, window);
    QFETCH(int, sinkSlots);
    QFETCH(int, kvBits);
    constexpr qint64 kTokens = 3000;
    QJsonObject report;
    QVERIFY(runJson(QStringList{"soak", "--model", m_model, "--tokens", QString::number(kTokens),
                                "--seed", "7", "--json"} +
                        options,
                    report));
    QCOMPARE(report["tokens"].toInteger(), kTokens);
    QCOMPARE(report["invariant_violations"].toInteger(), 0);
    QCOMPARE(report["effective_window"].toInteger(), window);
    QCOMPARE(report["sink_slots"].toInt(), sinkSlots);
    QCOMPARE(report["kv_bytes"].toInteger(),
             2 * kLayers * (sinkSlots + window) * rowBytes(kKvDim, kvBits));
    // BOS and kTokens sampled tokens went through the cache; all but the sinks and the window
    // were evicted.
    QCOMPARE(report["evictions"].toInteger(), kTokens + 1 - sinkSlots - window);
    QCOMPARE(report["warmup_tokens"].toInteger(), kTokens / 10);
    const qint64 start = report["rss_start_bytes"].toInteger();
    const qint64 end = report["rss_end_bytes"].toInteger();
    QVERIFY(start > 1'000'000);
    QCOMPARE(report["rss_growth_bytes"].toInteger(), end - start);
#ifndef SINKSCOPE_SANITIZED // ASan keeps freed blocks in quarantine: RSS grows by design there
    QVERIFY2(end - start <= 1024 * 1024, qPrintable(QString::number(end - start)));
#endif
    QVERIFY(report["tokens_per_s"].toDouble() > 0);
}

void TestCli::soakReportsRssEveryTenThousandTokens() {
    const QStringList args = {"soak", "--model", m_model, "--tokens", "10000", "--json"};
    const CliRun run = runCli(args);
    QVERIFY2(run.finished && !run.crashed && run.exitCode == 0, qPrintable(describe(run)));
    const QList<QByteArray> lines = run.err.trimmed().split('\n');
    QCOMPARE(lines.size(), 1);
    const QJsonObject progress = QJsonDocument::fromJson(lines.front()).object();
    QCOMPARE(progress["tokens"].toInteger(), 10000);
    QVERIFY(progress["rss_bytes"].toInteger() > 1'000'000);
    QCOMPARE(progress["invariant_violations"].toInteger(), 0);
    QCOMPARE(QJsonDocument::fromJson(run.out).object()["tokens"].toInteger(), 10000);
}

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
