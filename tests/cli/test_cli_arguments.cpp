// sinkscope-cli's help and bad input: usage, and each bad option or file as exit 2 or 3, one line.
#include "cli_fixture.h"

#include <QtTest>

#include <utility>

using namespace sinkscope::test;

class TestCliArguments : public QObject, public CliFixture {
    Q_OBJECT

private slots:
    void initTestCase() { makeFiles(); }

    void helpPrintsUsage_data();
    void helpPrintsUsage();
    void noArgumentsIsUsageError();
    void rejectsBadInput_data();
    void rejectsBadInput();

private:
    QStringList withPlaceholders(QStringList args) const;
};

// @MODEL@ and friends stand for the files initTestCase made, so the data table reads plainly.
QStringList TestCliArguments::withPlaceholders(QStringList args) const {
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

void TestCliArguments::helpPrintsUsage_data() {
    QTest::addColumn<QStringList>("args");
    QTest::newRow("help") << QStringList{"help"};
    QTest::newRow("--help") << QStringList{"--help"};
    QTest::newRow("run --help") << QStringList{"run", "--help"};
}

void TestCliArguments::helpPrintsUsage() {
    QFETCH(QStringList, args);
    const CliRun run = runCli(args);
    QVERIFY2(run.exitCode == 0, qPrintable(describe(run)));
    QVERIFY(run.err.isEmpty());
    QVERIFY(run.out.startsWith("usage: sinkscope-cli"));
    for (const char* command :
         {"run", "budget", "tokenize", "perplexity", "bench", "make-model", "eval-tools"})
        QVERIFY2(run.out.contains(QByteArray("\n  ") + command + ' '), command);
}

void TestCliArguments::noArgumentsIsUsageError() {
    const CliRun run = runCli({});
    QCOMPARE(run.exitCode, 2);
    QVERIFY(run.out.isEmpty());
    QVERIFY(run.err.startsWith("usage: sinkscope-cli"));
}

void TestCliArguments::rejectsBadInput_data() {
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
    QTest::newRow("bench no threads")
        << QStringList{"bench", "--model", "@MODEL@", "--threads", "0"} << 2
        << "'--threads': '0' is out of range";
    QTest::newRow("run too many threads")
        << QStringList{"run", "--model", "@MODEL@", "--prompt", "x", "--threads", "257"} << 2
        << "'--threads': '257' is out of range";
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

void TestCliArguments::rejectsBadInput() {
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

QTEST_GUILESS_MAIN(TestCliArguments)
#include "test_cli_arguments.moc"
