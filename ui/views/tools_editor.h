// The tools editor: a JSON editor for the tool list, with presets, Open…/Save… and Apply.
// Apply checks the text (JSON, an array of tools with a string "name"); an error is shown under
// the editor and marked in the text, and nothing is emitted until the text is valid.
#pragma once

#include "views/tools_validation.h"

#include <QList>
#include <QMap>
#include <QString>
#include <QWidget>

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QTimer;

namespace sinkscope::views {

class JsonHighlighter;

// A preset file: {"name": "...", "description": "...", "tools": [...], "query": "...",
// "results": {"tool": result, ...}} (engine/tools/tool_preset.h).
struct ToolsPreset {
    QString name;
    QString description;
    QString toolsText;              // the tools array, indented for the editor
    QString query;                  // a sample query that uses the tools
    QMap<QString, QString> results; // tool name -> its canned result, compact JSON
};

class ToolsEditor : public QWidget {
    Q_OBJECT

public:
    // Presets are the *.json files of presetDirectory, a folder or a Qt resource prefix.
    explicit ToolsEditor(const QString& presetDirectory = QStringLiteral(":/presets"),
                         QWidget* parent = nullptr);

    void setToolsText(const QString& text);
    QString toolsText() const;

    QList<ToolsPreset> presets() const { return m_presets; }
    bool choosePreset(const QString& name); // as if picked in the combo box; false if unknown
    QString currentPresetName() const;      // "" when no preset is chosen
    QString currentPresetQuery() const;
    // The canned result for `tool` (compact JSON) of the preset last applied; "" when none.
    QString cannedResult(const QString& tool) const;

    bool apply(); // validates; emits toolsApplied and returns true when the text is valid
    // What an apply took in: the tools and their preset's canned results. An apply the engine
    // did not carry out (cancelled) is undone with restoreApplied(the earlier one): the text
    // stays as edited and is previewed as a draft again.
    struct Applied {
        QString compactJson;
        QMap<QString, QString> results;
    };
    Applied applied() const { return {m_appliedJson, m_appliedResults}; }
    void restoreApplied(const Applied& applied);
    bool loadFile(const QString& path); // a tools array, or a preset file (takes its tools)
    bool saveFile(const QString& path) const;

    QString errorMessage() const; // "" when the last apply succeeded
    QStringList warnings() const; // what the last successful apply ignored (unsupported keywords)
    QPlainTextEdit* textEdit() const { return m_editor; }

signals:
    void toolsApplied(const QString& compactJson);
    // Shortly after an edit: the edited tools (compact JSON) when they are valid and differ from
    // those applied, else "" (nothing to preview).
    void draftChanged(const QString& compactJson);
    void presetChosen(const QString& name, const QString& query);

protected:
    void changeEvent(QEvent* event) override;

private:
    void loadPresets(const QString& directory);
    QWidget* createButtonRow();
    void applyPreset(int index);
    void showError(const ToolsValidation& validation);
    void showMessage(const QString& message);
    void clearError();
    void openWithDialog();
    void saveWithDialog();

    QList<ToolsPreset> m_presets;
    QMap<QString, QString> m_appliedResults; // the canned results of the preset last applied
    QString m_appliedJson;                   // the compact JSON last applied
    QTimer* m_draftTimer = nullptr;          // quiet time after an edit before draftChanged
    QComboBox* m_presetBox = nullptr;
    QLabel* m_description = nullptr;
    QPlainTextEdit* m_editor = nullptr;
    JsonHighlighter* m_highlighter = nullptr;
    QLabel* m_errorLabel = nullptr;
    QLabel* m_warningLabel = nullptr;
};

} // namespace sinkscope::views
