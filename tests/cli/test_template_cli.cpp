// sinkscope-cli template: every golden render of shared/reference/templates/renders.json comes out
// byte for byte through the command (or exits 3 with the template's error), a model's own template
// renders from the file, and a template that does not parse names its line and column.
#include "cli_run.h"
#include "jinja_test_support.h"
#include "test_support.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

using sinkscope::test::describe;
using sinkscope::test::Json;
using sinkscope::test::kTemplateFiles;
using sinkscope::test::runCli;
using sinkscope::test::sharedPath;

namespace {

Json readJson(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return Json();
    return Json::parse(file.readAll().toStdString(), nullptr, false);
}

bool writeText(const QString& path, const std::string& text) {
    QFile file(path);
    return file.open(QIODevice::WriteOnly) &&
           file.write(text.data(), qint64(text.size())) == qint64(text.size());
}

} // namespace

class TestTemplateCli : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void rendersTheReferenceCases_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QByteArray>("expected");
        QTest::addColumn<bool>("raises");
        const QString templates = sharedPath("reference/templates");
        const Json renders = readJson(QDir(templates).filePath("renders.json"));
        const Json conversations = readJson(QDir(templates).filePath("conversations.json"));
        if (!renders.is_object())
            QSKIP(qPrintable("the reference renders are not at " + templates +
                             " (set SINKSCOPE_SHARED)"));
        int index = 0;
        for (const Json& entry : renders.at("cases")) {
            const auto file = kTemplateFiles.find(entry.at("template").get<std::string>());
            QVERIFY2(file != kTemplateFiles.end(), entry.at("template").dump().c_str());
            Json conversation;
            for (const Json& candidate : conversations)
                if (candidate.at("id") == entry.at("conversation")) conversation = candidate;
            QVERIFY(conversation.is_object());
            const QString path = m_dir.filePath(QString("conversation-%1.json").arg(index++));
            QVERIFY(writeText(path, conversation.dump()));
            QStringList args = {"template",
                                "--template",
                                QDir(templates).filePath(file->second),
                                "--conversation",
                                path,
                                "--now",
                                "2026-12-01",
                                "--bos",
                                QString::fromStdString(entry.at("bos_token")),
                                "--eos",
                                QString::fromStdString(entry.at("eos_token"))};
            if (!entry.at("add_generation_prompt").get<bool>()) args << "--no-generation-prompt";
            const bool raises = entry.contains("error");
            const std::string expected = entry.at(raises ? "error" : "rendered");
            const std::string name = entry.at("template").get<std::string>() + " / " +
                                     entry.at("conversation").get<std::string>();
            QTest::newRow(name.c_str()) << args << QByteArray::fromStdString(expected) << raises;
        }
    }
    void rendersTheReferenceCases() {
        QVERIFY(m_dir.isValid());
        QFETCH(QStringList, args);
        QFETCH(QByteArray, expected);
        QFETCH(bool, raises);
        const auto run = runCli(args);
        if (raises) {
            QVERIFY2(run.exitCode == 3, qPrintable(describe(run)));
            // jinja2 names raise_exception's message a TemplateError; the command says "raised".
            const QByteArray message = expected.mid(expected.indexOf(": ") + 2);
            QVERIFY2(run.err.contains(message), qPrintable(describe(run)));
            QVERIFY(run.out.isEmpty());
        } else {
            QVERIFY2(run.exitCode == 0, qPrintable(describe(run)));
            QCOMPARE(run.out, expected);
        }
    }

    void rendersTheModelsOwnTemplate() {
        const QString model = sharedPath("reference/models/qwen2-tiny-Q4_K_M.gguf");
        if (!QFile::exists(model)) QSKIP(qPrintable(model + " not found (set SINKSCOPE_SHARED)"));
        const QString path = m_dir.filePath("hello.json");
        QVERIFY(writeText(path, R"({"messages": [{"role": "user", "content": "Hello"}]})"));
        const auto run = runCli({"template", "--model", model, "--conversation", path});
        QVERIFY2(run.exitCode == 0, qPrintable(describe(run)));
        QVERIFY2(run.out.startsWith("<|im_start|>system\n"), run.out.constData());
        QVERIFY(run.out.endsWith("<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n"));
    }

    void aTemplateThatDoesNotParseNamesItsPlace() {
        const QString bad = m_dir.filePath("bad.jinja");
        QVERIFY(writeText(bad, "{% for m in messages %}\n{{ m.content }}\n"));
        const QString path = m_dir.filePath("empty.json");
        QVERIFY(writeText(path, R"({"messages": []})"));
        const auto run = runCli({"template", "--template", bad, "--conversation", path});
        QVERIFY2(run.exitCode == 3, qPrintable(describe(run)));
        QVERIFY2(run.err.contains("does not parse: line 1, column"), qPrintable(describe(run)));
    }
};

QTEST_GUILESS_MAIN(TestTemplateCli)
#include "test_template_cli.moc"
