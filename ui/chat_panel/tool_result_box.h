// Under the chat after a tool call: the user types the tool's result as JSON (or takes the
// preset's canned result) and sends it; the assistant continues from <tool_result>. Invalid JSON
// is shown in place, with its line and column, and nothing is sent. Never a dialog.
#pragma once

#include "worker/engine_types.h"

#include <QWidget>

class QLabel;
class QPlainTextEdit;
class QPushButton;

namespace sinkscope::ui {

class ToolResultBox : public QWidget {
    Q_OBJECT
public:
    explicit ToolResultBox(QWidget* parent = nullptr);

    // Shows the box for these calls; `cannedJson` (may be empty) is the preset's result.
    void offer(const QList<ToolCallView>& calls, const QString& cannedJson);
    void dismiss();
    void setGenerating(bool generating);

    QPlainTextEdit* editor() const { return m_editor; }
    QPushButton* sendButton() const { return m_send; }
    QPushButton* cannedButton() const { return m_canned; }
    QString errorText() const; // "" when there is no error shown

signals:
    void resultSubmitted(const QString& json);

private:
    void submit();
    void refreshButtons();

    QLabel* m_title = nullptr;
    QPlainTextEdit* m_editor = nullptr;
    QLabel* m_error = nullptr;
    QPushButton* m_canned = nullptr;
    QPushButton* m_send = nullptr;
    QPushButton* m_dismiss = nullptr;
    QString m_cannedJson;
    bool m_generating = false;
};

} // namespace sinkscope::ui
