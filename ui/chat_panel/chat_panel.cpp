#include "chat_panel/chat_panel.h"

#include "chat_panel/call_card.h"
#include "chat_panel/chat_markdown.h"
#include "chat_panel/chat_view.h"
#include "chat_panel/message_input.h"
#include "chat_panel/token_text_view.h"
#include "chat_panel/tool_result_box.h"
#include "worker/display_text.h"

#include <QAction>
#include <QClipboard>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QTextCursor>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace sinkscope::ui {

namespace {

constexpr qint64 kRestoredTokensShown = 8192;

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
    m_transcript->setToolTip(tr("Each token's background: orange pinned as a sink, blue in the "
                                "window, red evicted. Hover a token for its id and position."));
    m_chatView = new ChatView(this);
    m_chatView->setObjectName(QStringLiteral("chatView"));
    m_chatView->setPlaceholderText(
        tr("The conversation appears here. Faded messages have left the KV window."));

    m_showTokensAction = new QAction(tr("Show &Tokens"), this);
    m_showTokensAction->setObjectName(QStringLiteral("showTokensAction"));
    m_showTokensAction->setIconText(tr("Show tokens"));
    m_showTokensAction->setCheckable(true);
    m_showTokensAction->setShortcut(QKeySequence(tr("Ctrl+T")));
    m_showTokensAction->setToolTip(tr(
        "The exact text the model sees, token by token, with the sinks and the window (Ctrl+T)"));
    m_copyChatAction = new QAction(tr("Copy Chat as &Markdown"), this);
    m_copyChatAction->setObjectName(QStringLiteral("copyChatAction"));
    m_copyChatAction->setIconText(tr("Copy chat"));
    m_copyChatAction->setShortcut(QKeySequence(tr("Ctrl+Shift+C")));
    m_copyChatAction->setToolTip(tr("Copy the whole chat as Markdown (Ctrl+Shift+C)"));
    m_findAction = new QAction(tr("&Find in Chat…"), this);
    m_findAction->setObjectName(QStringLiteral("findInChatAction"));
    m_findAction->setShortcut(QKeySequence::Find);
    m_findAction->setToolTip(tr("Find a message by its text (Ctrl+F)"));
    m_findBar = new QLineEdit(this);
    m_findBar->setObjectName(QStringLiteral("findBar"));
    m_findBar->setPlaceholderText(
        tr("Find in chat: Enter finds the next older message, Esc closes"));
    m_findBar->setClearButtonEnabled(true);
    m_findBar->hide();
    m_findBar->installEventFilter(this); // Esc closes it rather than stopping a reply
    addAction(m_showTokensAction);
    addAction(m_copyChatAction);
    addAction(m_findAction);
    m_chatView->setMenuActions({m_showTokensAction, m_copyChatAction});
    auto* showTokensButton = new QToolButton(this);
    showTokensButton->setObjectName(QStringLiteral("showTokensButton"));
    showTokensButton->setDefaultAction(m_showTokensAction);
    auto* copyChatButton = new QToolButton(this);
    copyChatButton->setObjectName(QStringLiteral("copyChatButton"));
    copyChatButton->setDefaultAction(m_copyChatAction);

    m_resultBox = new ToolResultBox(this);
    m_resultBox->setObjectName(QStringLiteral("toolResultBox"));

    m_status = new views::LiveLabel(tr("Generating… 1,000 tokens · 25.0 tok/s"), this);
    m_status->setObjectName(QStringLiteral("chatStatus"));

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
    header->addWidget(showTokensButton);
    header->addWidget(copyChatButton);
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
    layout->addWidget(m_chatView, 1);
    layout->addWidget(m_resultBox);
    layout->addWidget(m_findBar);
    layout->addWidget(m_status);
    layout->addLayout(inputRow);

    // Tab from the message box: Send (Stop while answering), the chat (the sink block and the
    // tokens when shown), a call's result box, then the chat's own buttons. Creation order would
    // start at the sink block and end at the input.
    QWidget* const tabChain[] = {m_input,        m_send,     m_stop,      m_sinkBlock,
                                 m_transcript,   m_chatView, m_resultBox, showTokensButton,
                                 copyChatButton, m_newChat};
    for (size_t i = 1; i < std::size(tabChain); ++i)
        setTabOrder(tabChain[i - 1], tabChain[i]);

    connect(m_input, &MessageInput::submitted, this, &ChatPanel::submit);
    connect(m_send, &QPushButton::clicked, this, &ChatPanel::submit);
    connect(m_stop, &QPushButton::clicked, this, &ChatPanel::stopRequested);
    connect(m_newChat, &QPushButton::clicked, this, &ChatPanel::newChatRequested);
    connect(m_input, &QPlainTextEdit::textChanged, this, &ChatPanel::refreshButtons);
    connect(m_resultBox, &ToolResultBox::resultSubmitted, this, [this](const QString& json) {
        m_chatView->addSent(TurnRole::ToolResult, json);
        emit toolResultRequested(json);
    });
    connect(m_transcript, &TokenTextView::linkClicked, this, [this](const QString& href) {
        if (const std::optional<QString> tool = toolOfLink(href)) emit toolClicked(*tool);
    });
    connect(m_chatView, &ChatView::toolClicked, this, &ChatPanel::toolClicked);
    connect(m_chatView, &ChatView::viewTokensRequested, this, &ChatPanel::viewTokens);
    connect(m_transcript, &TokenTextView::fadedBeforeChanged, m_chatView,
            &ChatView::setFadedBefore);
    connect(m_showTokensAction, &QAction::toggled, this, &ChatPanel::setShowTokens);
    connect(m_copyChatAction, &QAction::triggered, this, &ChatPanel::copyChat);
    connect(m_findAction, &QAction::triggered, this, &ChatPanel::showFindBar);
    connect(m_findBar, &QLineEdit::returnPressed, this, &ChatPanel::findNext);
    setShowTokens(false);
    refreshButtons();
}

bool ChatPanel::showsTokens() const {
    return m_showTokensAction->isChecked();
}

void ChatPanel::setShowTokens(bool show) {
    m_showTokensAction->setChecked(show);
    m_chatView->setVisible(!show);
    m_transcript->setVisible(show);
    m_sinkBlock->setVisible(show); // its text is the template's: markers and tool JSON
}

void ChatPanel::viewTokens(qint64 firstToken, qint64 endToken) {
    setShowTokens(true);
    m_transcript->highlightTokens(firstToken, endToken);
    if (firstToken < m_transcript->firstTokenShown())
        setStatus(tr("That message's tokens are not shown: the token view starts at token %1 "
                     "(another model's tokenisation, or the start of a long restored session).")
                      .arg(QLocale().toString(m_transcript->firstTokenShown())));
}

bool ChatPanel::eventFilter(QObject* watched, QEvent* event) {
    const bool escape =
        (event->type() == QEvent::ShortcutOverride || event->type() == QEvent::KeyPress) &&
        static_cast<QKeyEvent*>(event)->key() == Qt::Key_Escape;
    if (watched != m_findBar || !escape) return QWidget::eventFilter(watched, event);
    event->accept();
    if (event->type() == QEvent::KeyPress) {
        m_findBar->hide();
        m_chatView->setFocus(Qt::OtherFocusReason);
    }
    return true;
}

void ChatPanel::copyChat() {
    const qsizetype count = m_chatView->messages().size();
    setStatus(tr("Copying the chat…"));
    chatMarkdownInBackground(this, m_chatView->messages(), [this, count](const QString& markdown) {
        QGuiApplication::clipboard()->setText(markdown);
        setStatus(tr("Copied the chat as Markdown (%1).")
                      .arg(countOf(count, tr("message"), tr("messages"))));
    });
}

void ChatPanel::showFindBar() {
    setShowTokens(false);
    m_findBar->show();
    m_findBar->setFocus(Qt::ShortcutFocusReason);
    m_findBar->selectAll();
}

void ChatPanel::findNext() {
    const QString text = m_findBar->text().trimmed();
    if (text.isEmpty()) return;
    const qsizetype found = m_chatView->findOlder(text);
    if (found < 0) {
        setStatus(tr("No message holds \"%1\".").arg(text));
        return;
    }
    setStatus(
        tr("Message %1 of %2")
            .arg(QLocale().toString(found + 1), QLocale().toString(m_chatView->messages().size())));
}

QString ChatPanel::chatMarkdown() const {
    return ui::chatMarkdown(m_chatView->messages());
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
    m_chatView->addSent(TurnRole::User, text);
    emit sendRequested(text);
}

void ChatPanel::sendText(const QString& text) {
    m_input->setPlainText(text);
    submit();
}

void ChatPanel::showPrefix(const SessionInfo& session) {
    m_sinksUsed = session.sinksUsed;
    const CallFormat& calls = session.chatTemplate.callFormat;
    m_chatView->setCallMarkers(
        {QString::fromStdString(calls.open), QString::fromStdString(calls.close)});
    QList<TokenText> tokens;
    for (qsizetype i = 0; i < session.prefixPieces.size(); ++i) {
        const bool pinned = i < session.sinksUsed; // sinks form a prefix of the stream
        tokens.append({session.prefixPieces[i], pinned ? TokenRole::Sink : TokenRole::Prompt,
                       session.prefixIds.value(i, -1), i});
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
    for (const StreamPiece& piece : pieces) {
        // With the first N positions pinned, the transcript's first tokens may be sinks too.
        const bool pinned = piece.position >= 0 && piece.position < m_sinksUsed;
        const TokenRole role = pinned            ? TokenRole::Sink
                               : piece.generated ? TokenRole::Reply
                                                 : TokenRole::Prompt;
        tokens.append({piece.text, role, piece.tokenId, piece.position});
    }
    m_transcript->appendTokens(tokens);
    m_chatView->appendPieces(pieces);
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
    if (!report.conversation.isEmpty())
        m_chatView->setConversation(report.conversation, m_transcript->tokenCount());
    m_chatView->finishReply(report.calls, report.confidence, report.callError, summary);
    setStatus(tr("Last reply: %1").arg(summary));
    if (!report.calls.isEmpty() && report.callError.isEmpty() &&
        report.reason == StopReason::ToolCall)
        m_resultBox->offer(report.calls, cannedResult);
}

void ChatPanel::showSession(const SessionInfo& session) {
    showPrefix(session);
    if (!session.retokenized) {
        m_chatView->setConversation(session.conversation, m_transcript->tokenCount());
        return;
    }
    m_transcript->sealTokens(session.transcriptTokens);
    m_chatView->setTranscriptTexts(session.transcriptPieces); // the new tokens, not the old
    m_chatView->setConversation(session.conversation, session.transcriptTokens);
    appendNote(tr("%1: the conversation above was tokenised anew (%2) and its last %3 re-prefilled "
                  "after the new sinks.")
                   .arg(session.reason, tokenCount(session.transcriptTokens),
                        tokenCount(session.reprefilledTokens)));
}

void ChatPanel::showRestoredSession(const SessionInfo& session) {
    showPrefix(session);
    clearConversation();
    const QStringList& pieces = session.transcriptPieces;
    // The token view starts at the newest kRestoredTokensShown tokens, the window always among
    // them: a rich-text document of a 50,000-turn transcript would take the GUI thread seconds.
    const qint64 shownFrom = qBound<qint64>(
        0, qMin<qint64>(session.layout.transcriptBase, pieces.size() - kRestoredTokensShown),
        pieces.size());
    if (shownFrom > 0) {
        m_transcript->sealTokens(shownFrom);
        m_transcript->appendNote(
            tr("The session's first %1 are not shown here: the token view starts at the newest "
               "%2.")
                .arg(tokenCount(shownFrom), tokenCount(pieces.size() - shownFrom)));
    }
    qsizetype next = 0;
    const auto appendTurnPieces = [&](qsizetype count, TokenRole role) {
        QList<TokenText> tokens;
        const qsizetype end = qMin(pieces.size(), next + count);
        for (next = qMax<qsizetype>(next, qMin<qsizetype>(shownFrom, end)); next < end; ++next)
            tokens.append({pieces[next], role, session.transcriptIds.value(next, -1),
                           session.layout.positionOf(next)});
        m_transcript->appendTokens(tokens);
    };
    // A model's own template renders the turns together: its tokens come first, then the cards.
    const bool perTurn = std::ranges::any_of(session.conversation,
                                             [](const TurnView& turn) { return turn.tokenCount; });
    if (!perTurn) appendTurnPieces(pieces.size(), TokenRole::Prompt);
    for (const TurnView& turn : session.conversation) {
        const bool assistant = turn.role == TurnRole::Assistant;
        appendTurnPieces(turn.tokenCount, assistant ? TokenRole::Reply : TokenRole::Prompt);
        if (next <= shownFrom && shownFrom > 0) continue; // its tokens are not shown
        for (const ToolCallView& call : turn.calls)
            m_transcript->appendBlock(callCardHtml(call, -1, palette()));
    }
    appendTurnPieces(pieces.size() - next, TokenRole::Prompt);
    m_chatView->setTranscriptTexts(pieces);
    m_chatView->setConversation(session.conversation, m_transcript->tokenCount());
}

void ChatPanel::clearConversation() {
    m_transcript->clearTokens();
    m_chatView->clearChat();
    m_resultBox->dismiss();
    setStatus({});
}

void ChatPanel::appendNote(const QString& note) {
    m_transcript->appendNote(note);
    m_chatView->appendNote(note);
}

} // namespace sinkscope::ui
