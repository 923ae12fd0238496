#include "chat_panel/message_input.h"

#include <QKeyEvent>

namespace sinkscope::ui {

MessageInput::MessageInput(QWidget* parent) : QPlainTextEdit(parent) {
    setTabChangesFocus(true);
    setPlaceholderText(tr("Message the model. Enter sends, Shift+Enter adds a line."));
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
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
    if (enter && !(event->modifiers() & Qt::ShiftModifier)) {
        event->accept();
        emit submitted();
        return;
    }
    QPlainTextEdit::keyPressEvent(event);
}

} // namespace sinkscope::ui
