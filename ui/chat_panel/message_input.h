// The chat's input box. By default Enter sends and Shift+Enter starts a new line; with
// sendWithCtrlEnter, for those who write several lines, Enter starts a new line. Ctrl+Enter sends
// in both.
#pragma once

#include <QPlainTextEdit>

namespace sinkscope::ui {

class MessageInput : public QPlainTextEdit {
    Q_OBJECT
public:
    explicit MessageInput(QWidget* parent = nullptr);
    QSize sizeHint() const override;
    void setSendWithCtrlEnter(bool enabled);
    bool sendsWithCtrlEnter() const { return m_sendWithCtrlEnter; }

signals:
    void submitted();

protected:
    void keyPressEvent(QKeyEvent* event) override;

private:
    bool m_sendWithCtrlEnter = false;
};

} // namespace sinkscope::ui
