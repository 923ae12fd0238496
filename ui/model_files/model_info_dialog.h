// What the loaded model is: architecture, size, weight types, vocabulary, chat template and the
// file's window hints. Opened from the status bar's model label and from Help > Model Information.
#pragma once

#include "worker/engine_types.h"

#include <QDialog>

namespace sinkscope::ui {

class ModelInfoDialog : public QDialog {
    Q_OBJECT
public:
    ModelInfoDialog(const ModelInfo& info, QWidget* parent = nullptr);

    // The rows shown, label -> value, in order (for tests and copying).
    const QList<QPair<QString, QString>>& rows() const { return m_rows; }

private:
    QList<QPair<QString, QString>> m_rows;
};

} // namespace sinkscope::ui
