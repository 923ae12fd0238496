#include "chat_panel/tool_result_box.h"

#include "tools/tool_schema.h"
#include "views/view_colors.h"

#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace sinkscope::ui {

namespace {

constexpr int kEditorLines = 3;

QStringList namesOf(const QList<ToolCallView>& calls) {
    QStringList names;
    for (const ToolCallView& call : calls)
        names << call.name;
    return names;
}

} // namespace

ToolResultBox::ToolResultBox(QWidget* parent) : QWidget(parent) {
    m_title = new QLabel(this);
    m_title->setObjectName(QStringLiteral("toolResultTitle"));
    m_editor = new QPlainTextEdit(this);
    m_editor->setObjectName(QStringLiteral("toolResultEditor"));
    m_editor->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_editor->setPlaceholderText(tr("{\"ok\": true}"));
    m_editor->setTabChangesFocus(true);
    m_editor->setFixedHeight(m_editor->fontMetrics().lineSpacing() * kEditorLines + 12);
    m_error = new QLabel(this);
    m_error->setObjectName(QStringLiteral("toolResultError"));
    m_error->setWordWrap(true);
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_error->hide();
    m_canned = new QPushButton(tr("Use preset result"), this);
    m_canned->setObjectName(QStringLiteral("cannedResultButton"));
    m_dismiss = new QPushButton(tr("Dismiss"), this);
    m_dismiss->setObjectName(QStringLiteral("dismissResultButton"));
    m_dismiss->setToolTip(tr("Answer nothing; the next message continues the chat"));
    m_send = new QPushButton(tr("Send result"), this);
    m_send->setObjectName(QStringLiteral("sendResultButton"));
    // Focus lands in the editor, and a tab order set around the box (which takes a focus policy
    // for that) keeps the editor and the buttons, in the order made, together.
    setFocusPolicy(Qt::TabFocus);
    setFocusProxy(m_editor);

    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_title, 1);
    buttons->addWidget(m_canned);
    buttons->addWidget(m_dismiss);
    buttons->addWidget(m_send);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(buttons);
    layout->addWidget(m_editor);
    layout->addWidget(m_error);

    connect(m_send, &QPushButton::clicked, this, &ToolResultBox::submit);
    connect(m_dismiss, &QPushButton::clicked, this, &ToolResultBox::dismiss);
    connect(m_canned, &QPushButton::clicked, this, [this] {
        m_editor->setPlainText(m_cannedJson);
        m_error->hide();
    });
    connect(m_editor, &QPlainTextEdit::textChanged, this, &ToolResultBox::refreshButtons);
    hide();
}

void ToolResultBox::offer(const QList<ToolCallView>& calls, const QString& cannedJson) {
    m_cannedJson = cannedJson;
    m_title->setText(tr("Result of %1 (JSON):").arg(namesOf(calls).join(QStringLiteral(", "))));
    m_canned->setVisible(!cannedJson.isEmpty());
    m_editor->clear();
    m_error->hide();
    show();
    refreshButtons();
}

void ToolResultBox::dismiss() {
    m_error->hide();
    hide();
}

void ToolResultBox::setGenerating(bool generating) {
    m_generating = generating;
    refreshButtons();
}

QString ToolResultBox::errorText() const {
    return m_error->isHidden() ? QString() : m_error->text();
}

void ToolResultBox::refreshButtons() {
    m_send->setEnabled(!m_generating && !m_editor->toPlainText().trimmed().isEmpty());
}

void ToolResultBox::submit() {
    const QString text = m_editor->toPlainText().trimmed();
    const QByteArray bytes = text.toUtf8();
    const JsonDocument document =
        parseJsonDocument(std::string_view(bytes.constData(), size_t(bytes.size())));
    if (text.isEmpty() || document.syntaxError) {
        QPalette colors = m_error->palette();
        colors.setColor(QPalette::WindowText, views::MaskColors::forPalette(palette()).errorText);
        m_error->setPalette(colors);
        m_error->setText(document.syntaxError ? QString::fromStdString(document.syntaxError->text())
                                              : tr("Type the tool's result first."));
        m_error->show();
        return;
    }
    if (m_generating) return;
    dismiss();
    emit resultSubmitted(text);
}

} // namespace sinkscope::ui
