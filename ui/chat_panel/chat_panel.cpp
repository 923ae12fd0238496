#include "chat_panel/chat_panel.h"

#include "chat_panel/call_card.h"
#include "chat_panel/message_input.h"
#include "chat_panel/token_text_view.h"
#include "chat_panel/tool_result_box.h"
#include "worker/display_text.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QTextCursor>
#include <QVBoxLayout>

#include <algorithm>

namespace sinkscope::ui {

namespace {

QString replySummary(const GenerationReport& report) {
    QString summary = tokenCount(report.generatedTokens);
    if (report.generatedTokens > 0)
        summary += QObject::tr(" · %1 tok/s").arg(formatRate(report.tokensPerSecond()));
    summary += QObject::tr(" · prompt %1 in %2 ms · %3")
                   .arg(tokenCount(report.promptTokens), formatMilliseconds(report.prefillSeconds),
                        stopReasonText(report.reason));
    return summary;
}

} // namespace

ChatPanel::ChatPanel(QWidget* parent) : QWidget(parent) {
    m_sinkCaption = new QLabel(tr("Pinned sinks"), this);
    m_sinkBlock = new TokenTextView(this);
    m_sinkBlock->setObjectName(QStringLiteral("sinkBlock"));
    m_sinkBlock->setToolTip(tr("BOS and the tool block: their keys never leave the KV cache."));
    const int sinkLines = 3;
    m_sinkBlock->setFixedHeight(m_sinkBlock->fontMetrics().lineSpacing() * sinkLines + 12);

    m_transcript = new TokenTextView(this);
    m_transcript->setObjectName(QStringLiteral("transcript"));
    m_transcript->setPlaceholderText(
        tr("The conversation appears here. Faded text has left the KV window."));

    m_resultBox = new ToolResultBox(this);
    m_resultBox->setObjectName(QStringLiteral("toolResultBox"));

    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("chatStatus"));
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);

    m_input = new MessageInput(this);
    m_input->setObjectName(QStringLiteral("messageInput"));
    m_send = new QPushButton(tr("Send"), this);
    m_send->setObjectName(QStringLiteral("sendButton"));
    m_send->setDefault(true);
    m_stop = new QPushButton(tr("Stop"), this);
    m_stop->setObjectName(QStringLiteral("stopButton"));
    m_stop->setToolTip(tr("Stop generating (Esc)"));
    m_newChat = new QPushButton(tr("New chat"), this);
    m_newChat->setObjectName(QStringLiteral("newChatButton"));
    m_newChat->setToolTip(tr("Forget the conversation; keep the model and the sinks (Ctrl+N)"));

    auto* header = new QHBoxLayout;
    header->addWidget(m_sinkCaption);
    header->addStretch();
    header->addWidget(m_newChat);

    auto* buttons = new QVBoxLayout;
    buttons->addWidget(m_send);
    buttons->addWidget(m_stop);
    buttons->addStretch();
    auto* inputRow = new QHBoxLayout;
    inputRow->addWidget(m_input, 1);
    inputRow->addLayout(buttons);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(header);
    layout->addWidget(m_sinkBlock);
    layout->addWidget(m_transcript, 1);
    layout->addWidget(m_resultBox);
    layout->addWidget(m_status);
    layout->addLayout(inputRow);

    connect(m_input, &MessageInput::submitted, this, &ChatPanel::submit);
    connect(m_send, &QPushButton::clicked, this, &ChatPanel::submit);
    connect(m_stop, &QPushButton::clicked, this, &ChatPanel::stopRequested);
    connect(m_newChat, &QPushButton::clicked, this, &ChatPanel::newChatRequested);
    connect(m_input, &QPlainTextEdit::textChanged, this, &ChatPanel::refreshButtons);
    connect(m_resultBox, &ToolResultBox::resultSubmitted, this, &ChatPanel::toolResultRequested);
    connect(m_transcript, &TokenTextView::linkClicked, this, [this](const QString& href) {
        if (const std::optional<QString> tool = toolOfLink(href)) emit toolClicked(*tool);
    });
    refreshButtons();
}

QString ChatPanel::statusText() const {
    return m_status->text();
}

void ChatPanel::setGenerating(bool generating) {
    m_generating = generating;
    m_resultBox->setGenerating(generating);
    refreshButtons();
}

void ChatPanel::setReady(bool ready) {
    m_ready = ready;
    refreshButtons();
}

void ChatPanel::setStatus(const QString& text) {
    m_status->setText(text);
}

void ChatPanel::refreshButtons() {
    const bool hasText = !m_input->toPlainText().trimmed().isEmpty();
    m_send->setEnabled(m_ready && hasText && !m_generating);
    m_stop->setEnabled(m_generating);
}

void ChatPanel::submit() {
    const QString text = m_input->toPlainText().trimmed();
    if (text.isEmpty()) {
        setStatus(tr("Type a message first."));
        return;
    }
    if (!m_ready) {
        setStatus(tr("No model is loaded yet."));
        return;
    }
    if (m_generating) {
        setStatus(tr("Still answering: press Esc or Stop first."));
        return;
    }
    m_input->clear();
    m_resultBox->dismiss(); // a message instead of a result: the call goes unanswered
    emit sendRequested(text);
}

void ChatPanel::sendText(const QString& text) {
    m_input->setPlainText(text);
    submit();
}

void ChatPanel::showPrefix(const SessionInfo& session) {
    QList<TokenText> tokens;
    for (qsizetype i = 0; i < session.prefixPieces.size(); ++i) {
        const bool pinned = i < session.sinksUsed; // sinks form a prefix of the stream
        tokens.append({session.prefixPieces[i], pinned ? TokenRole::Sink : TokenRole::Prompt});
    }
    m_sinkBlock->clearTokens();
    m_sinkBlock->appendTokens(tokens);
    m_sinkBlock->moveCursor(QTextCursor::Start); // the block reads from BOS on
    m_sinkCaption->setText(tr("Pinned sinks: %1 of %2 slots · window %3")
                               .arg(session.sinksUsed)
                               .arg(session.sinkSlots)
                               .arg(session.effectiveWindow));
}

void ChatPanel::appendPieces(const QList<StreamPiece>& pieces) {
    QList<TokenText> tokens;
    tokens.reserve(pieces.size());
    for (const StreamPiece& piece : pieces)
        tokens.append({piece.text, piece.generated ? TokenRole::Reply : TokenRole::Prompt});
    m_transcript->appendTokens(tokens);
}

void ChatPanel::showProgress(const GenerationProgress& progress) {
    setStatus(
        tr("Generating… %1 · %2 tok/s")
            .arg(tokenCount(progress.generatedTokens), formatRate(progress.tokensPerSecond())));
}

void ChatPanel::finishReply(const GenerationReport& report, const QString& cannedResult) {
    if (report.rerendered)
        m_transcript->appendNote(
            tr("The template re-rendered earlier turns (%1): the struck-out text is the old "
               "render, replaced by the text after it; %2 re-prefilled.")
                .arg(report.rerenderReason, tokenCount(report.replayedTokens)));
    for (const ToolCallView& call : report.calls)
        m_transcript->appendBlock(callCardHtml(call, report.confidence, palette()));
    if (!report.callError.isEmpty())
        m_transcript->appendBlock(callErrorHtml(report.callError, palette()));
    const QString summary = replySummary(report);
    m_transcript->appendNote(summary);
    setStatus(tr("Last reply: %1").arg(summary));
    if (!report.calls.isEmpty() && report.callError.isEmpty() &&
        report.reason == StopReason::ToolCall)
        m_resultBox->offer(report.calls, cannedResult);
}

void ChatPanel::showSession(const SessionInfo& session) {
    showPrefix(session);
    if (!session.retokenized) return;
    m_transcript->sealTokens(session.transcriptTokens);
    m_transcript->appendNote(
        tr("%1: the conversation above was tokenised anew (%2) and its last %3 re-prefilled "
           "after the new sinks.")
            .arg(session.reason, tokenCount(session.transcriptTokens),
                 tokenCount(session.reprefilledTokens)));
}

void ChatPanel::showRestoredSession(const SessionInfo& session) {
    showPrefix(session);
    clearConversation();
    const QStringList& pieces = session.transcriptPieces;
    qsizetype next = 0;
    const auto appendTurnPieces = [&](qsizetype count, TokenRole role) {
        QList<TokenText> tokens;
        for (const qsizetype end = qMin(pieces.size(), next + count); next < end; ++next)
            tokens.append({pieces[next], role});
        m_transcript->appendTokens(tokens);
    };
    // A model's own template renders the turns together: its tokens come first, then the cards.
    const bool perTurn = std::ranges::any_of(session.conversation,
                                             [](const TurnView& turn) { return turn.tokenCount; });
    if (!perTurn) appendTurnPieces(pieces.size(), TokenRole::Prompt);
    for (const TurnView& turn : session.conversation) {
        const bool assistant = turn.role == TurnRole::Assistant;
        appendTurnPieces(turn.tokenCount, assistant ? TokenRole::Reply : TokenRole::Prompt);
        for (const ToolCallView& call : turn.calls)
            m_transcript->appendBlock(callCardHtml(call, -1, palette()));
    }
    appendTurnPieces(pieces.size() - next, TokenRole::Prompt);
}

void ChatPanel::clearConversation() {
    m_transcript->clearTokens();
    m_resultBox->dismiss();
    setStatus({});
}

void ChatPanel::appendNote(const QString& note) {
    m_transcript->appendNote(note);
}

} // namespace sinkscope::ui
