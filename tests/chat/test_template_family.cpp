// The family a chat template is named by (chat/template_family.h): every reference template as
// real models ship it, read in place from ../shared, then small hand-written templates for the
// markers that alone name no family, and the family a chat reports for its layout.
#include "chat/chat_template.h"
#include "template_chat_support.h"
#include "tool_test_support.h"

#include <QDir>
#include <QtTest>

#include <algorithm>
#include <string>

using namespace sinkscope;

Q_DECLARE_METATYPE(sinkscope::TemplateFamily)

namespace {

const QString kTemplatesFolder = QStringLiteral("reference/templates");

// Which template is which: ../shared/reference/README.md, "templates/".
const QList<std::pair<QString, TemplateFamily>> kReferenceFamilies = {
    {"Qwen-Qwen2.5-7B-Instruct.jinja", TemplateFamily::ChatMlTools},
    {"NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja", TemplateFamily::ChatMlTools},
    {"chatml-tools.jinja", TemplateFamily::ChatMlTools},
    {"meta-llama-Llama-3.2-3B-Instruct.jinja", TemplateFamily::Llama3},
    {"mistralai-Mistral-Nemo-Instruct-2407.jinja", TemplateFamily::MistralTools},
    {"google-gemma-2-2b-it.jinja", TemplateFamily::Gemma},
    {"microsoft-Phi-3.5-mini-instruct.jinja", TemplateFamily::Phi3},
};

#define REQUIRE_REFERENCE_TEMPLATES()                                                              \
    do {                                                                                           \
        if (!QFileInfo::exists(sinkscope::test::sharedPath(kTemplatesFolder)))                     \
            QSKIP(                                                                                 \
                qPrintable(QStringLiteral("%1 not found (../shared absent? set SINKSCOPE_SHARED)") \
                               .arg(sinkscope::test::sharedPath(kTemplatesFolder))));              \
    } while (0)

} // namespace

class TestTemplateFamily : public QObject {
    Q_OBJECT

private slots:
    void referenceTemplates_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<TemplateFamily>("expected");
        for (const auto& [file, family] : kReferenceFamilies)
            QTest::newRow(qPrintable(file)) << file << family;
    }
    void referenceTemplates() {
        QFETCH(QString, file);
        QFETCH(TemplateFamily, expected);
        REQUIRE_REFERENCE_TEMPLATES();
        const std::string source = sinkscope::test::referenceTemplate(file);
        QVERIFY2(!source.empty(), qPrintable(file + " is missing or empty"));
        QCOMPARE(templateFamily(source), expected);
    }

    // A template added to the reference folder gets a row above.
    void everyReferenceTemplateHasARow() {
        REQUIRE_REFERENCE_TEMPLATES();
        const QDir folder(sinkscope::test::sharedPath(kTemplatesFolder));
        const QStringList files = folder.entryList({"*.jinja"}, QDir::Files, QDir::Name);
        QCOMPARE(files.size(), kReferenceFamilies.size());
        for (const QString& file : files)
            QVERIFY2(std::ranges::any_of(kReferenceFamilies,
                                         [&](const auto& row) { return row.first == file; }),
                     qPrintable(file + " has no expected family"));
    }

    void handWrittenTemplates_data() {
        QTest::addColumn<QString>("source");
        QTest::addColumn<TemplateFamily>("expected");
        QTest::newRow("empty") << "" << TemplateFamily::None;
        QTest::newRow("no markers")
            << "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
            << TemplateFamily::Unrecognised;
        QTest::newRow("chatml without tools (SmolLM2)")
            << "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n"
               "{% endfor %}"
            << TemplateFamily::ChatMl;
        QTest::newRow("tool_call without chatml")
            << "{% for m in messages %}{{ m.content }}{% endfor %}<tool_call>"
            << TemplateFamily::Unrecognised;
        QTest::newRow("end_header_id alone")
            << "{{ m.role }}<|end_header_id|>" << TemplateFamily::Unrecognised;
        QTest::newRow("mistral without tools")
            << "{{ bos_token }}{% for m in messages %}[INST] {{ m.content }} [/INST]{% endfor %}"
            << TemplateFamily::Mistral;
        QTest::newRow("TOOL_CALLS without INST")
            << "[AVAILABLE_TOOLS]{{ tools }}[/AVAILABLE_TOOLS][TOOL_CALLS]"
            << TemplateFamily::Unrecognised;
        QTest::newRow("user without end (Zephyr)")
            << "{% for m in messages %}<|user|>\n{{ m.content }}</s>{% endfor %}"
            << TemplateFamily::Unrecognised;
        QTest::newRow("end without user")
            << "<|assistant|>\n{{ m.content }}<|end|>" << TemplateFamily::Unrecognised;
        QTest::newRow("end_of_turn alone")
            << "{{ m.content }}<end_of_turn>" << TemplateFamily::Unrecognised;
        QTest::newRow("im_end alone")
            << "{{ m.content }}<|im_end|>" << TemplateFamily::Unrecognised;
    }
    void handWrittenTemplates() {
        QFETCH(QString, source);
        QFETCH(TemplateFamily, expected);
        QCOMPARE(templateFamily(source.toStdString()), expected);
    }

    void names_data() {
        QTest::addColumn<TemplateFamily>("family");
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("markup");
        QTest::newRow("none") << TemplateFamily::None << "none"
                              << "";
        QTest::newRow("needle") << TemplateFamily::Needle << "Needle (built in)"
                                << "Needle";
        QTest::newRow("chatml tools")
            << TemplateFamily::ChatMlTools << "ChatML (Qwen2.5 / Hermes tool calls)"
            << "ChatML";
        QTest::newRow("chatml") << TemplateFamily::ChatMl << "ChatML"
                                << "ChatML";
        QTest::newRow("llama 3") << TemplateFamily::Llama3 << "Llama 3"
                                 << "Llama 3";
        QTest::newRow("mistral tools")
            << TemplateFamily::MistralTools << "Mistral (with [TOOL_CALLS])"
            << "Mistral";
        QTest::newRow("mistral") << TemplateFamily::Mistral << "Mistral"
                                 << "Mistral";
        QTest::newRow("gemma") << TemplateFamily::Gemma << "Gemma"
                               << "Gemma";
        QTest::newRow("phi-3") << TemplateFamily::Phi3 << "Phi-3"
                               << "Phi-3";
        QTest::newRow("unrecognised") << TemplateFamily::Unrecognised << "unrecognised"
                                      << "";
    }
    void names() {
        QFETCH(TemplateFamily, family);
        QFETCH(QString, name);
        QFETCH(QString, markup);
        QCOMPARE(QString::fromUtf8(templateFamilyName(family)), name);
        QCOMPARE(QString::fromUtf8(templateMarkupName(family)), markup);
    }

    // The chat's family follows its layout: Needle's markers win over a template; a template
    // that falls back to the plain layout is still named; no template is None.
    void aChatNamesTheFamilyOfItsLayout() {
        const auto needle = sinkscope::test::modelFromSpec(sinkscope::test::smallSpec(true));
        const std::string chatml = "{% for m in messages %}<|im_start|>{{ m.content }}{% endfor %}";
        const ChatTemplate needleChat(needle->tokenizer(), chatml);
        QCOMPARE(needleChat.layout(), ChatLayout::Needle);
        QCOMPARE(needleChat.family(), TemplateFamily::Needle);

        const auto plain = sinkscope::test::modelFromSpec(sinkscope::test::smallSpec(false));
        QCOMPARE(ChatTemplate(*plain).family(), TemplateFamily::None);
        const ChatTemplate gemma(plain->tokenizer(),
                                 "{% for m in messages %}<start_of_turn>{{ m.content }}"
                                 "<end_of_turn>{% endfor %}");
        QCOMPARE(gemma.layout(), ChatLayout::Plain); // it does not render tools
        QCOMPARE(gemma.family(), TemplateFamily::Gemma);
    }
};

QTEST_GUILESS_MAIN(TestTemplateFamily)
#include "test_template_family.moc"
