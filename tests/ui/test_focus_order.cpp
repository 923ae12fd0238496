// The playground's tab order, walked with the keyboard: from the message box Tab goes to Send,
// the chat, the chat's buttons, then the side views (their tab bar, then the page shown, in the
// order drawn) and around back to the message box with no widget keeping the focus; Shift+Tab
// walks the same way back. The JSON editor of the Tools tab indents with Tab and is left with
// Ctrl+Tab.
#include <QtTest>

#include "chat_panel/chat_panel.h"
#include "chat_panel/message_input.h"
#include "main_window_fixture.h"
#include "worker/engine_client.h"

#include <QAbstractButton>
#include <QApplication>
#include <QPlainTextEdit>
#include <QTabBar>
#include <QTabWidget>

using namespace sinkscope;
using namespace sinkscope::test;
using sinkscope::ui::MainWindow;
using sinkscope::ui::StopReason;

namespace {

constexpr int kMaxPresses = 300; // far more stops than the window has, links included

// The focus widget's name: its objectName, or its class and text where it has none.
QString focusName() {
    const QWidget* widget = QApplication::focusWidget();
    if (!widget) return QStringLiteral("(none)");
    if (!widget->objectName().isEmpty()) return widget->objectName();
    const auto* button = qobject_cast<const QAbstractButton*>(widget);
    return QStringLiteral("%1 \"%2\"")
        .arg(QString::fromLatin1(widget->metaObject()->className()),
             button ? button->text() : QString());
}

// The stops from the focus widget on, pressing `key`, until the focus comes back to it; a widget
// that keeps the focus over several presses (the chat, Tab going from link to link) is one stop.
// Ends early, with the stops so far, when it does not come back.
QStringList walk(Qt::Key key) {
    QWidget* start = QApplication::focusWidget();
    QStringList stops{focusName()};
    for (int press = 0; press < kMaxPresses; ++press) {
        QTest::keyClick(QApplication::focusWidget(), key);
        if (QApplication::focusWidget() == start) return stops;
        if (focusName() != stops.constLast()) stops << focusName();
    }
    stops << QStringLiteral("(did not come back)");
    return stops;
}

} // namespace

class TestFocusOrder : public QObject, public MainWindowFixture {
    Q_OBJECT

private slots:
    void initTestCase() { setUpFolders(); }
    void init() { saveSettings(); }
    void tabGoesAroundTheWindow();
    void eachSideViewInTheOrderDrawn_data();
    void eachSideViewInTheOrderDrawn();
    void toolsEditorIndentsAndIsLeftWithCtrlTab();

private:
    WindowPtr activeWindow(int tab);
};

WindowPtr TestFocusOrder::activeWindow(int tab) {
    WindowPtr window = openWindow();
    if (!window) return nullptr;
    window->tabs()->setCurrentIndex(tab);
    window->activateWindow();
    if (!QTest::qWaitForWindowActive(window.get())) return nullptr;
    return window;
}

// A chat with a reply (its links are stops inside the chat), text in the message box (Send is
// enabled), the KV cache tab shown.
void TestFocusOrder::tabGoesAroundTheWindow() {
    WindowPtr window = activeWindow(1);
    QVERIFY(window);
    QSignalSpy replies(window.get(), &MainWindow::replyFinished);
    typeMessage(*window, QStringLiteral("Hello there"));
    QVERIFY(waitForReply(replies).reason != StopReason::Failed);
    QTRY_VERIFY(!window->engine()->isGenerating());
    ui::MessageInput* input = window->chatPanel()->input();
    QTest::keyClicks(input, QStringLiteral("next"));
    input->setFocus();

    const QStringList forward = walk(Qt::Key_Tab);
    const QStringList expected = {QStringLiteral("messageInput"),
                                  QStringLiteral("sendButton"),
                                  QStringLiteral("chatView"),
                                  QStringLiteral("showTokensButton"),
                                  QStringLiteral("copyChatButton"),
                                  QStringLiteral("newChatButton"),
                                  QStringLiteral("qt_tabwidget_tabbar"),
                                  QStringLiteral("kvSlotTable")};
    QVERIFY2(forward.mid(0, expected.size()) == expected, qPrintable(forward.join(u'\n')));
    QVERIFY2(forward.contains(QStringLiteral("modelLabel")), qPrintable(forward.join(u'\n')));
    QVERIFY2(!forward.contains(QStringLiteral("(did not come back)")),
             qPrintable(forward.join(u'\n')));

    // Shift+Tab: the same stops, the other way round.
    QCOMPARE(QApplication::focusWidget(), input);
    QStringList backward = walk(Qt::Key_Backtab);
    QVERIFY2(!backward.contains(QStringLiteral("(did not come back)")),
             qPrintable(backward.join(u'\n')));
    std::reverse(backward.begin() + 1, backward.end());
    QCOMPARE(backward, forward);
}

void TestFocusOrder::eachSideViewInTheOrderDrawn_data() {
    QTest::addColumn<int>("tab");
    QTest::addColumn<QStringList>("stops");
    QTest::newRow("mask") << 0 << QStringList{"maskZoomOut", "maskZoomIn", "maskFit",
                                              "maskFollow",  "maskExport", "maskCanvas"};
    QTest::newRow("tools") << 2
                           << QStringList{"toolsPresetBox", "toolsOpenButton", "toolsSaveButton",
                                          "toolsApplyButton", "toolsText"};
    QTest::newRow("settings") << 3
                              << QStringList{"openModelButton",
                                             "threads",
                                             "useModelHints",
                                             "kvWindow",
                                             "kvBits",
                                             "positionMode",
                                             "sinkMode",
                                             "temperature",
                                             "topK",
                                             "topP",
                                             "seed",
                                             "maxNewTokens",
                                             "callPolicy",
                                             "stopAtNewline",
                                             "ignoreEos",
                                             "argumentsFromMessage",
                                             "probeEnabled",
                                             "probeLayer",
                                             "probeHead"};
    QTest::newRow("policies") << 5
                              << QStringList{"policyStorySource",
                                             "policyOpenButton",
                                             "policy 0",
                                             "policy 1",
                                             "policy 2",
                                             "policy 3",
                                             "policy 4",
                                             "policy 5",
                                             "policyRepeat",
                                             "policyWindow",
                                             "policyRecomputeEvery",
                                             "policyRunButton",
                                             "policyChart",
                                             "policyFigures",
                                             "policySlotsScroll"};
}

// Each page from its tab bar, forward; Shift+Tab from the page's last stop walks it back. The
// Tools editor keeps Tab (it indents), so its page ends there.
void TestFocusOrder::eachSideViewInTheOrderDrawn() {
    QFETCH(int, tab);
    QFETCH(QStringList, stops);
    WindowPtr window = activeWindow(tab);
    QVERIFY(window);
    window->tabs()->tabBar()->setFocus(Qt::TabFocusReason);
    QStringList shown;
    for (qsizetype i = 0; i < stops.size(); ++i) {
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Tab);
        shown << focusName();
    }
    QVERIFY2(shown == stops, qPrintable(shown.join(u'\n')));
    if (tab == 2) return;
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_Tab);
    QVERIFY2(!window->tabs()->currentWidget()->isAncestorOf(QApplication::focusWidget()),
             qPrintable(focusName())); // the page ended: on to the status bar
    QStringList back;
    for (qsizetype i = 0; i < stops.size(); ++i) {
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Backtab);
        back.prepend(focusName());
    }
    QCOMPARE(back, stops);
}

void TestFocusOrder::toolsEditorIndentsAndIsLeftWithCtrlTab() {
    WindowPtr window = activeWindow(2);
    QVERIFY(window);
    auto* editor = window->findChild<QPlainTextEdit*>(QStringLiteral("toolsText"));
    QVERIFY(editor);
    editor->setFocus(Qt::TabFocusReason);
    editor->moveCursor(QTextCursor::End);
    const QString before = editor->toPlainText();
    QTest::keyClick(editor, Qt::Key_Tab);
    QCOMPARE(QApplication::focusWidget(), editor);
    QCOMPARE(editor->toPlainText(), before + u'\t');
    QTest::keyClick(editor, Qt::Key_Backspace);
    QTest::keyClick(editor, Qt::Key_Tab, Qt::ControlModifier);
    QVERIFY(QApplication::focusWidget() != editor);
    QCOMPARE(editor->toPlainText(), before);
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_Backtab);
    QCOMPARE(QApplication::focusWidget(), editor);
    QTest::keyClick(editor, Qt::Key_Backtab, Qt::ControlModifier | Qt::ShiftModifier);
    QCOMPARE(focusName(), QStringLiteral("toolsApplyButton"));
}

QTEST_MAIN(TestFocusOrder)
#include "test_focus_order.moc"
