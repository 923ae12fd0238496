// A turn whose render does not extend the cache, as the playground shows it. The model is a
// synthetic one whose chat template, like DeepSeek-R1's, opens the reasoning in the generation
// prompt ("<think>\n") and writes an earlier assistant turn without it, so the second message's
// render differs from the first turn's inside the first reply. Two messages are sent as a user
// does (Enter, then the Send button); the second reply carries the worker's report of the
// re-render, and the chat shows it: a note with the reason and the tokens re-prefilled, the old
// render's text struck out and faded, the unchanged start still live (a click selects its key).
#include "chat/chat_template.h"
#include "chat_panel/chat_panel.h"
#include "chat_panel/message_input.h"
#include "chat_panel/token_text_view.h"
#include "main_window_fixture.h"
#include "views/view_colors.h"

#include <QLocale>
#include <QPushButton>
#include <QStatusBar>
#include <QTextBlock>
#include <QTextCursor>
#include <QTextDocument>

#include <memory>
#include <string>

using namespace sinkscope;
using namespace sinkscope::ui;
using namespace sinkscope::test;

namespace {

constexpr const char* kReasoningTemplate = R"({%- if tools %}
{{- '<|im_start|>system\nTools:' }}
{%- for tool in tools %}
{{- '\n' + (tool | tojson) }}
{%- endfor %}
{{- '<|im_end|>\n' }}
{%- endif %}
{%- for message in messages %}
{%- if message.role == 'assistant' %}
{{- '<|im_start|>assistant\n' }}
{%- if loop.last %}{{ '<think>\n' }}{% endif %}
{{- message.content.split('</think>')[-1] }}
{%- for call in message.tool_calls or [] %}
{{- '\n<tool_call>\n' + (call.function | tojson) + '\n</tool_call>' }}
{%- endfor %}
{{- '<|im_end|>\n' }}
{%- else %}
{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{ '<|im_start|>assistant\n<think>\n' }}{% endif %})";

const QString kFirstMessage = QStringLiteral("What time is it in Porto right now?");
const QString kSecondMessage = QStringLiteral("And in Lyon?");

QString tokens(qint64 count) {
    return QStringLiteral("%1 tokens").arg(QLocale().toString(count));
}

QTextCharFormat formatAt(QTextDocument* document, int position) {
    QTextCursor cursor(document);
    cursor.setPosition(position + 1); // the format of the character before the cursor
    return cursor.charFormat();
}

// The first reply's text: from the generation prompt's "<think>\n" to the note under the reply.
std::pair<int, int> firstReplyRange(QTextDocument* document) {
    const QString text = document->toPlainText();
    const qsizetype start = text.indexOf(QStringLiteral("<think>\n"));
    if (start < 0) return {-1, -1};
    const int begin = int(start) + 8;
    int end = begin;
    while (end < document->characterCount() - 1 && !formatAt(document, end).fontItalic())
        ++end;
    return {begin, end};
}

// The engine's own render of the first turn, as the worker rendered it (the window's tools).
std::string firstTurnRender(const QString& modelPath) {
    std::string error;
    const std::unique_ptr<Model> model = Model::load(modelPath.toStdString(), error);
    if (!model) return {};
    const ChatTemplate chat(*model);
    const ToolsParseResult tools = parseTools(kSmallTools.toStdString());
    if (!chat.modelTemplate() || !tools.ok()) return {};
    const nlohmann::ordered_json messages =
        nlohmann::ordered_json::array({userMessage(kFirstMessage.toStdString())});
    return chat.modelTemplate()
        ->render(messages, openAiTools(*tools.tools), true, error)
        .value_or(std::string());
}

} // namespace

class TestRerenderView : public QObject, public MainWindowFixture {
    Q_OBJECT

private slots:
    void initTestCase() {
        setUpFolders();
        SyntheticSpec spec;
        spec.extraSpecialTokens = {"<|im_start|>", "<|im_end|>"};
        spec.chatTemplate = kReasoningTemplate;
        m_modelPath = m_dir.filePath(QStringLiteral("reasoning.gguf"));
        std::string error;
        QVERIFY2(writeSyntheticModel(spec, QFile::encodeName(m_modelPath).toStdString(), error),
                 error.c_str());
    }
    // A window that holds both turns: nothing leaves it, so only the re-render fades text.
    void init() {
        saveSettings([](AppSettings& settings) { settings.engine.kvWindow = 1024; });
    }

    void aRerenderedTurnIsShownAsSuch() {
        WindowPtr window = openWindow();
        QVERIFY(window);
        const SessionInfo session = window->sessionInfo();
        QCOMPARE(session.chatLayout, QStringLiteral("template"));
        QVERIFY2(session.chatTemplate.notice.isEmpty(), qPrintable(session.chatTemplate.notice));
        QCOMPARE(session.effectiveWindow, qint64(1024));
        const qint64 prefix = session.layout.prefixLength;
        TokenTextView* transcript = window->chatPanel()->transcript();
        QTextDocument* document = transcript->document();
        QSignalSpy replies(window.get(), &MainWindow::replyFinished);

        // The first turn extends the pinned block: nothing is re-rendered.
        typeMessage(*window, kFirstMessage);
        const GenerationReport first = waitForReply(replies);
        QCOMPARE(first.reason, StopReason::MaxTokens);
        QVERIFY(!first.rerendered);
        QVERIFY(first.rerenderReason.isEmpty());
        QCOMPARE(first.tokensSeen, prefix + first.promptTokens + first.generatedTokens);
        const qint64 firstTurnTokens = transcript->tokenCount();
        QCOMPARE(firstTurnTokens, qint64(first.promptTokens + first.generatedTokens));
        QVERIFY(!document->toPlainText().contains(QStringLiteral("re-rendered")));
        const auto [replyBegin, replyEnd] = firstReplyRange(document);
        QVERIFY2(replyBegin > 0 && replyEnd > replyBegin, qPrintable(document->toPlainText()));
        const int firstMessageAt = int(document->toPlainText().indexOf(kFirstMessage));
        QVERIFY(firstMessageAt >= 0 && firstMessageAt < replyBegin);
        const QColor liveReply = formatAt(document, replyBegin).foreground().color();
        const QColor livePrompt = formatAt(document, firstMessageAt).foreground().color();
        QVERIFY(!formatAt(document, replyBegin).fontStrikeOut());

        // The second message, sent with the button: the template writes the first reply anew.
        QTest::keyClicks(window->chatPanel()->input(), kSecondMessage);
        QTest::mouseClick(window->chatPanel()->sendButton(), Qt::LeftButton);
        const GenerationReport second = waitForReply(replies);
        QCOMPARE(second.reason, StopReason::MaxTokens);

        // The worker's report: the reason names where the renders part, which the engine's own
        // render of the first turn places at its "<think>\n".
        QVERIFY(second.rerendered);
        const std::string render = firstTurnRender(m_modelPath);
        QVERIFY(render.ends_with("<think>\n"));
        const QString reasonStart =
            QStringLiteral("the template renders the conversation differently from the cache at "
                           "byte %1: ")
                .arg(render.size() - 8);
        QVERIFY2(second.rerenderReason.startsWith(reasonStart), qPrintable(second.rerenderReason));
        QVERIFY2(second.rerenderReason.contains(QStringLiteral("where the cache holds "
                                                               "\"<think>\\n")),
                 qPrintable(second.rerenderReason));
        // The chat's tokens go on from where the renders still agree: the transcript tokens
        // kept, all re-prefilled (the window holds them), then this turn.
        const qint64 kept = transcript->tokenCount() - second.promptTokens - second.generatedTokens;
        QVERIFY2(kept > 0 && kept < firstTurnTokens,
                 qPrintable(QStringLiteral("%1 of %2").arg(kept).arg(firstTurnTokens)));
        QCOMPARE(qint64(second.replayedTokens), qMin(session.effectiveWindow, kept));
        QCOMPARE(second.tokensSeen,
                 prefix + second.replayedTokens + second.promptTokens + second.generatedTokens);

        // What the user reads: one note naming the re-render, its reason and the count.
        const QString note =
            QStringLiteral("The template re-rendered earlier turns (%1): the struck-out text is "
                           "the old render, replaced by the text after it; %2 re-prefilled.")
                .arg(second.rerenderReason, tokens(second.replayedTokens));
        const QString shown = document->toPlainText();
        QCOMPARE(shown.count(note), 1);
        const int noteAt = int(shown.indexOf(note));
        QVERIFY(noteAt > replyEnd);
        QVERIFY(formatAt(document, noteAt).fontItalic());

        // The old render's text (the first reply after its "<think>\n") is struck out and faded;
        // the first message, which the renders share, is as it was.
        const QColor base = transcript->palette().color(QPalette::Base);
        for (int position = replyBegin; position < replyEnd; ++position) {
            if (shown.at(position).isSpace()) continue; // line breaks, a note's own line
            const QTextCharFormat format = formatAt(document, position);
            QVERIFY2(format.fontStrikeOut(), qPrintable(QString::number(position)));
            QCOMPARE(format.foreground().color(), views::mixColors(liveReply, base, 0.6));
        }
        QCOMPARE(formatAt(document, firstMessageAt).foreground().color(), livePrompt);
        QVERIFY(!formatAt(document, firstMessageAt).fontStrikeOut());
        const int secondMessageAt = int(shown.lastIndexOf(kSecondMessage));
        QVERIFY(secondMessageAt > replyEnd);
        QCOMPARE(formatAt(document, secondMessageAt).foreground().color(), livePrompt);
        QCOMPARE(transcript->fadedBefore(), 0);

        // The unchanged start is still the session's: a click on the first message, in the
        // token view, selects that token and its key in the re-prefilled window.
        window->chatPanel()->showTokensAction()->setChecked(true);
        QVERIFY(transcript->isVisible());
        QTextCursor cursor(document);
        cursor.setPosition(firstMessageAt + 2);
        transcript->setTextCursor(cursor);
        transcript->ensureCursorVisible();
        QTest::mouseClick(transcript->viewport(), Qt::LeftButton, {},
                          transcript->cursorRect(cursor).center());
        const qint64 clicked = transcript->highlightedToken();
        QVERIFY(clicked >= 0 && clicked < kept);
        QVERIFY2(kFirstMessage.contains(transcript->highlightedText().trimmed()),
                 qPrintable(transcript->highlightedText()));
        QVERIFY2(window->statusBar()->currentMessage().startsWith(
                     QStringLiteral("Key position %1:").arg(prefix + clicked)),
                 qPrintable(window->statusBar()->currentMessage()));
    }
};

QTEST_MAIN(TestRerenderView)
#include "test_rerender_view.moc"
