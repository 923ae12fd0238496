#include "views/tools_editor.h"

#include "views/json_highlighter.h"
#include "views/view_colors.h"

#include <nlohmann/json.hpp>

#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSaveFile>
#include <QTextBlock>
#include <QTimer>
#include <QVBoxLayout>

#include <optional>

namespace sinkscope::views {

namespace {

using Json = nlohmann::ordered_json;

constexpr int kJsonIndent = 2;
constexpr int kDraftQuietMs = 300; // typing pauses this long before the draft is measured

QString jsonString(const Json& object, const char* key) {
    const auto found = object.find(key);
    return found != object.end() && found->is_string()
               ? QString::fromStdString(found->get<std::string>())
               : QString();
}

// A preset file, or nullopt when it is not one (no "name" or no "tools" array).
std::optional<ToolsPreset> parsePreset(const QByteArray& bytes) {
    const Json preset = Json::parse(bytes.constBegin(), bytes.constEnd(), nullptr, false);
    if (!preset.is_object() || !preset.contains("tools") || !preset["tools"].is_array())
        return std::nullopt;
    ToolsPreset parsed;
    parsed.name = jsonString(preset, "name");
    parsed.description = jsonString(preset, "description");
    parsed.query = jsonString(preset, "query");
    parsed.toolsText = QString::fromStdString(preset["tools"].dump(kJsonIndent));
    const auto results = preset.find("results");
    if (results != preset.end() && results->is_object())
        for (const auto& [tool, result] : results->items())
            parsed.results.insert(QString::fromStdString(tool),
                                  QString::fromStdString(result.dump()));
    return parsed;
}

// Ctrl+Tab and Ctrl+Shift+Tab move focus out of the editor, where Tab indents: the way out of a
// code editor for the keyboard. They are passed on as Tab and Shift+Tab with Tab changing focus
// for that one key, so that Qt's own tab chain picks the next control.
class TabLeavesEditor : public QObject {
public:
    explicit TabLeavesEditor(QPlainTextEdit* editor) : QObject(editor), m_editor(editor) {}

protected:
    bool eventFilter(QObject* watched, QEvent* event) override {
        if (watched != m_editor || event->type() != QEvent::KeyPress) return false;
        const auto* key = static_cast<QKeyEvent*>(event);
        const bool tab = key->key() == Qt::Key_Tab || key->key() == Qt::Key_Backtab;
        if (!tab || !(key->modifiers() & Qt::ControlModifier)) return false;
        const bool back = key->key() == Qt::Key_Backtab || (key->modifiers() & Qt::ShiftModifier);
        QKeyEvent plain(QEvent::KeyPress, back ? Qt::Key_Backtab : Qt::Key_Tab,
                        back ? Qt::ShiftModifier : Qt::NoModifier);
        m_editor->setTabChangesFocus(true);
        QCoreApplication::sendEvent(m_editor, &plain);
        m_editor->setTabChangesFocus(false);
        return true;
    }

private:
    QPlainTextEdit* m_editor;
};

std::optional<QByteArray> readFile(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return std::nullopt;
    return file.readAll();
}

} // namespace

ToolsEditor::ToolsEditor(const QString& presetDirectory, QWidget* parent) : QWidget(parent) {
    // The buttons first: the tab order is the order made, and they are drawn above the editor.
    QWidget* buttonRow = createButtonRow();
    m_editor = new QPlainTextEdit(this);
    m_editor->setObjectName(QStringLiteral("toolsText"));
    m_editor->installEventFilter(new TabLeavesEditor(m_editor));
    m_editor->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_editor->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_editor->setTabChangesFocus(false); // a code editor: Tab indents, Ctrl+Tab leaves
    m_editor->setToolTip(tr("Tab indents; Ctrl+Tab and Ctrl+Shift+Tab move to the next and "
                            "previous control."));
    m_editor->setPlaceholderText(
        tr("[{\"name\": \"...\", \"description\": \"...\", \"parameters\": {...}}]"));
    m_highlighter = new JsonHighlighter(m_editor->document(), palette());
    m_errorLabel = new QLabel(this);
    m_errorLabel->setObjectName(QStringLiteral("toolsErrorLabel"));
    m_errorLabel->setWordWrap(true);
    m_errorLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_errorLabel->hide();
    m_warningLabel = new QLabel(this);
    m_warningLabel->setObjectName(QStringLiteral("toolsWarningLabel"));
    m_warningLabel->setWordWrap(true);
    m_warningLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_warningLabel->hide();
    m_description = new QLabel(this);
    m_description->setWordWrap(true);
    m_description->hide();

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(buttonRow);
    layout->addWidget(m_description);
    layout->addWidget(m_editor, 1);
    layout->addWidget(m_errorLabel);
    layout->addWidget(m_warningLabel);

    // A stale error mark would point at text that moved: edits remove it.
    connect(m_editor, &QPlainTextEdit::textChanged, this,
            [this] { m_editor->setExtraSelections({}); });
    m_draftTimer = new QTimer(this);
    m_draftTimer->setSingleShot(true);
    m_draftTimer->setInterval(kDraftQuietMs);
    connect(m_editor, &QPlainTextEdit::textChanged, m_draftTimer, qOverload<>(&QTimer::start));
    connect(m_draftTimer, &QTimer::timeout, this, [this] {
        const ToolsValidation draft = validateTools(toolsText());
        emit draftChanged(draft.ok && draft.compactJson != m_appliedJson ? draft.compactJson
                                                                         : QString());
    });
    loadPresets(presetDirectory);
}

QWidget* ToolsEditor::createButtonRow() {
    auto* row = new QWidget(this);
    auto* layout = new QHBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    m_presetBox = new QComboBox(row);
    m_presetBox->setObjectName(QStringLiteral("toolsPresetBox"));
    m_presetBox->setPlaceholderText(tr("Choose a preset…"));
    m_presetBox->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    auto* openButton = new QPushButton(tr("Open…"), row);
    openButton->setObjectName(QStringLiteral("toolsOpenButton"));
    auto* saveButton = new QPushButton(tr("Save…"), row);
    saveButton->setObjectName(QStringLiteral("toolsSaveButton"));
    auto* applyButton = new QPushButton(tr("Apply"), row);
    applyButton->setObjectName(QStringLiteral("toolsApplyButton"));
    applyButton->setDefault(true);
    applyButton->setToolTip(tr("Check the tools and use them for the next turns"));

    layout->addWidget(new QLabel(tr("Preset:"), row));
    layout->addWidget(m_presetBox);
    layout->addStretch(1);
    layout->addWidget(openButton);
    layout->addWidget(saveButton);
    layout->addWidget(applyButton);

    connect(m_presetBox, &QComboBox::activated, this, &ToolsEditor::applyPreset);
    connect(openButton, &QPushButton::clicked, this, &ToolsEditor::openWithDialog);
    connect(saveButton, &QPushButton::clicked, this, &ToolsEditor::saveWithDialog);
    connect(applyButton, &QPushButton::clicked, this, &ToolsEditor::apply);
    return row;
}

void ToolsEditor::loadPresets(const QString& directory) {
    const QDir dir(directory);
    for (const QString& file : dir.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name)) {
        const std::optional<QByteArray> bytes = readFile(dir.filePath(file));
        std::optional<ToolsPreset> preset = bytes ? parsePreset(*bytes) : std::nullopt;
        if (!preset || preset->name.isEmpty()) {
            qWarning("ToolsEditor: %s is not a preset file", qPrintable(dir.filePath(file)));
            continue;
        }
        m_presets.append(*preset);
        m_presetBox->addItem(preset->name);
        m_presetBox->setItemData(m_presetBox->count() - 1, preset->description, Qt::ToolTipRole);
    }
    m_presetBox->setCurrentIndex(-1);
}

void ToolsEditor::applyPreset(int index) {
    if (index < 0 || index >= m_presets.size()) return;
    const ToolsPreset& preset = m_presets[index];
    m_presetBox->setCurrentIndex(index);
    m_description->setText(preset.description);
    m_description->setVisible(!preset.description.isEmpty());
    setToolsText(preset.toolsText);
    emit presetChosen(preset.name, preset.query);
}

bool ToolsEditor::choosePreset(const QString& name) {
    for (int i = 0; i < m_presets.size(); ++i) {
        if (m_presets[i].name == name) {
            applyPreset(i);
            return true;
        }
    }
    return false;
}

QString ToolsEditor::currentPresetName() const {
    const int index = m_presetBox->currentIndex();
    return index >= 0 && index < m_presets.size() ? m_presets[index].name : QString();
}

QString ToolsEditor::currentPresetQuery() const {
    const int index = m_presetBox->currentIndex();
    return index >= 0 && index < m_presets.size() ? m_presets[index].query : QString();
}

QString ToolsEditor::cannedResult(const QString& tool) const {
    return m_appliedResults.value(tool);
}

void ToolsEditor::setToolsText(const QString& text) {
    m_editor->setPlainText(text);
    clearError();
}

QString ToolsEditor::toolsText() const {
    return m_editor->toPlainText();
}

bool ToolsEditor::apply() {
    const ToolsValidation validation = validateTools(toolsText());
    if (!validation.ok) {
        showError(validation);
        return false;
    }
    clearError();
    // Applied all the same: the keywords warned about are ignored, and the user is told which.
    m_warningLabel->setText(validation.warnings.join(QLatin1Char('\n')));
    m_warningLabel->setVisible(!validation.warnings.isEmpty());
    // The canned results go with the tools in force, not with a preset picked since.
    const int preset = m_presetBox->currentIndex();
    m_appliedResults = preset >= 0 && preset < m_presets.size() ? m_presets[preset].results
                                                                : QMap<QString, QString>();
    m_appliedJson = validation.compactJson;
    m_draftTimer->stop();
    emit draftChanged(QString());
    emit toolsApplied(validation.compactJson);
    return true;
}

void ToolsEditor::restoreApplied(const Applied& applied) {
    m_appliedJson = applied.compactJson;
    m_appliedResults = applied.results;
    m_draftTimer->start();
}

bool ToolsEditor::loadFile(const QString& path) {
    const std::optional<QByteArray> bytes = readFile(path);
    if (!bytes) {
        showMessage(tr("cannot read %1").arg(QDir::toNativeSeparators(path)));
        return false;
    }
    m_presetBox->setCurrentIndex(-1);
    m_description->hide();
    const std::optional<ToolsPreset> preset = parsePreset(*bytes);
    setToolsText(preset ? preset->toolsText : QString::fromUtf8(*bytes));
    return true;
}

bool ToolsEditor::saveFile(const QString& path) const {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) return false;
    file.write(toolsText().toUtf8());
    return file.commit();
}

QStringList ToolsEditor::warnings() const {
    return m_warningLabel->isHidden() ? QStringList()
                                      : m_warningLabel->text().split(QLatin1Char('\n'));
}

QString ToolsEditor::errorMessage() const {
    return m_errorLabel->isHidden() ? QString() : m_errorLabel->text();
}

void ToolsEditor::showMessage(const QString& message) {
    QPalette palette = m_errorLabel->palette();
    palette.setColor(QPalette::WindowText, MaskColors::forPalette(this->palette()).errorText);
    m_errorLabel->setPalette(palette);
    m_errorLabel->setText(message);
    m_errorLabel->show();
}

// The error is shown under the editor; the cursor moves to it, its line is tinted and the
// offending character underlined.
void ToolsEditor::showError(const ToolsValidation& validation) {
    m_warningLabel->hide();
    showMessage(validation.message);
    QTextCursor cursor(m_editor->document());
    cursor.setPosition(std::min(validation.offset, m_editor->document()->characterCount() - 1));
    m_editor->setTextCursor(cursor);
    m_editor->setFocus(Qt::OtherFocusReason);

    const QColor errorColor = MaskColors::forPalette(palette()).errorText;
    QTextEdit::ExtraSelection line;
    line.format.setBackground(mixColors(palette().color(QPalette::Base), errorColor, 0.18));
    line.format.setProperty(QTextFormat::FullWidthSelection, true);
    line.cursor = cursor;
    QTextEdit::ExtraSelection character;
    character.format.setUnderlineStyle(QTextCharFormat::WaveUnderline);
    character.format.setUnderlineColor(errorColor);
    character.cursor = cursor;
    if (!character.cursor.movePosition(QTextCursor::NextCharacter, QTextCursor::KeepAnchor))
        character.cursor.movePosition(QTextCursor::PreviousCharacter, QTextCursor::KeepAnchor);
    m_editor->setExtraSelections({line, character});
}

void ToolsEditor::clearError() {
    m_errorLabel->clear();
    m_errorLabel->hide();
    m_editor->setExtraSelections({});
}

// Window-modal with open(), never exec(): the chat keeps streaming while a dialog is up.
void ToolsEditor::openWithDialog() {
    auto* dialog = new QFileDialog(this, tr("Open tools"), QString(),
                                   tr("JSON files (*.json);;All files (*)"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setFileMode(QFileDialog::ExistingFile);
    connect(dialog, &QFileDialog::fileSelected, this, &ToolsEditor::loadFile);
    dialog->open();
}

void ToolsEditor::saveWithDialog() {
    auto* dialog = new QFileDialog(this, tr("Save tools"), QStringLiteral("tools.json"),
                                   tr("JSON files (*.json)"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setAcceptMode(QFileDialog::AcceptSave);
    dialog->setDefaultSuffix(QStringLiteral("json"));
    connect(dialog, &QFileDialog::fileSelected, this, [this](const QString& path) {
        if (!saveFile(path)) showMessage(tr("cannot write %1").arg(QDir::toNativeSeparators(path)));
    });
    dialog->open();
}

void ToolsEditor::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) m_highlighter->setPalette(palette());
}

} // namespace sinkscope::views
