// sinkscope-cli budget, tokenize, perplexity, bench, stream-ppl, soak vs the spec and llama.cpp.
#include "cli_fixture.h"

#include <QFileInfo>
#include <QtTest>

#include <cmath>
#include <tuple>

using namespace sinkscope::test;

class TestCliMeasure : public QObject, public CliFixture {
    Q_OBJECT

private slots:
    void initTestCase() { makeFiles(); }

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
    QStringList streamPplArgs() const;
};

void TestCliMeasure::budgetMatchesSpecTable_data() {
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

void TestCliMeasure::budgetMatchesSpecTable() {
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

void TestCliMeasure::budgetOfModelFiles() {
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

void TestCliMeasure::tokenizeMatchesLlamaCpp() {
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
void TestCliMeasure::perplexityOfSyntheticModel() {
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
    // Threads split the products; every logit keeps its bits.
    QJsonObject threaded;
    QVERIFY(runJson(args + QStringList{"--threads", "3"}, threaded));
    QCOMPARE(threaded["ppl"].toDouble(), ppl);
}

void TestCliMeasure::perplexityMatchesLlamaCpp_data() {
    QTest::addColumn<QStringList>("extra");
    QTest::addColumn<int>("kvBits");
    QTest::addColumn<double>("tolerance");
    QTest::newRow("default: f32 cache") << QStringList{} << 32 << 0.002;
    QTest::newRow("f16 cache, as llama-perplexity")
        << QStringList{"--kv-bits", "16"} << 16 << 0.002;
    // int8 keys and values cost about 0.008 here; the bound keeps that loss small.
    QTest::newRow("int8 cache") << QStringList{"--kv-bits", "8"} << 8 << 0.02;
}

void TestCliMeasure::perplexityMatchesLlamaCpp() {
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

void TestCliMeasure::greedyRunMatchesLlamaCpp() {
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

void TestCliMeasure::benchReportsSpeeds() {
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
    QCOMPARE(report["depth"].toInt(), 0);
    QCOMPARE(report["model_bytes"].toInteger(), QFileInfo(m_model).size());
    QVERIFY(report["model_parameters"].toInteger() > 0);
    QVERIFY(report["weight_types"].toObject()["F32"].toInt() > 0);
    QVERIFY(QStringList({"portable", "avx2", "avx512", "avx512vnni", "avx512amx"})
                .contains(report["kernels"].toString()));
    QVERIFY(QStringList({"grouped", "single"}).contains(report["row_streams"].toString()));

    // At a depth past the window the cache is full and evicting: the same bytes, speeds measured.
    QJsonObject deep;
    QVERIFY(runJson({"bench", "--model", m_model, "-p", "4", "-n", "8", "--depth", "300",
                     "--kv-window", "64", "--threads", "2", "--repeat", "1"},
                    deep));
    QCOMPARE(deep["depth"].toInt(), 300);
    QCOMPARE(deep["threads"].toInt(), 2);
    QCOMPARE(deep["effective_window"].toInteger(), 64);
    QVERIFY(deep["decode_tokens_per_s"].toDouble() > 0);

    // After a pinned tool block: the block run --tools pins, on the same window.
    writeFile(path("bench-tools.json"),
              R"([{"name":"set_light","description":"Turn a light on or off",)"
              R"("parameters":{"type":"object","properties":{"room":{"type":"string"}}}}])");
    QJsonObject pinned;
    QVERIFY(runJson({"bench", "--model", m_model, "-p", "4", "-n", "8", "--tools",
                     path("bench-tools.json"), "--probe", "--repeat", "1"},
                    pinned));
    QJsonObject turn;
    QVERIFY(runJson({"run", "--model", m_model, "--tools", path("bench-tools.json"), "--prompt",
                     "Turn on the light", "--n-predict", "4", "--json"},
                    turn));
    QVERIFY(turn["sink_tokens"].toInt() > 10);
    QCOMPARE(pinned["sink_tokens"].toInt(), turn["sink_tokens"].toInt());
    QCOMPARE(pinned["effective_window"].toInteger(), turn["effective_window"].toInteger());
    QCOMPARE(pinned["probe"].toBool(), true);
    QVERIFY(pinned["decode_tokens_per_s"].toDouble() > 0);
    QCOMPARE(deep["sink_tokens"].toInt(), 0);
}

QStringList TestCliMeasure::streamPplArgs() const {
    const QStringList policies = {"--policy",         "dense",    "--policy=sink:2", "--policy",
                                  "sink:2:streaming", "--policy", "recompute"};
    return QStringList{"stream-ppl", "--model", m_model, "--file", path("stream.txt")} +
           QStringList{"--policy", "window", "--repeat", "3", "--window", "16"} + policies +
           QStringList{"--recompute-every", "3", "--kv-bits", "8"};
}

// The policies asked for, in the order given, each over the whole repeated stream (recompute over
// every third position), with the cache each holds; the CSV has a row per evaluated position.
void TestCliMeasure::streamPplReportsEveryPolicy() {
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

void TestCliMeasure::streamPplPrintsTable() {
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

void TestCliMeasure::soakKeepsInvariantsAndFlatMemory_data() {
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
void TestCliMeasure::soakKeepsInvariantsAndFlatMemory() {
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

void TestCliMeasure::soakReportsRssEveryTenThousandTokens() {
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

QTEST_GUILESS_MAIN(TestCliMeasure)
#include "test_cli_measure.moc"
