// The Tools tab: the tools editor, what the edited tools would pin (before Apply), how the model's
// template frames the tools (pinned or not, and why), its switch for the tools in the system turn,
// and what the applied tools pinned with the last rebuild's figures.
#pragma once

#include "worker/engine_types.h"

#include <QWidget>

class QCheckBox;
class QLabel;

namespace sinkscope::views {
class ToolsEditor;
} // namespace sinkscope::views

namespace sinkscope::ui {

class ToolsPage : public QWidget {
    Q_OBJECT
public:
    explicit ToolsPage(QWidget* parent = nullptr);

    views::ToolsEditor* editor() const { return m_editor; }
    QCheckBox* systemTurnOption() const { return m_systemTurn; }

    void showSession(const SessionInfo& info);
    void showPreview(const ToolsPreview& preview);
    void hidePreview();
    void setToolsInSystemTurn(bool enabled); // the stored choice; emits nothing

    QString statusText() const;
    QString previewText() const;  // "" while hidden
    QString templateText() const; // "Tools pinned: …" or why they are not

signals:
    void toolsInSystemTurnToggled(bool enabled);

private:
    views::ToolsEditor* m_editor = nullptr;
    QLabel* m_preview = nullptr;  // what the edited tools would pin, before Apply
    QLabel* m_template = nullptr; // how the template frames the tools
    QCheckBox* m_systemTurn = nullptr;
    QLabel* m_status = nullptr; // what the applied tools pinned, and the rebuild's time
};

// The Tools tab's line about the template: where the tools are and whether they are pinned.
QString templateSummaryHtml(const SessionInfo& info);

} // namespace sinkscope::ui
