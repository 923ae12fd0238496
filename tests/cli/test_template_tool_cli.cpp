// sinkscope-cli run --tools on models with their own chat template: the JSON says the layout, the
// template's family, whether the tools are pinned, the template's notice and the call format it
// renders.
#include "cli_run.h"
#include "template_chat_support.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

namespace {

using sinkscope::test::CliRun;
using sinkscope::test::describe;
using sinkscope::test::runCli;

QJsonObject runJson(const QString& family, const QStringList& extra) {
    const QStringList args = QStringList{"run",
                                         "--model",
                                         sinkscope::test::referenceModelPath(family),
                                         "--tools",
                                         QFINDTESTDATA("../resources/presets/smart_home.json"),
                                         "--prompt",
                                         "Dim the hall lights.",
                                         "--n-predict",
                                         "6",
                                         "--json"} +
                             extra;
    const CliRun run = runCli(args);
    if (run.exitCode != 0 || run.crashed) {
        qWarning("%s", qPrintable(describe(run)));
        return {};
    }
    return QJsonDocument::fromJson(run.out).object();
}

} // namespace

class TestTemplateToolCli : public QObject {
    Q_OBJECT

private slots:
    void reportsTheTemplateLayout_data() {
        QTest::addColumn<QString>("family");
        QTest::addColumn<QStringList>("extra");
        QTest::addColumn<QString>("templateFamily");
        QTest::addColumn<bool>("pinned");
        QTest::addColumn<QString>("syntax");
        QTest::addColumn<QString>("notice"); // a piece of it; "" for none
        const QString chatMlTools = "ChatML (Qwen2.5 / Hermes tool calls)";
        QTest::newRow("qwen2") << "qwen2-tiny" << QStringList{} << chatMlTools << true
                               << "tagged-objects"
                               << "";
        QTest::newRow("smollm") << "smollm-tiny" << QStringList{} << chatMlTools << true
                                << "json-list"
                                << "";
        QTest::newRow("llama3") << "llama3-tiny" << QStringList{} << "Llama 3" << false
                                << "bare-object"
                                << "inside the user turn";
        QTest::newRow("llama3 system") << "llama3-tiny" << QStringList{"--tools-in-system"}
                                       << "Llama 3" << true << "bare-object"
                                       << "not how the model was trained";
        QTest::newRow("qwen2 system") << "qwen2-tiny" << QStringList{"--tools-in-system"}
                                      << chatMlTools << true << "tagged-objects"
                                      << "not available";
    }
    void reportsTheTemplateLayout() {
        QFETCH(QString, family);
        QFETCH(QStringList, extra);
        QFETCH(QString, templateFamily);
        QFETCH(bool, pinned);
        QFETCH(QString, syntax);
        QFETCH(QString, notice);
        SINKSCOPE_REQUIRE_REFERENCE_MODEL(family);
        const QJsonObject out = runJson(family, extra);
        QVERIFY(!out.isEmpty());
        QCOMPARE(out["layout"].toString(), QString("template"));
        QCOMPARE(out["template_family"].toString(), templateFamily);
        QCOMPARE(out["tools_pinned"].toBool(), pinned);
        QCOMPARE(out["call_format"].toObject()["syntax"].toString(), syntax);
        if (notice.isEmpty())
            QCOMPARE(out["template_notice"].toString(), QString());
        else
            QVERIFY2(out["template_notice"].toString().contains(notice),
                     qPrintable(out["template_notice"].toString()));
        QCOMPARE(out["rerendered"].toBool(), false); // the first turn always extends the block
        QVERIFY(out["sink_tokens"].toInt() > 0);
        if (pinned) QVERIFY(!out["tool_tokens"].toObject().isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestTemplateToolCli)
#include "test_template_tool_cli.moc"
