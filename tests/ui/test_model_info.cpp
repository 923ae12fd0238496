// The model-information view: one click on the status bar's model label opens it, and it
// describes the model that is loaded (needle-nano first, then a qwen2 model opened from a file:
// a synthetic one without a chat template, and the reference qwen2-tiny with its Qwen2.5 one).
#include "gguf/gguf.h"
#include "model/synthetic.h"
#include "model_files/model_info_dialog.h"
#include "test_support.h"
#include "window_test_support.h"

#include <QToolButton>

#include <algorithm>
#include <map>

using namespace sinkscope;

namespace {

constexpr int kLoadWaitMs = 30'000;

QString rowValue(const ui::ModelInfoDialog& dialog, const QString& label) {
    for (const auto& [name, value] : dialog.rows())
        if (name == label) return value;
    return {};
}

// "Q8_0 × 7, F32 × 5" as the model file holds it, most tensors first.
QString weightTypesOf(const QString& path) {
    std::string error;
    const auto file = GgufFile::open(path.toStdString(), error);
    if (!file) return QString::fromStdString(error);
    std::map<std::string, int> counts;
    for (const GgufTensorInfo& tensor : file->tensors())
        ++counts[ggmlTypeName(tensor.type)];
    std::vector<std::pair<std::string, int>> ordered(counts.begin(), counts.end());
    std::stable_sort(ordered.begin(), ordered.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    QStringList parts;
    for (const auto& [type, count] : ordered)
        parts << QStringLiteral("%1 × %2").arg(QString::fromStdString(type)).arg(count);
    return parts.join(QStringLiteral(", "));
}

// Clicks the model label and returns the dialog it opened (nullptr if none).
ui::ModelInfoDialog* clickModelLabel(ui::MainWindow& window) {
    auto* label = window.findChild<QToolButton*>(QStringLiteral("modelLabel"));
    if (!label) return nullptr;
    QTest::mouseClick(label, Qt::LeftButton);
    return window.findChild<ui::ModelInfoDialog*>();
}

} // namespace

class TestModelInfo : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        test::useTemporaryAppFolders(m_dir);
    }

    void clickingTheModelLabelDescribesTheModel() {
        auto window = test::openLoadedWindow(kLoadWaitMs);
        QVERIFY(window);
        ui::ModelInfoDialog* dialog = clickModelLabel(*window);
        QVERIFY(dialog);
        QVERIFY(QTest::qWaitForWindowExposed(dialog));
        const ui::ModelInfo& info = *window->modelInfo();
        QCOMPARE(rowValue(*dialog, "Architecture"), QStringLiteral("llama"));
        QCOMPARE(rowValue(*dialog, "Weight types"), weightTypesOf(info.path));
        QVERIFY2(rowValue(*dialog, "Vocabulary").contains("SentencePiece"),
                 qPrintable(rowValue(*dialog, "Vocabulary")));
        QVERIFY(rowValue(*dialog, "Chat template").startsWith("Needle"));
        QCOMPARE(rowValue(*dialog, "Template family"), QStringLiteral("Needle (built in)"));
        QCOMPARE(rowValue(*dialog, "Window hints"),
                 QStringLiteral("window %1, streaming positions").arg(info.suggestedKvWindow));
        dialog->close();
        QTRY_VERIFY(!window->findChild<ui::ModelInfoDialog*>());

        // Another model opened from a file: the view follows it.
        SyntheticSpec spec;
        spec.architecture = "qwen2";
        spec.weightType = GgmlType::Q8_0;
        const QString path = m_dir.filePath("qwen2.gguf");
        std::string error;
        QVERIFY2(writeSyntheticModel(spec, path.toStdString(), error), error.c_str());
        QSignalSpy ready(window.get(), &ui::MainWindow::modelReady);
        window->openModelFile(path);
        QVERIFY(ready.wait(kLoadWaitMs));
        dialog = clickModelLabel(*window);
        QVERIFY(dialog);
        QCOMPARE(rowValue(*dialog, "Architecture"), QStringLiteral("qwen2"));
        QCOMPARE(rowValue(*dialog, "Weight types"), weightTypesOf(path));
        QVERIFY(rowValue(*dialog, "Weight types").contains("F32 × "));
        QVERIFY(rowValue(*dialog, "Weight types").contains("Q8_0 × "));
        QVERIFY(rowValue(*dialog, "Chat template").contains("no chat template"));
        QCOMPARE(rowValue(*dialog, "Template family"), QStringLiteral("none"));
        QCOMPARE(rowValue(*dialog, "Window hints"), QStringLiteral("none"));
    }

    // A model people run, opened from its file: the family is named from its own template.
    void aReferenceModelNamesItsTemplateFamily() {
        const QString path =
            test::sharedPath(QStringLiteral("reference/models/qwen2-tiny-Q8_0.gguf"));
        if (!QFileInfo::exists(path))
            QSKIP(qPrintable(
                QStringLiteral("%1 not found (../shared absent? set SINKSCOPE_SHARED)").arg(path)));
        auto window = test::openLoadedWindow(kLoadWaitMs);
        QVERIFY(window);
        QSignalSpy ready(window.get(), &ui::MainWindow::modelReady);
        window->openModelFile(path);
        QVERIFY(ready.wait(kLoadWaitMs));
        ui::ModelInfoDialog* dialog = clickModelLabel(*window);
        QVERIFY(dialog);
        QCOMPARE(rowValue(*dialog, "Architecture"), QStringLiteral("qwen2"));
        QVERIFY2(rowValue(*dialog, "Chat template").startsWith("the model's own template"),
                 qPrintable(rowValue(*dialog, "Chat template")));
        QCOMPARE(rowValue(*dialog, "Template family"),
                 QStringLiteral("ChatML (Qwen2.5 / Hermes tool calls)"));
        // The row sits under the template it names.
        const auto& rows = dialog->rows();
        const auto at = [&](const QString& label) {
            return std::ranges::find(rows, label, &QPair<QString, QString>::first) - rows.begin();
        };
        QCOMPARE(at("Template family"), at("Chat template") + 1);
    }
};

QTEST_MAIN(TestModelInfo)
#include "test_model_info.moc"
