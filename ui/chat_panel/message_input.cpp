#include "chat_panel/message_input.h"

#include <QKeyEvent>

namespace sinkscope::ui {

MessageInput::MessageInput(QWidget* parent) : QPlainTextEdit(parent) {
    setTabChangesFocus(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    setSendWithCtrlEnter(false);
}

void MessageInput::setSendWithCtrlEnter(bool enabled) {
    m_sendWithCtrlEnter = enabled;
    setPlaceholderText(enabled ? tr("Message the model. Ctrl+Enter sends, Enter adds a line.")
                               : tr("Message the model. Enter sends, Shift+Enter adds a line."));
}

QSize MessageInput::sizeHint() const {
    // Three lines of text: room for a short multi-line message without crowding the transcript.
    const int lines = 3;
    const int height = fontMetrics().lineSpacing() * lines + int(document()->documentMargin() * 2) +
                       frameWidth() * 2;
    return {QPlainTextEdit::sizeHint().width(), height};
}

void MessageInput::keyPressEvent(QKeyEvent* event) {
    const bool enter = event->key() == Qt::Key_Return || event->key() == Qt::Key_Enter;
    const Qt::KeyboardModifiers modifiers = event->modifiers();
    const bool sends = (modifiers & Qt::ControlModifier) ||
                       (!m_sendWithCtrlEnter && !(modifiers & Qt::ShiftModifier));
    if (enter && sends) {
        event->accept();
        emit submitted();
        return;
    }
    QPlainTextEdit::keyPressEvent(event);
}

} // namespace sinkscope::ui
