// The playground's chat with tools pinned as sinks, driven like a user: a call shown as a card
// with its attribution (whose tool names highlight that tool's sink slots), a tool result typed
// wrong and then right, tools edited and applied mid-chat, and another model (or a corrupt one)
// loaded mid-chat. The model is a synthetic one whose vocabulary has Needle's chat markers.
#include <QtTest>

#include "chat_panel/call_card.h"
#include "chat_panel/chat_panel.h"
#include "chat_panel/chat_view.h"
#include "chat_panel/message_input.h"
#include "chat_panel/token_text_view.h"
#include "chat_panel/tool_result_box.h"
#include "tool_test_support.h"
#include "views/kv_cache_model.h"
#include "views/kv_cache_view.h"
#include "views/mask_heatmap.h"
#include "views/tools_editor.h"
#include "window/app_settings.h"
#include "window/main_window.h"
#include "window/status_banner.h"
#include "window_test_support.h"
#include "worker/engine_client.h"

#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QTableView>
#include <QTemporaryDir>
#include <QTextBlock>

#include <memory>
#include <numeric>

using namespace sinkscope;
using namespace sinkscope::ui;

namespace {

using test::linkPoint;
using test::typeMessage;
using test::useTemporaryAppFolders;

constexpr int kWaitMs = 60000;
constexpr int kWindow = 64;
const QString kSentiment = QStringLiteral("Review sentiment");
const QString kSmartHome = QStringLiteral("Smart home");
// Smart home's set_light alone, shorter: fewer sinks.
const QString kEditedTools = QStringLiteral(
    R"([{"name": "set_light", "description": "Lights on or off", "parameters": {"type": )"
    R"("object", "properties": {"room": {"type": "string"}}, "required": ["room"]}}])");

using WindowPtr = std::unique_ptr<MainWindow>;

GenerationReport waitForReply(QSignalSpy& replies) {
    if (replies.isEmpty() && !replies.wait(kWaitMs)) return {};
    return replies.takeFirst().at(0).value<GenerationReport>();
}

SessionInfo waitForSession(QSignalSpy& sessions) {
    if (sessions.isEmpty() && !sessions.wait(kWaitMs)) return {};
    return sessions.takeFirst().at(0).value<SessionInfo>();
}

QPushButton* buttonWithText(QWidget* parent, const QString& text) {
    for (QPushButton* button : parent->findChildren<QPushButton*>())
        if (button->text() == text) return button;
    return nullptr;
}

QList<qint64> positionsOf(const ToolSpan& span) {
    QList<qint64> positions(span.count());
    std::iota(positions.begin(), positions.end(), span.begin);
    return positions;
}

// Occupied rows among the KV view's sink slots (rows [0, sinkSlots)).
int occupiedSinkRows(const MainWindow& window) {
    const QAbstractItemModel* model = window.kvCacheView()->slotTable()->model();
    int occupied = 0;
    for (int row = 0; row < window.sessionInfo().sinkSlots && row < model->rowCount(); ++row)
        occupied += model->index(row, 0).data(views::KvCacheModel::PositionRole).toLongLong() >= 0;
    return occupied;
}

} // namespace

class TestToolChat : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void callShowsACardWithItsAttribution();
    void invalidToolResultSendsNothingValidOneContinues();
    void editedPresetAppliedMidChat();
    void anotherModelKeepsTheConversation();

private:
    void saveSettings(CallPolicy calls);
    WindowPtr openWindow();
    // Picks `preset` in the Tools tab and clicks Apply; returns the session it pinned.
    SessionInfo applyPreset(MainWindow& window, const QString& preset);
    // A window whose first reply (to a sentiment preset, calls required) was a call.
    WindowPtr windowWithACall(GenerationReport& report);

    QTemporaryDir m_dir;
    QString m_needleModel;
    QString m_plainModel;
};

void TestToolChat::initTestCase() {
    QVERIFY(m_dir.isValid());
    useTemporaryAppFolders(m_dir);

    std::string error;
    m_needleModel = m_dir.filePath(QStringLiteral("needle.gguf"));
    QVERIFY2(writeSyntheticModel(test::smallSpec(true),
                                 QFile::encodeName(m_needleModel).toStdString(), error),
             error.c_str());
    m_plainModel = m_dir.filePath(QStringLiteral("plain.gguf"));
    QVERIFY2(
        writeSyntheticModel(SyntheticSpec{}, QFile::encodeName(m_plainModel).toStdString(), error),
        error.c_str());
}

void TestToolChat::init() {
    saveSettings(CallPolicy::Auto);
}

void TestToolChat::saveSettings(CallPolicy calls) {
    QSettings(QStringLiteral("Sinkscope"), QStringLiteral("sinkscope")).clear();
    AppSettings settings;
    settings.modelPath = m_needleModel;
    settings.toolsText = QStringLiteral(R"([{"name":"get_time"}])");
    settings.engine.kvWindow = kWindow;
    settings.limits.maxNewTokens = 32;
    settings.limits.stopAtNewline = false;
    settings.limits.calls = calls;
    settings.save();
}

WindowPtr TestToolChat::openWindow() {
    return test::openLoadedWindow(kWaitMs);
}

SessionInfo TestToolChat::applyPreset(MainWindow& window, const QString& preset) {
    window.tabs()->setCurrentIndex(2); // Tools
    QSignalSpy sessions(&window, &MainWindow::sessionRebuilt);
    if (!window.toolsEditor()->choosePreset(preset)) return {};
    QTest::mouseClick(buttonWithText(window.toolsEditor(), QStringLiteral("Apply")),
                      Qt::LeftButton);
    return waitForSession(sessions);
}

WindowPtr TestToolChat::windowWithACall(GenerationReport& report) {
    saveSettings(CallPolicy::Required);
    WindowPtr window = openWindow();
    if (!window || applyPreset(*window, kSentiment).reason != QStringLiteral("Tools applied"))
        return nullptr;
    QSignalSpy replies(window.get(), &MainWindow::replyFinished);
    typeMessage(*window, QStringLiteral("The blender is loud but it works great"));
    report = waitForReply(replies);
    return report.reason == StopReason::ToolCall ? std::move(window) : nullptr;
}

void TestToolChat::callShowsACardWithItsAttribution() {
    GenerationReport report;
    WindowPtr window = windowWithACall(report);
    QVERIFY(window);
    const SessionInfo& session = window->sessionInfo();
    QCOMPARE(session.chatLayout, QStringLiteral("needle"));
    QCOMPARE(session.toolSpans.size(), 1);
    QCOMPARE(session.toolSpans[0].name, QStringLiteral("classify_sentiment"));

    // A constrained call names a declared tool and validates; its attribution sums to 1.
    QVERIFY2(report.callError.isEmpty(), qPrintable(report.callError));
    QVERIFY(!report.calls.isEmpty());
    const ToolCallView& call = report.calls.constFirst();
    QCOMPARE(call.name, QStringLiteral("classify_sentiment"));
    QVERIFY(call.attributed);
    QCOMPARE(call.toolShares.size(), 1);
    QVERIFY(call.toolShares[0].second > 0);
    QVERIFY(qAbs(call.toolShares[0].second + call.otherShare - 1.0) < 1e-6);
    QVERIFY(report.confidence > 0 && report.confidence <= 1);

    // The card: name, readable arguments, confidence, and the attribution line under it.
    TokenTextView* transcript = window->chatPanel()->transcript();
    const QString chat = transcript->toPlainText();
    QVERIFY2(chat.contains(QStringLiteral("<tool_call>")), qPrintable(chat));
    QVERIFY(chat.contains(QStringLiteral("Call classify_sentiment")));
    QVERIFY(chat.contains(QStringLiteral("confidence %1").arg(percentText(report.confidence))));
    for (const QString& line : readableArguments(call.argumentsJson)) {
        const QString key = line.section(QStringLiteral(": "), 0, 0);
        QVERIFY2(chat.contains(key), qPrintable(key));
    }
    QVERIFY2(chat.contains(attributionText(call)), qPrintable(chat));
    QVERIFY(attributionText(call).startsWith(QStringLiteral("classify_sentiment ")));

    // Clicking the tool in the readable chat's card highlights its sink slots and key columns.
    window->tabs()->setCurrentWidget(window->kvCacheView());
    ChatView* chatView = window->chatPanel()->chatView();
    QVERIFY(chatView->isVisible());
    const QPoint link = linkPoint(chatView, toolLink(call.name));
    QVERIFY(!link.isNull());
    QTest::mouseClick(chatView->viewport(), Qt::LeftButton, {}, link);
    const QList<qint64> expected = positionsOf(session.toolSpans[0]);
    QVERIFY(expected.size() > 5);
    QCOMPARE(window->heatmap()->highlightedKeyPositions(), expected);
    QCOMPARE(window->kvCacheView()->highlightedPositions(), expected);

    // The result box waits for the call's result, with the preset's canned one on offer.
    ToolResultBox* box = window->chatPanel()->toolResultBox();
    QVERIFY(box->isVisible());
    QVERIFY(box->cannedButton()->isVisible());
}

void TestToolChat::invalidToolResultSendsNothingValidOneContinues() {
    GenerationReport report;
    WindowPtr window = windowWithACall(report);
    QVERIFY(window);
    ToolResultBox* box = window->chatPanel()->toolResultBox();
    TokenTextView* transcript = window->chatPanel()->transcript();
    // The reply's request ends just after its report arrives (requestDone comes last).
    QTRY_VERIFY_WITH_TIMEOUT(!window->engine()->isBusy(), kWaitMs);
    const qint64 shownTokens = transcript->tokenCount();
    const qint64 generated = window->engine()->generatedTokenCount();
    QSignalSpy replies(window.get(), &MainWindow::replyFinished);

    QTest::keyClicks(box->editor(), QStringLiteral("{\"label\": "));
    QTest::mouseClick(box->sendButton(), Qt::LeftButton);
    QVERIFY2(box->errorText().contains(QStringLiteral("line 1, column")),
             qPrintable(box->errorText()));
    QVERIFY(box->isVisible());
    QVERIFY(!window->engine()->isBusy()); // nothing was queued
    QCOMPARE(window->engine()->generatedTokenCount(), generated);
    QCOMPARE(transcript->tokenCount(), shownTokens);
    QCOMPARE(replies.size(), 0);

    // The preset's canned result, sent: the model continues after <tool_result>.
    QTest::mouseClick(box->cannedButton(), Qt::LeftButton);
    const QString canned =
        window->toolsEditor()->cannedResult(QStringLiteral("classify_sentiment"));
    QVERIFY(!canned.isEmpty());
    QCOMPARE(box->editor()->toPlainText(), canned);
    QVERIFY(box->errorText().isEmpty());
    QTest::mouseClick(box->sendButton(), Qt::LeftButton);
    QVERIFY(!box->isVisible());
    const GenerationReport next = waitForReply(replies);
    QVERIFY(next.toolResultTurn);
    QVERIFY(next.reason != StopReason::Failed);
    QVERIFY(next.generatedTokens > 0);
    QVERIFY(transcript->tokenCount() > shownTokens + next.generatedTokens);
    const QString chat = transcript->toPlainText();
    QVERIFY2(chat.contains(QStringLiteral("<tool_result>")), qPrintable(chat));
    QCOMPARE(transcript->tokenCount(),
             window->latestSnapshot()->tokensSeen - window->sessionInfo().layout.prefixLength);
}

// Edit a preset, Apply mid-chat: the sinks and the KV view's sink slots change, the first turn
// stays, and a second message is answered under the new tools. Before Apply, the edit's preview
// tells what Apply then pins, and nothing is rebuilt.
void TestToolChat::editedPresetAppliedMidChat() {
    WindowPtr window = openWindow();
    QVERIFY(window);
    const SessionInfo before = applyPreset(*window, kSmartHome);
    QCOMPARE(before.toolSpans.size(), 3);
    QCOMPARE(occupiedSinkRows(*window), before.sinksUsed);
    QVERIFY2(window->toolsStatusText().contains(QStringLiteral("set_thermostat")),
             qPrintable(window->toolsStatusText()));

    QSignalSpy replies(window.get(), &MainWindow::replyFinished);
    typeMessage(*window, QStringLiteral("first message"));
    QVERIFY(waitForReply(replies).reason != StopReason::Failed);
    TokenTextView* transcript = window->chatPanel()->transcript();
    const qint64 firstTurnTokens = transcript->tokenCount();

    QSignalSpy sessions(window.get(), &MainWindow::sessionRebuilt);
    QPlainTextEdit* editor = window->toolsEditor()->textEdit();
    editor->selectAll();
    QTest::keyClicks(editor, kEditedTools);
    QTRY_VERIFY_WITH_TIMEOUT(window->toolsPreviewText().contains(QStringLiteral("not applied")),
                             kWaitMs);
    const QString preview = window->toolsPreviewText();
    QVERIFY(sessions.isEmpty());
    QCOMPARE(window->sessionInfo().sinksUsed, before.sinksUsed);
    QTest::mouseClick(buttonWithText(window->toolsEditor(), QStringLiteral("Apply")),
                      Qt::LeftButton);
    const SessionInfo after = waitForSession(sessions);
    QVERIFY(window->toolsPreviewText().isEmpty());
    QVERIFY2(
        preview.contains(QStringLiteral("%1 tokens pinned").arg(after.sinksUsed)) &&
            preview.contains(
                QStringLiteral("Tokens per tool: set_light %1").arg(after.toolSpans[0].count())) &&
            preview.contains(QStringLiteral("(%1 + %2 positions)")
                                 .arg(after.sinkBudget.sinkSlots)
                                 .arg(after.sinkBudget.window)),
        qPrintable(preview));
    QCOMPARE(after.reason, QStringLiteral("Tools applied"));
    QVERIFY(after.sinksUsed < before.sinksUsed);
    QCOMPARE(after.toolSpans.size(), 1);
    QCOMPARE(after.transcriptTokens, firstTurnTokens);
    QCOMPARE(after.reprefilledTokens, qMin<qint64>(kWindow, firstTurnTokens));
    QCOMPARE(window->kvCacheView()->slotTable()->model()->rowCount(), after.sinkSlots + kWindow);
    QCOMPARE(occupiedSinkRows(*window), after.sinksUsed);
    QVERIFY(window->chatPanel()->sinkBlock()->toPlainText().contains(QStringLiteral("Lights on")));
    const QString status = window->toolsStatusText();
    QVERIFY2(status.contains(
                 QStringLiteral("Tokens per tool: set_light %1").arg(after.toolSpans[0].count())) &&
                 status.contains(QStringLiteral("tools applied")) &&
                 status.contains(QStringLiteral(" ms")) && status.contains(QStringLiteral("MiB")),
             qPrintable(status));

    typeMessage(*window, QStringLiteral("second message"));
    const GenerationReport second = waitForReply(replies);
    QVERIFY(second.reason != StopReason::Failed);
    QVERIFY(second.generatedTokens > 0);
    const QString chat = transcript->toPlainText();
    QVERIFY(chat.contains(QStringLiteral("first message")));
    QVERIFY(chat.contains(QStringLiteral("second message")));
    QCOMPARE(transcript->tokenCount(), window->latestSnapshot()->tokensSeen -
                                           after.layout.prefixLength + after.layout.transcriptBase);
}

// Another model tokenises the transcript anew and re-prefills its tail; a corrupt model keeps
// both the model and the chat.
void TestToolChat::anotherModelKeepsTheConversation() {
    WindowPtr window = openWindow();
    QVERIFY(window);
    QSignalSpy replies(window.get(), &MainWindow::replyFinished);
    typeMessage(*window, QStringLiteral("remember this line"));
    QVERIFY(waitForReply(replies).reason != StopReason::Failed);
    TokenTextView* transcript = window->chatPanel()->transcript();

    QSignalSpy sessions(window.get(), &MainWindow::sessionRebuilt);
    window->openModelFile(m_plainModel);
    const SessionInfo switched = waitForSession(sessions);
    QCOMPARE(switched.reason, QStringLiteral("Model loaded"));
    QVERIFY(switched.retokenized);
    QCOMPARE(switched.chatLayout, QStringLiteral("plain"));
    QCOMPARE(window->modelInfo()->path, m_plainModel);
    QVERIFY(switched.transcriptTokens > 0);
    QCOMPARE(switched.reprefilledTokens, qMin<qint64>(kWindow, switched.transcriptTokens));
    QTRY_COMPARE_WITH_TIMEOUT(window->heatmap()->positionCount(),
                              switched.layout.prefixLength + switched.reprefilledTokens, kWaitMs);
    QString chat = transcript->toPlainText();
    QVERIFY(chat.contains(QStringLiteral("remember this line")));
    QVERIFY(chat.contains(QStringLiteral("tokenised anew")));

    const QString badPath = m_dir.filePath(QStringLiteral("corrupt.gguf"));
    QFile bad(badPath);
    QVERIFY(bad.open(QIODevice::WriteOnly | QIODevice::Truncate));
    bad.write(QByteArray("GGUF").append(16, '\xff'));
    bad.close();
    const QString label = window->modelLabelText();
    QSignalSpy failed(window.get(), &MainWindow::modelLoadFailed);
    window->openModelFile(badPath);
    QVERIFY(failed.wait(kWaitMs));
    QVERIFY(window->banner()->isError());
    QCOMPARE(window->modelLabelText(), label);
    QCOMPARE(transcript->toPlainText(), chat);

    typeMessage(*window, QStringLiteral("and this one"));
    const GenerationReport next = waitForReply(replies);
    QVERIFY(next.reason != StopReason::Failed);
    QVERIFY(next.generatedTokens > 0);
    chat = transcript->toPlainText();
    QVERIFY(chat.contains(QStringLiteral("remember this line")));
    QVERIFY(chat.contains(QStringLiteral("and this one")));
    // The new model's tokens continue the re-tokenised transcript's numbering.
    QCOMPARE(transcript->tokenCount() - switched.transcriptTokens,
             window->latestSnapshot()->tokensSeen - switched.layout.prefixLength -
                 switched.reprefilledTokens);
}

QTEST_MAIN(TestToolChat)
#include "test_tool_chat.moc"
