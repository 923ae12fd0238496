// The chat's input box: Enter sends, Shift+Enter starts a new line.
#pragma once

#include <QPlainTextEdit>

namespace sinkscope::ui {

class MessageInput : public QPlainTextEdit {
    Q_OBJECT
public:
    explicit MessageInput(QWidget* parent = nullptr);
    QSize sizeHint() const override;

signals:
    void submitted();

protected:
    void keyPressEvent(QKeyEvent* event) override;
};

} // namespace sinkscope::ui
