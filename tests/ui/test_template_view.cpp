// How the playground shows a model's chat template: the Tools tab's line about where the tools
// are (pinned or in the user turn), the banner's notice, the template's switch for the tools in
// the system turn (clicked like a user does) and the model information's family and call format.
// The models are the reference ones (qwen2-tiny: the Qwen2.5 template; llama3-tiny: the Llama-3.2
// template) and the built-in needle-nano.
#include "chat/chat_template.h"
#include "model/model.h"
#include "model_files/model_info_dialog.h"
#include "test_support.h"
#include "tools/tool_schema.h"
#include "views/tools_editor.h"
#include "window/status_banner.h"
#include "window/tools_page.h"
#include "window_test_support.h"

#include <QCheckBox>
#include <QFile>
#include <QLocale>
#include <QToolButton>

#include <memory>

using namespace sinkscope;
using namespace sinkscope::ui;

namespace {

constexpr int kWaitMs = 120'000;
const QString kSmartHome = QStringLiteral("Smart home");

// As the panels write a count (display_text.h tokenCount).
QString tokens(qint64 count) {
    return QStringLiteral("%1 tokens").arg(QLocale().toString(count));
}

SessionInfo waitForSession(QSignalSpy& sessions, const QString& reason) {
    while (sessions.isEmpty() || sessions.constLast().at(0).value<SessionInfo>().reason != reason)
        if (!sessions.wait(kWaitMs)) return {};
    return sessions.constLast().at(0).value<SessionInfo>();
}

// A shown window on `modelPath` (the built-in model when empty) with `preset` (a name or a file)
// pinned, and its first session; nothing is written to the settings.
std::unique_ptr<MainWindow> openWindow(const QString& modelPath, SessionInfo& first,
                                       const QString& preset = kSmartHome) {
    MainWindow::Options options;
    options.modelPath = modelPath;
    options.preset = preset;
    options.persistSettings = false;
    auto window = std::make_unique<MainWindow>(options);
    QSignalSpy sessions(window.get(), &MainWindow::sessionRebuilt);
    window->show();
    if (!QTest::qWaitForWindowExposed(window.get())) return nullptr;
    first = waitForSession(sessions, QStringLiteral("Model loaded"));
    return first.reason.isEmpty() ? nullptr : std::move(window);
}

// Opens `window` on the reference model `file` (in ../shared/reference/models) and waits for its
// first session, `first`; skips the test when the file is absent.
#define OPEN_REFERENCE_WINDOW(file, window, first)                                                 \
    do {                                                                                           \
        const QString path = test::sharedPath(QStringLiteral("reference/models/") + file);         \
        if (!QFileInfo::exists(path))                                                              \
            QSKIP(                                                                                 \
                qPrintable(QStringLiteral("%1 not found (../shared absent? set SINKSCOPE_SHARED)") \
                               .arg(path)));                                                       \
        window = openWindow(path, first);                                                          \
        QVERIFY(window);                                                                           \
    } while (0)

QString rowValue(const ModelInfoDialog& dialog, const QString& label) {
    for (const auto& [name, value] : dialog.rows())
        if (name == label) return value;
    return {};
}

ModelInfoDialog* clickModelLabel(MainWindow& window) {
    auto* label = window.findChild<QToolButton*>(QStringLiteral("modelLabel"));
    if (!label) return nullptr;
    QTest::mouseClick(label, Qt::LeftButton);
    return window.findChild<ModelInfoDialog*>();
}

// The block the engine itself makes for the window's model and applied tools under `options`.
ToolBlock engineBlock(MainWindow& window, const ModelTemplateOptions& options) {
    std::string error;
    const std::unique_ptr<Model> model = Model::load(window.modelInfo()->path.toStdString(), error);
    if (!model) return {};
    const QByteArray json = window.toolsEditor()->toolsText().toUtf8();
    const ToolsParseResult tools = parseTools(std::string_view(json.constData(), json.size()));
    if (!tools.ok()) return {};
    return ChatTemplate(*model, options).toolBlock(*tools.tools);
}

} // namespace

class TestTemplateView : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        test::useTemporaryAppFolders(m_dir);
    }

    void qwenTemplatePinsItsToolBlock() {
        SessionInfo session;
        std::unique_ptr<MainWindow> window;
        OPEN_REFERENCE_WINDOW("qwen2-tiny-Q4_K_M.gguf", window, session);
        QCOMPARE(session.chatLayout, QStringLiteral("template"));
        QVERIFY(session.chatTemplate.toolsPinned);
        QCOMPARE(session.chatTemplate.callFormat.syntax, CallSyntax::TaggedObjects);
        const ToolBlock block = engineBlock(*window, {});
        QCOMPARE(session.sinksUsed, int(block.tokens.size()));
        QCOMPARE(session.toolSpans.size(), qsizetype(block.tools.size()));
        const QString line = window->toolsPage()->templateText();
        QVERIFY2(line.contains(QStringLiteral("Tools pinned:</b> the ChatML template's tool block "
                                              "(%1)")
                                   .arg(tokens(qint64(block.tokens.size())))),
                 qPrintable(line));
        QVERIFY2(line.contains(QStringLiteral("tagged objects &lt;tool_call&gt; … "
                                              "&lt;/tool_call&gt;, arguments")),
                 qPrintable(line));
        QVERIFY(!window->toolsPage()->systemTurnOption()->isEnabled());

        ModelInfoDialog* dialog = clickModelLabel(*window);
        QVERIFY(dialog);
        QCOMPARE(rowValue(*dialog, "Tool calls"),
                 QStringLiteral("tagged objects <tool_call> … </tool_call>, arguments"));
        QCOMPARE(rowValue(*dialog, "Tools"), QStringLiteral("pinned as the sink block"));
        QVERIFY(rowValue(*dialog, "Chat template").startsWith("the model's own template"));
        QCOMPARE(rowValue(*dialog, "Template family"),
                 QStringLiteral("ChatML (Qwen2.5 / Hermes tool calls)"));
    }

    void llamaTemplateCanPinTheToolsInTheSystemTurn() {
        SessionInfo before;
        std::unique_ptr<MainWindow> window;
        OPEN_REFERENCE_WINDOW("llama3-tiny-Q8_0.gguf", window, before);
        QCOMPARE(before.chatLayout, QStringLiteral("template"));
        QVERIFY(!before.chatTemplate.toolsPinned);
        QVERIFY(before.chatTemplate.hasSystemTurnOption);
        QVERIFY(before.toolSpans.isEmpty());
        QVERIFY2(window->toolsPage()->templateText().contains(
                     QStringLiteral("Tools not pinned:</b> this template puts the tools in the "
                                    "user turn")),
                 qPrintable(window->toolsPage()->templateText()));
        QVERIFY(window->banner()->isVisible());
        QVERIFY2(window->banner()->message().contains(QStringLiteral("inside the user turn")),
                 qPrintable(window->banner()->message()));
        QCOMPARE(before.chatTemplate.callFormat.syntax, CallSyntax::BareObject);

        QCheckBox* option = window->toolsPage()->systemTurnOption();
        QVERIFY(option->isEnabled());
        QVERIFY(!option->isChecked());
        QVERIFY(option->toolTip().contains(QStringLiteral("differs from how the model was")));
        QSignalSpy sessions(window.get(), &MainWindow::sessionRebuilt);
        window->tabs()->setCurrentWidget(window->toolsPage());
        QTest::mouseClick(option, Qt::LeftButton, {}, QPoint(8, option->height() / 2));
        QVERIFY(option->isChecked());
        const SessionInfo after =
            waitForSession(sessions, QStringLiteral("Template option changed"));
        QVERIFY(!after.reason.isEmpty());
        QVERIFY(after.chatTemplate.toolsPinned);
        QVERIFY(after.chatTemplate.toolsInSystemTurn);
        // The sinks grow from the template's opening to the whole block with the tools.
        const ToolBlock block = engineBlock(*window, {true});
        QVERIFY(block.pinsTools);
        QCOMPARE(after.sinksUsed, int(block.tokens.size()));
        QVERIFY2(after.sinksUsed > before.sinksUsed,
                 qPrintable(QStringLiteral("%1 -> %2").arg(before.sinksUsed).arg(after.sinksUsed)));
        QCOMPARE(after.toolSpans.size(), qsizetype(block.tools.size()));
        QVERIFY(!after.toolSpans.isEmpty());
        QVERIFY(after.toolSpans.constLast().end <= after.sinksUsed);
        QVERIFY(window->toolsPage()->templateText().contains(
            QStringLiteral("Tools pinned in the system turn</b> (%1)")
                .arg(tokens(after.sinksUsed))));
        QVERIFY(window->banner()->message().contains(QStringLiteral("not how the model was")));

        ModelInfoDialog* dialog = clickModelLabel(*window);
        QVERIFY(dialog);
        QVERIFY(rowValue(*dialog, "Tools").startsWith("in the system turn, pinned"));
        QCOMPARE(rowValue(*dialog, "Template family"), QStringLiteral("Llama 3"));
        QCOMPARE(rowValue(*dialog, "Tool calls"),
                 QStringLiteral("bare object (the whole reply), parameters, one call"));
    }

    void needleNanoKeepsItsLayout() {
        SessionInfo session;
        auto window = openWindow(QString(), session);
        QVERIFY(window);
        QCOMPARE(session.chatLayout, QStringLiteral("needle"));
        QVERIFY(session.chatTemplate.toolsPinned);
        QVERIFY(session.chatTemplate.notice.isEmpty());
        QVERIFY(!window->toolsPage()->systemTurnOption()->isEnabled());
        QVERIFY(window->toolsPage()->templateText().contains(
            QStringLiteral("Tools pinned:</b> Needle's tool block (%1)")
                .arg(tokens(session.sinksUsed))));
        QCOMPARE(session.chatTemplate.callFormat, needleCallFormat());
    }

    // --preset FILE (the README's screenshot command): the file's tools are pinned.
    void presetFileIsPinned() {
        const QString path = m_dir.filePath(QStringLiteral("clock.json"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(R"({"name": "Clock", "tools": [{"name": "get_time", "description": "Now"}]})");
        file.close();
        SessionInfo session;
        auto window = openWindow(QString(), session, path);
        QVERIFY(window);
        QCOMPARE(session.toolSpans.size(), qsizetype(1));
        QCOMPARE(session.toolSpans.constFirst().name, QStringLiteral("get_time"));
        QVERIFY(window->banner()->isHidden());
    }
};

QTEST_MAIN(TestTemplateView)
#include "test_template_view.moc"
