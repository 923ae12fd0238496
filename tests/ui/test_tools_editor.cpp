// The tools editor: JSON errors reported at the right line and column and marked in the text,
// nothing emitted until the tools are valid, compact output in written key order, presets from
// the embedded resources, files, and the syntax colours.
#include <QtTest>

#include "views/json_highlighter.h"
#include "views/tools_editor.h"

#include <QComboBox>
#include <QFileDialog>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTemporaryDir>
#include <QTextBlock>
#include <QTextLayout>

using sinkscope::views::JsonHighlighter;
using sinkscope::views::ToolsEditor;

namespace {

QPushButton* button(QWidget& parent, const QString& text) {
    for (QPushButton* candidate : parent.findChildren<QPushButton*>())
        if (candidate->text() == text) return candidate;
    return nullptr;
}

// The highlighter's colour over text[start, start + length) of the first block, or an invalid
// colour when the range is not covered by one format.
QColor colorAt(const QPlainTextEdit* editor, int start, int length) {
    const QTextBlock block = editor->document()->firstBlock();
    for (const QTextLayout::FormatRange& range : block.layout()->formats())
        if (range.start <= start && start + length <= range.start + range.length)
            return range.format.foreground().color();
    return {};
}

} // namespace

class TestToolsEditor : public QObject {
    Q_OBJECT

private slots:
    void invalidJsonIsReportedAndNotEmitted_data();
    void invalidJsonIsReportedAndNotEmitted();
    void typedTextAndApplyButton();
    void validToolsEmitCompactJsonOnce();
    void errorClearsOnValidApply();
    void presetsComeFromResources();
    void pickingPresetLoadsIt();
    void everyPresetIsValid();
    void filesRoundTrip();
    void fileDialogsDoNotBlock();
    void cannedResultsComeFromThePreset();
    void unsupportedKeywordIsAppliedWithAWarning();
    void highlighterColours();
};

void TestToolsEditor::invalidJsonIsReportedAndNotEmitted_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("line");
    QTest::addColumn<int>("column");
    QTest::addColumn<QString>("says");
    QTest::newRow("double comma") << "[{\"name\": 1,,]" << 1 << 13 << "expected string literal";
    QTest::newRow("bad literal on line 3")
        << "[\n  {\"name\": \"a\"},\n  {\"name\": tru}\n]" << 3 << 15 << "invalid literal";
    QTest::newRow("unterminated") << "[{\"name\": \"a\"}" << 1 << 15 << "end of input";
    QTest::newRow("empty") << "" << 1 << 1 << "end of input";
    QTest::newRow("columns count characters, not bytes")
        << QStringLiteral("[{\"naéme\": 1,,]") << 1 << 14 << "expected string literal";
    QTest::newRow("object instead of array")
        << "  {\"name\": \"x\"}" << 1 << 3 << "the tools must be a JSON array, not an object";
    QTest::newRow("number instead of array")
        << "42" << 1 << 1 << "the tools must be a JSON array, not an integer";
    QTest::newRow("tool without name")
        << "[{\"name\": \"a\"},\n {\"description\": \"b\"}]" << 2 << 2 << "/1: missing \"name\"";
    QTest::newRow("name not a string")
        << "[{\"name\": 7}]" << 1 << 11 << "/0/name: expected a string, got an integer";
    QTest::newRow("name not an identifier")
        << "[{\"name\": \"a b\"}]" << 1 << 11 << "/0/name: \"a b\" is not an identifier";
    QTest::newRow("tool not an object")
        << "[{\"name\": \"a\"}, \"b\"]" << 1 << 17 << "/1: expected a tool object, got a string";
    QTest::newRow("brackets inside strings do not count")
        << "[{\"name\": \"a\", \"description\": \"],[\"}, 3]" << 1 << 39
        << "/1: expected a tool object";
}

void TestToolsEditor::invalidJsonIsReportedAndNotEmitted() {
    QFETCH(QString, text);
    QFETCH(int, line);
    QFETCH(int, column);
    QFETCH(QString, says);
    ToolsEditor editor(QString{});
    editor.show();
    QVERIFY(QTest::qWaitForWindowExposed(&editor));
    QSignalSpy applied(&editor, &ToolsEditor::toolsApplied);
    editor.setToolsText(text);
    QVERIFY(!editor.apply());

    QCOMPARE(applied.count(), 0);
    const QString message = editor.errorMessage();
    QVERIFY2(message.startsWith(QStringLiteral("line %1, column %2: ").arg(line).arg(column)),
             qPrintable(message));
    QVERIFY2(message.contains(says), qPrintable(message));
    const auto* label = editor.findChild<QLabel*>(QStringLiteral("toolsErrorLabel"));
    QVERIFY(label && label->isVisible());
    QCOMPARE(label->text(), message);

    const QTextCursor cursor = editor.textEdit()->textCursor();
    QCOMPARE(cursor.blockNumber() + 1, line);
    QCOMPARE(cursor.positionInBlock() + 1, column);
    const QList<QTextEdit::ExtraSelection> marks = editor.textEdit()->extraSelections();
    QCOMPARE(marks.size(), 2);
    QVERIFY(marks[0].format.property(QTextFormat::FullWidthSelection).toBool());
    QCOMPARE(marks[0].cursor.blockNumber() + 1, line);
    QCOMPARE(marks[1].format.underlineStyle(), QTextCharFormat::WaveUnderline);
}

void TestToolsEditor::typedTextAndApplyButton() {
    ToolsEditor editor(QString{});
    editor.show();
    QVERIFY(QTest::qWaitForWindowExposed(&editor));
    QSignalSpy applied(&editor, &ToolsEditor::toolsApplied);
    editor.textEdit()->setFocus();
    QTest::keyClicks(editor.textEdit(), QStringLiteral("[{\"name\": 1,,]"));
    QCOMPARE(editor.toolsText(), QStringLiteral("[{\"name\": 1,,]"));
    QPushButton* apply = button(editor, QStringLiteral("Apply"));
    QVERIFY(apply);
    QTest::mouseClick(apply, Qt::LeftButton);
    QCOMPARE(applied.count(), 0);
    QVERIFY(editor.errorMessage().startsWith(QStringLiteral("line 1, column 13: ")));

    // Editing removes the stale mark; fixing the text and applying again emits once.
    QTest::keyClick(editor.textEdit(), Qt::Key_Delete);
    QVERIFY(editor.textEdit()->extraSelections().isEmpty());
    editor.setToolsText(QStringLiteral("[{\"name\": \"n\"}]"));
    QTest::mouseClick(apply, Qt::LeftButton);
    QCOMPARE(applied.count(), 1);
}

void TestToolsEditor::validToolsEmitCompactJsonOnce() {
    ToolsEditor editor(QString{});
    QSignalSpy applied(&editor, &ToolsEditor::toolsApplied);
    editor.setToolsText(
        QStringLiteral("[\n  {\n    \"name\": \"send\",\n    \"description\": \"Send é\",\n"
                       "    \"parameters\": {\"type\": \"object\", \"properties\": {}, "
                       "\"required\": []}\n  }\n]\n"));
    QVERIFY(editor.apply());
    QCOMPARE(applied.count(), 1);
    // Keys stay in the order written: the tool block the model reads follows the user's text.
    QCOMPARE(applied.at(0).at(0).toString(),
             QStringLiteral("[{\"name\":\"send\",\"description\":\"Send é\",\"parameters\":"
                            "{\"type\":\"object\",\"properties\":{},\"required\":[]}}]"));
    QVERIFY(editor.errorMessage().isEmpty());

    editor.setToolsText(QStringLiteral("[]"));
    QVERIFY(editor.apply());
    QCOMPARE(applied.count(), 2);
    QCOMPARE(applied.at(1).at(0).toString(), QStringLiteral("[]"));
}

void TestToolsEditor::errorClearsOnValidApply() {
    ToolsEditor editor(QString{});
    editor.show();
    QVERIFY(QTest::qWaitForWindowExposed(&editor));
    editor.setToolsText(QStringLiteral("{}"));
    QVERIFY(!editor.apply());
    const auto* label = editor.findChild<QLabel*>(QStringLiteral("toolsErrorLabel"));
    QVERIFY(label->isVisible());
    editor.setToolsText(QStringLiteral("[{\"name\": \"x\"}]"));
    QVERIFY(editor.apply());
    QVERIFY(!label->isVisible());
    QVERIFY(editor.errorMessage().isEmpty());
    QVERIFY(editor.textEdit()->extraSelections().isEmpty());
}

void TestToolsEditor::presetsComeFromResources() {
    ToolsEditor editor; // the default directory is the embedded ":/presets"
    QStringList names;
    for (const auto& preset : editor.presets())
        names << preset.name;
    // every preset file, in file-name order
    QCOMPARE(names, (QStringList{"Currency", "Phone settings", "Invoice e-mail", "Email",
                                 "Flight search", "Off-topic question", "Photo gallery",
                                 "Kitchen timers", "Robot arm", "Assistant router (12 tools)",
                                 "Review sentiment", "Shopping lists", "Smart home"}));
    for (const auto& preset : editor.presets()) {
        QVERIFY(!preset.description.isEmpty());
        QVERIFY(!preset.query.isEmpty());
    }
    QVERIFY(editor.currentPresetName().isEmpty());
    QVERIFY(editor.currentPresetQuery().isEmpty());

    QTemporaryDir dir;
    QFile broken(dir.filePath(QStringLiteral("broken.json")));
    QVERIFY(broken.open(QIODevice::WriteOnly));
    broken.write("{\"name\": \"x\", \"tools\": {}}");
    broken.close();
    QTest::ignoreMessage(QtWarningMsg,
                         QRegularExpression(QStringLiteral("broken.json is not a preset")));
    ToolsEditor fromFolder(dir.path());
    QVERIFY(fromFolder.presets().isEmpty());
}

void TestToolsEditor::pickingPresetLoadsIt() {
    ToolsEditor editor;
    editor.show();
    QVERIFY(QTest::qWaitForWindowExposed(&editor));
    QSignalSpy chosen(&editor, &ToolsEditor::presetChosen);
    QSignalSpy applied(&editor, &ToolsEditor::toolsApplied);
    auto* box = editor.findChild<QComboBox*>();
    QVERIFY(box);
    box->setFocus();
    QTest::keyClick(box, Qt::Key_Down); // the first preset, as a user picks it
    QCOMPARE(chosen.count(), 1);
    QCOMPARE(chosen.at(0).at(0).toString(), QStringLiteral("Currency"));
    QCOMPARE(chosen.at(0).at(1).toString(),
             QStringLiteral("How many Japanese yen do I get for 250 euros?"));
    QCOMPARE(editor.currentPresetName(), QStringLiteral("Currency"));
    QCOMPARE(editor.currentPresetQuery(), chosen.at(0).at(1).toString());
    QVERIFY(editor.toolsText().contains(QStringLiteral("\"convert_currency\"")));
    QVERIFY(editor.toolsText().trimmed().startsWith(QLatin1Char('[')));
    QCOMPARE(applied.count(), 0); // choosing a preset does not apply it

    QVERIFY(editor.choosePreset(QStringLiteral("Email")));
    QCOMPARE(chosen.count(), 2);
    QCOMPARE(box->currentText(), QStringLiteral("Email"));
    QVERIFY(editor.toolsText().contains(QStringLiteral("\"send_email\"")));
    QVERIFY(!editor.choosePreset(QStringLiteral("No such preset")));
    QCOMPARE(chosen.count(), 2);
}

void TestToolsEditor::everyPresetIsValid() {
    ToolsEditor editor;
    QSignalSpy applied(&editor, &ToolsEditor::toolsApplied);
    for (const auto& preset : editor.presets()) {
        QVERIFY(editor.choosePreset(preset.name));
        QVERIFY2(editor.apply(), qPrintable(editor.errorMessage()));
        const QString compact = applied.last().at(0).toString();
        QVERIFY(compact.startsWith(QStringLiteral("[{\"name\":")));
        QVERIFY(compact.contains(QStringLiteral("\"parameters\":{\"type\":\"object\"")));
    }
    QCOMPARE(applied.count(), 13);
}

void TestToolsEditor::unsupportedKeywordIsAppliedWithAWarning() {
    ToolsEditor editor(QString{});
    QSignalSpy applied(&editor, &ToolsEditor::toolsApplied);
    editor.setToolsText(
        QStringLiteral("[{\"name\": \"f\", \"parameters\": {\"type\": \"object\", \"properties\": "
                       "{\"code\": {\"type\": \"string\", \"pattern\": \"^[A-Z]+$\"}}}}]"));
    QVERIFY(editor.apply());
    QCOMPARE(applied.count(), 1);
    QVERIFY(editor.errorMessage().isEmpty());
    QCOMPARE(editor.warnings().size(), 1);
    QVERIFY2(editor.warnings().first().contains(QStringLiteral("pattern")),
             qPrintable(editor.warnings().first()));
    editor.setToolsText(QStringLiteral("[{\"name\": \"f\"}]"));
    QVERIFY(editor.apply());
    QVERIFY(editor.warnings().isEmpty());
}

void TestToolsEditor::filesRoundTrip() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("tools.json"));
    ToolsEditor editor(QString{});
    const QString tools = QStringLiteral("[\n  {\"name\": \"a\"}\n]\n");
    editor.setToolsText(tools);
    QVERIFY(editor.saveFile(path));
    editor.setToolsText(QString());
    QVERIFY(editor.loadFile(path));
    QCOMPARE(editor.toolsText(), tools);

    // A preset file opened directly contributes its tools array.
    QVERIFY(editor.loadFile(QStringLiteral(":/presets/smart_home.json")));
    QVERIFY(editor.toolsText().trimmed().startsWith(QLatin1Char('[')));
    QVERIFY(editor.toolsText().contains(QStringLiteral("\"set_thermostat\"")));

    QVERIFY(!editor.loadFile(dir.filePath(QStringLiteral("missing.json"))));
    QVERIFY(editor.errorMessage().contains(QStringLiteral("cannot read")));
    QVERIFY(!editor.saveFile(dir.filePath(QStringLiteral("no/such/folder/tools.json"))));
}

// Open… and Save… show a window-modal dialog and return at once (a blocking exec() would hang
// here); the choice arrives later through the dialog's signal.
void TestToolsEditor::fileDialogsDoNotBlock() {
    QTemporaryDir dir;
    const QString source = dir.filePath(QStringLiteral("source.json"));
    const QString tools = QStringLiteral("[{\"name\": \"from_file\"}]");
    {
        ToolsEditor writer(QString{});
        writer.setToolsText(tools);
        QVERIFY(writer.saveFile(source));
    }
    ToolsEditor editor(QString{});
    editor.show();
    QVERIFY(QTest::qWaitForWindowExposed(&editor));

    QTest::mouseClick(button(editor, QStringLiteral("Open…")), Qt::LeftButton);
    auto* open = editor.findChild<QFileDialog*>();
    QVERIFY(open);
    QVERIFY(open->isVisible());
    QCOMPARE(open->windowModality(), Qt::WindowModal);
    QCOMPARE(editor.toolsText(), QString()); // nothing until a file is chosen
    open->selectFile(source);
    static_cast<QDialog*>(open)->accept(); // QFileDialog::accept, as the Open button does
    QCOMPARE(editor.toolsText(), tools);
    QTRY_VERIFY(!editor.findChild<QFileDialog*>()); // deleted on close

    const QString target = dir.filePath(QStringLiteral("saved.json"));
    QTest::mouseClick(button(editor, QStringLiteral("Save…")), Qt::LeftButton);
    auto* save = editor.findChild<QFileDialog*>();
    QVERIFY(save);
    QVERIFY(save->isVisible());
    QVERIFY(!QFile::exists(target));
    save->selectFile(target);
    static_cast<QDialog*>(save)->accept();
    QFile saved(target);
    QVERIFY(saved.open(QIODevice::ReadOnly));
    QCOMPARE(QString::fromUtf8(saved.readAll()), tools);
}

void TestToolsEditor::cannedResultsComeFromThePreset() {
    ToolsEditor editor;
    QCOMPARE(editor.cannedResult(QStringLiteral("classify_sentiment")), QString()); // no preset
    QVERIFY(editor.choosePreset(QStringLiteral("Review sentiment")));
    QCOMPARE(editor.cannedResult(QStringLiteral("classify_sentiment")), QString()); // not applied
    QVERIFY(editor.apply());
    const QString canned = editor.cannedResult(QStringLiteral("classify_sentiment"));
    QVERIFY(canned.startsWith(QLatin1Char('{')));
    QVERIFY(!canned.contains(QLatin1Char('\n'))); // compact
    QCOMPARE(editor.cannedResult(QStringLiteral("not_a_tool")), QString());
    // Picking another preset loads it into the editor; the tools in force, and their results,
    // change only when it is applied.
    QVERIFY(editor.choosePreset(QStringLiteral("Smart home"))); // a preset without results
    QCOMPARE(editor.cannedResult(QStringLiteral("classify_sentiment")), canned);
    QVERIFY(editor.apply());
    QCOMPARE(editor.cannedResult(QStringLiteral("classify_sentiment")), QString());
    QCOMPARE(editor.cannedResult(QStringLiteral("set_light")), QString());
}

void TestToolsEditor::highlighterColours() {
    ToolsEditor editor(QString{});
    const QString text =
        QStringLiteral("[{\"name\": \"x\", \"n\": -1.5e3, \"b\": true, \"z\": null}]");
    editor.setToolsText(text);
    auto* highlighter = editor.textEdit()->document()->findChild<JsonHighlighter*>();
    QVERIFY(highlighter);
    using Token = JsonHighlighter::Token;
    const auto expect = [&](const QString& fragment, Token token) {
        const int start = int(text.indexOf(fragment));
        QVERIFY(start >= 0);
        QCOMPARE(colorAt(editor.textEdit(), start, int(fragment.size())),
                 highlighter->format(token).foreground().color());
    };
    expect(QStringLiteral("\"name\""), Token::Key);
    expect(QStringLiteral("\"x\""), Token::String);
    expect(QStringLiteral("-1.5e3"), Token::Number);
    expect(QStringLiteral("true"), Token::Literal);
    expect(QStringLiteral("null"), Token::Literal);
    expect(QStringLiteral("["), Token::Punctuation);
    const QSet<QRgb> distinct{highlighter->format(Token::Key).foreground().color().rgb(),
                              highlighter->format(Token::String).foreground().color().rgb(),
                              highlighter->format(Token::Number).foreground().color().rgb(),
                              highlighter->format(Token::Literal).foreground().color().rgb(),
                              highlighter->format(Token::Punctuation).foreground().color().rgb()};
    QCOMPARE(distinct.size(), 5);
}

QTEST_MAIN(TestToolsEditor)
#include "test_tools_editor.moc"
