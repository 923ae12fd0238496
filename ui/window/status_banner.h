// A dismissible strip above the window's content for errors and notices: never a modal dialog,
// so nothing blocks while the engine is generating.
#pragma once

#include <QFrame>

class QLabel;
class QToolButton;

namespace sinkscope::ui {

class StatusBanner : public QFrame {
    Q_OBJECT
public:
    explicit StatusBanner(QWidget* parent = nullptr);

    void showError(const QString& message);
    void showNotice(const QString& message);
    QString message() const;
    bool isError() const { return m_error; }

private:
    void showMessage(const QString& message, bool error);

    QLabel* m_text = nullptr;
    QToolButton* m_close = nullptr;
    bool m_error = false;
};

} // namespace sinkscope::ui
