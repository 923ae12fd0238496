// sinkscope-cli make-model and run: every synthetic variant, run's JSON cache figures, the seed.
#include "cli_fixture.h"

#include <QFileInfo>
#include <QtTest>

#include <algorithm>

using namespace sinkscope::test;

class TestCliGenerate : public QObject, public CliFixture {
    Q_OBJECT

private slots:
    void initTestCase() { makeFiles(); }

    void makeModelReportsFileAndParameters();
    void makeModelIsDeterministic();
    void syntheticVariantsRun_data();
    void syntheticVariantsRun();

    void runJsonReportsCacheFigures_data();
    void runJsonReportsCacheFigures();
    void kvBytesDoNotGrowWithLength();
    void streamedTextMatchesJsonText();
    void samplingFollowsTheSeed();

private:
    QStringList runArgs(const QStringList& extra) const;
};

QStringList TestCliGenerate::runArgs(const QStringList& extra) const {
    return QStringList{"run", "--model", m_model, "--json"} + extra;
}

void TestCliGenerate::makeModelReportsFileAndParameters() {
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

void TestCliGenerate::makeModelIsDeterministic() {
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

void TestCliGenerate::syntheticVariantsRun_data() {
    QTest::addColumn<QStringList>("makeArgs");
    QTest::newRow("f16") << QStringList{"--type", "f16"};
    QTest::newRow("q8_0") << QStringList{"--type", "q8_0"};
    QTest::newRow("q4_0 neox") << QStringList{"--type", "q4_0", "--rope", "neox"};
    QTest::newRow("tied, wide heads")
        << QStringList{"--tied",   "--embd", "96",      "--heads", "6",     "--kv-heads", "3",
                       "--layers", "3",      "--vocab", "300",     "--ctx", "128"};
}

// Every weight type and shape make-model offers loads and generates the tokens asked for.
void TestCliGenerate::syntheticVariantsRun() {
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

void TestCliGenerate::runJsonReportsCacheFigures_data() {
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

void TestCliGenerate::runJsonReportsCacheFigures() {
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
void TestCliGenerate::kvBytesDoNotGrowWithLength() {
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

void TestCliGenerate::streamedTextMatchesJsonText() {
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

void TestCliGenerate::samplingFollowsTheSeed() {
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

QTEST_GUILESS_MAIN(TestCliGenerate)
#include "test_cli_generate.moc"
