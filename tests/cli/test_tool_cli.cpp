// sinkscope-cli run --tools as scripts see it: Needle's response shape with the run fields, calls
// that validate against the file's tools, and bad tools files as exit 3 with the schema message.
#include "cli_run.h"
#include "model/synthetic.h"
#include "tool_test_support.h"
#include "tools/tool_calls.h"
#include "tools/tool_preset.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

namespace {

using sinkscope::test::CliRun;
using sinkscope::test::describe;
using sinkscope::test::runCli;

QString presetPath(const char* file) {
    return QFINDTESTDATA(QStringLiteral("../resources/presets/%1").arg(file));
}

sinkscope::ToolSet presetTools(const char* file) {
    QFile preset(presetPath(file));
    if (!preset.open(QIODevice::ReadOnly)) qFatal("cannot read %s", file);
    return sinkscope::parsePreset(preset.readAll().toStdString()).preset->tools;
}

} // namespace

class TestToolCli : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_model; // synthetic, with Needle's markers: the Needle layout

    QString writeFile(const QString& name, const QByteArray& bytes) {
        QFile file(m_dir.filePath(name));
        if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size())
            qFatal("cannot write %s", qPrintable(name));
        return file.fileName();
    }

    QJsonObject runJson(const QStringList& extra) {
        const QStringList args =
            QStringList{"run", "--model", m_model, "--kv-window", "32", "--json"} + extra;
        const CliRun run = runCli(args);
        if (run.exitCode != 0 || run.crashed) {
            qWarning("%s", qPrintable(describe(run)));
            return {};
        }
        return QJsonDocument::fromJson(run.out).object();
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        m_model = m_dir.filePath("needle-markers.gguf");
        std::string error;
        QVERIFY2(sinkscope::writeSyntheticModel(sinkscope::test::smallSpec(true),
                                                m_model.toStdString(), error),
                 error.c_str());
    }

    void printsTheResponseShape() {
        const QJsonObject r = runJson(
            {"--tools", presetPath("smart_home.json"), "--call", "required", "--seed", "2"});
        QVERIFY(!r.isEmpty());
        QCOMPARE(r["type"].toString(), QString("call"));
        QCOMPARE(r["layout"].toString(), QString("needle"));
        QCOMPARE(r["template_family"].toString(), QString("Needle (built in)"));
        QVERIFY(r["error"].isNull());
        QVERIFY(r["text"].isString());
        QVERIFY(r["confidence"].toDouble() > 0 && r["confidence"].toDouble() <= 1);
        QVERIFY(r["prefill_tokens_per_s"].toDouble() > 0);
        QVERIFY(r["decode_tokens_per_s"].toDouble() > 0);
        QVERIFY(r["mask_us_per_token"].toDouble() > 0);
        const QJsonArray calls = r["function_calls"].toArray();
        QVERIFY(!calls.isEmpty());
        QCOMPARE(r["attribution"].toArray().size(), calls.size());
        for (const QJsonValue& share : r["attribution"].toArray()) {
            const QJsonObject shares = share.toObject();
            QCOMPARE(shares.keys(),
                     (QStringList{"lock_door", "other", "set_light", "set_thermostat"}));
            double total = 0;
            for (const QJsonValue& value : shares)
                total += value.toDouble();
            QVERIFY(std::abs(total - 1) < 1e-4);
        }
        // the calls validate against the file's tools
        const sinkscope::ToolSet tools = presetTools("smart_home.json");
        const std::string callText = r["call_text"].toString().toStdString();
        const sinkscope::CallsParseResult parsed = sinkscope::parseCalls(callText, tools);
        QVERIFY2(parsed.ok(), callText.c_str());
        QCOMPARE(int(parsed.calls.size()), calls.size());
        QCOMPARE(calls[0].toObject()["name"].toString().toStdString(), parsed.calls[0].name);
        // the sink block and the per-tool tokens
        const QJsonObject perTool = r["tool_tokens"].toObject();
        QCOMPARE(perTool.keys(), (QStringList{"lock_door", "set_light", "set_thermostat"}));
        int toolTokens = 0;
        for (const QJsonValue& count : perTool)
            toolTokens += count.toInt();
        QVERIFY(toolTokens > 0 && toolTokens < r["sink_tokens"].toInt());
        QCOMPARE(r["sink_slots"].toInt(), r["sink_tokens"].toInt());
        QCOMPARE(r["sinks_used"].toInt(), r["sink_tokens"].toInt());
        // per position: 1 layer * (2 * 16 + 2 * (16 / 32) * 4) = 32 bytes (the budget formula)
        QCOMPARE(r["kv_bytes_sinks_and_window"].toInteger(),
                 32 * (r["sink_slots"].toInteger() + 32));
        QVERIFY(!r["kv_over_budget"].toBool());
        QCOMPARE(r["tokens_seen"].toInt(),
                 r["prompt_ids"].toArray().size() + r["generated_ids"].toArray().size());
        QCOMPARE(r["warnings"].toArray().size(), 0);
        QCOMPARE(r["effective_window"].toInt(), 32);
    }

    void optionsShapeTheTurn() {
        const QJsonObject none = runJson(
            {"--tools", presetPath("off_topic.json"), "--call", "none", "--n-predict", "8"});
        QCOMPARE(none["type"].toString(), QString("text"));
        QCOMPARE(none["function_calls"].toArray().size(), 0);
        QCOMPARE(none["call_policy"].toString(), QString("none"));
        const QJsonObject free =
            runJson({"--tools", presetPath("currency.json"), "--call", "required", "--constrained",
                     "off", "--n-predict", "20", "--prompt", "Convert 10 EUR to JPY."});
        QCOMPARE(free["constrained"].toBool(), false);
        QCOMPARE(free["type"].toString(), QString("call"));
        QCOMPARE(free["mask_us_per_token"].toDouble(), 0.0);
        QCOMPARE(free["arguments_from_message"].toBool(), false);
        // Copied arguments: every string the call writes is a span of the message.
        const QString message = QStringLiteral("Email Ann about the quarterly report");
        const QJsonObject copied =
            runJson({"--tools", presetPath("email.json"), "--call", "required",
                     "--arguments-from-message", "on", "--prompt", message});
        QVERIFY(copied["arguments_from_message"].toBool());
        QCOMPARE(copied["type"].toString(), QString("call"));
        for (const QJsonValue call : copied["function_calls"].toArray()) {
            const QJsonObject arguments = call.toObject()["arguments"].toObject();
            for (auto it = arguments.begin(); it != arguments.end(); ++it)
                if (it->isString())
                    QVERIFY2(message.contains(it->toString()), qPrintable(it->toString()));
        }
        const QJsonObject facts =
            runJson({"--tools", presetPath("currency.json"), "--facts", "Prices are in euros.",
                     "--call", "required", "--max-call-tokens", "1"});
        QVERIFY(facts["call_wrapped_up"].toBool());
        QVERIFY(facts["error"].isNull());
        QVERIFY(facts["sink_tokens"].toInt() >
                free["sink_tokens"].toInt()); // the facts are pinned too
    }

    void printsCallsAsText() {
        const CliRun run =
            runCli({"run", "--model", m_model, "--tools", presetPath("repeated_calls.json"),
                    "--call", "required", "--kv-window", "32"});
        QVERIFY2(run.exitCode == 0, qPrintable(describe(run)));
        const QStringList lines = QString::fromUtf8(run.out).split('\n', Qt::SkipEmptyParts);
        QVERIFY(!lines.isEmpty());
        for (const QString& line : lines)
            QVERIFY2(line.startsWith("call: start_timer {") ||
                         line.startsWith("call: cancel_timer {"),
                     qPrintable(line));
    }

    void badToolsFilesExitThree_data() {
        QTest::addColumn<QByteArray>("contents");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown type")
            << QByteArray(
                   R"([{"name":"a"},{"name":"b"},{"name":"set","parameters":{"type":"object","properties":{"brightness":{"type":"int"}}}}])")
            << R"(/2/parameters/properties/brightness/type: unknown type "int")";
        QTest::newRow("invalid JSON")
            << QByteArray("[\n  {\"name\": \"a\",}\n]")
            << "invalid JSON at line 2, column 16: syntax error while parsing object key - "
               "unexpected '}'; expected string literal";
        QTest::newRow("two errors")
            << QByteArray(R"([{"name":"a b"},{"name":"a b"}])")
            << R"(/0/name: "a b" is not an identifier (letters, digits and _, not starting with a digit) (and 1 more))";
        QTest::newRow("preset")
            << QByteArray(R"({"name":"p","tools":[{"name":"x","parameters":{"type":"string"}}]})")
            << R"(/tools/0/parameters/type: parameters must be of type "object", not "string")";
    }
    void badToolsFilesExitThree() {
        QFETCH(QByteArray, contents);
        QFETCH(QString, message);
        const QString path = writeFile("bad.json", contents);
        const CliRun run =
            runCli({"run", "--model", m_model, "--tools", path, "--prompt", "hi", "--json"});
        QCOMPARE(run.exitCode, 3);
        QVERIFY(run.out.isEmpty());
        QCOMPARE(QString::fromUtf8(run.err),
                 "sinkscope-cli: error: tools file '" + path + "': " + message + "\n");
    }

    void warningsAreReported() {
        const QString path = writeFile(
            "warn.json",
            R"([{"name":"a","parameters":{"type":"object","properties":{"s":{"type":"string","format":"date"}}}}])");
        const CliRun run = runCli({"run", "--model", m_model, "--tools", path, "--prompt", "hi",
                                   "--json", "--n-predict", "4"});
        QVERIFY2(run.exitCode == 0, qPrintable(describe(run)));
        const QString warning =
            R"(/0/parameters/properties/s/format: unsupported keyword "format" (ignored))";
        QCOMPARE(QString::fromUtf8(run.err), "sinkscope-cli: warning: " + warning + "\n");
        QCOMPARE(QJsonDocument::fromJson(run.out).object()["warnings"].toArray(),
                 QJsonArray{warning});
    }

    // --special: marker text in a plain prompt becomes the marker's token, as the chat template
    // would feed it; without it the text is spelt out in ordinary tokens.
    void specialTokensInThePrompt() {
        const QString text = QStringLiteral("<|im_start|>user\nhi<|im_end|>");
        const auto idsOf = [&](const QStringList& extra) {
            const CliRun run =
                runCli(QStringList{"tokenize", "--model", m_model, "--text", text} + extra);
            return QJsonDocument::fromJson(run.out).object()["ids"].toArray();
        };
        const auto tools = sinkscope::test::modelFromSpec(sinkscope::test::smallSpec(true));
        const int start = *tools->tokenizer().findToken("<|im_start|>");
        const int end = *tools->tokenizer().findToken("<|im_end|>");
        const QJsonArray special = idsOf({"--special"});
        const QJsonArray plain = idsOf({});
        QVERIFY(special.size() >= 4);
        QCOMPARE(special[1].toInt(), start); // after BOS
        QCOMPARE(special.last().toInt(), end);
        QVERIFY(plain.size() > special.size());
        QVERIFY(!plain.contains(start) && !plain.contains(end));

        const CliRun run = runCli({"run", "--model", m_model, "--prompt", text, "--special",
                                   "--n-predict", "4", "--json"});
        QVERIFY2(run.exitCode == 0, qPrintable(describe(run)));
        QCOMPARE(QJsonDocument::fromJson(run.out).object()["prompt_ids"].toArray(), special);
    }

    void usageErrorsExitTwo_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("facts without tools")
            << QStringList{"--prompt", "hi", "--facts", "x"} << "option '--facts' needs --tools";
        QTest::newRow("constrained value")
            << QStringList{"--prompt",      "hi",   "--tools", presetPath("email.json"),
                           "--constrained", "maybe"}
            << "option '--constrained': 'maybe' is not one of on, off";
        QTest::newRow("copied arguments unconstrained")
            << QStringList{"--prompt",
                           "hi",
                           "--tools",
                           presetPath("email.json"),
                           "--constrained",
                           "off",
                           "--arguments-from-message",
                           "on"}
            << "--arguments-from-message on needs --constrained on";
        QTest::newRow("call value")
            << QStringList{"--prompt", "hi",    "--tools", presetPath("email.json"),
                           "--call",   "always"}
            << "option '--call': 'always' is not one of auto, required, none";
        QTest::newRow("no query") << QStringList{"--tools",
                                                 writeFile("noquery.json", R"([{"name":"a"}])")}
                                  << "'run --tools' needs --prompt (or a preset with a query)";
        QTest::newRow("ignore-eos")
            << QStringList{"--prompt", "hi", "--tools", presetPath("email.json"), "--ignore-eos"}
            << "option '--ignore-eos' does not apply with --tools";
        QTest::newRow("special") // the chat template places the markers itself
            << QStringList{"--prompt", "hi", "--tools", presetPath("email.json"), "--special"}
            << "option '--special' does not apply with --tools";
    }
    void usageErrorsExitTwo() {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const CliRun run = runCli(QStringList{"run", "--model", m_model} + args);
        QCOMPARE(run.exitCode, 2);
        QCOMPARE(QString::fromUtf8(run.err), "sinkscope-cli: error: " + message + "\n");
    }
};

QTEST_GUILESS_MAIN(TestToolCli)
#include "test_tool_cli.moc"
