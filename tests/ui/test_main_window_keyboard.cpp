// The playground from the keyboard: Ctrl+L to the message box, Enter or Ctrl+Enter to send as
// the Chat menu's setting says (kept for the next start), Show tokens on Ctrl+T, the chat
// exported as Markdown, every shortcut the README names shown in its menu, and every menu entry
// reachable from the keyboard (a mnemonic or a shortcut).
#include <QtTest>

#include "chat_panel/chat_panel.h"
#include "chat_panel/message_input.h"
#include "main_window_fixture.h"
#include "window_test_support.h"
#include "worker/engine_client.h"

#include <QAction>
#include <QApplication>
#include <QFile>
#include <QMenuBar>
#include <QRegularExpression>
#include <QTemporaryDir>

using namespace sinkscope;
using namespace sinkscope::test;
using sinkscope::ui::MainWindow;
using sinkscope::ui::MessageInput;

namespace {

void activate(MainWindow& window) {
    window.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&window));
}

} // namespace

class TestMainWindowKeyboard : public QObject, public MainWindowFixture {
    Q_OBJECT

private slots:
    void initTestCase() { setUpFolders(); }
    void init() { saveSettings(); }

    void ctrlLFocusesTheMessageBox() {
        WindowPtr window = openWindow();
        QVERIFY(window);
        activate(*window);
        window->tabs()->setFocus();
        QVERIFY(QApplication::focusWidget() != window->chatPanel()->input());
        QTest::keyClick(window.get(), Qt::Key_L, Qt::ControlModifier);
        QCOMPARE(QApplication::focusWidget(), window->chatPanel()->input());
    }

    // Enter sends by default; with Chat > Send with Ctrl+Enter it adds a line and Ctrl+Enter
    // sends; the choice comes back with the next window.
    void sendKeyFollowsTheSetting() {
        WindowPtr window = openWindow();
        QVERIFY(window);
        MessageInput* input = window->chatPanel()->input();
        QAction* ctrlEnter = menuAction(window->menuBar(), "&Chat", "Send with Ctrl+&Enter");
        QVERIFY(ctrlEnter);
        QVERIFY(!ctrlEnter->isChecked());
        QSignalSpy replies(window.get(), &MainWindow::replyFinished);

        ctrlEnter->trigger();
        QVERIFY(input->sendsWithCtrlEnter());
        input->setFocus();
        QTest::keyClicks(input, QStringLiteral("first line"));
        QTest::keyClick(input, Qt::Key_Return);
        QTest::keyClicks(input, QStringLiteral("second line"));
        QCOMPARE(input->toPlainText(), QStringLiteral("first line\nsecond line"));
        QCOMPARE(replies.count(), 0);
        QVERIFY(!window->engine()->isGenerating());
        QTest::keyClick(input, Qt::Key_Return, Qt::ControlModifier);
        waitForReply(replies);
        QVERIFY(input->toPlainText().isEmpty());
        window.reset();

        WindowPtr again = openWindow();
        QVERIFY(again);
        QVERIFY(again->chatPanel()->input()->sendsWithCtrlEnter());
        QVERIFY(menuAction(again->menuBar(), "&Chat", "Send with Ctrl+&Enter")->isChecked());
        menuAction(again->menuBar(), "&Chat", "Send with Ctrl+&Enter")->trigger();
        MessageInput* plain = again->chatPanel()->input();
        plain->setFocus();
        QTest::keyClicks(plain, QStringLiteral("one line"));
        QSignalSpy moreReplies(again.get(), &MainWindow::replyFinished);
        QTest::keyClick(plain, Qt::Key_Return);
        waitForReply(moreReplies);
    }

    void exportChatWritesMarkdown() {
        WindowPtr window = openWindow();
        QVERIFY(window);
        QSignalSpy replies(window.get(), &MainWindow::replyFinished);
        typeMessage(*window, QStringLiteral("Hello there"));
        waitForReply(replies);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(QStringLiteral("chat.md"));
        QVERIFY(window->exportChat(path));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString markdown = QString::fromUtf8(file.readAll());
        QCOMPARE(markdown, window->chatPanel()->chatMarkdown());
        QVERIFY2(markdown.contains(QStringLiteral("**You:** Hello there")), qPrintable(markdown));
        QVERIFY(!window->exportChat(dir.filePath(QStringLiteral("missing/folder/chat.md"))));
    }

    // The shortcuts the README names, and Open Model's and the View menu's tabs (Quit takes the
    // platform's own key, none on some).
    void menusShowTheirShortcuts_data() {
        QTest::addColumn<QString>("menu");
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("shortcut");
        const struct {
            const char* menu;
            const char* text;
            const char* shortcut;
        } rows[] = {
            {"&File", "&Open Model…", "Ctrl+O"},
            {"&File", "&Save Session…", "Ctrl+S"},
            {"&File", "Open &Session…", "Ctrl+Shift+O"},
            {"&File", "&Export Heatmap…", "Ctrl+E"},
            {"&File", "Export C&hat…", "Ctrl+Shift+E"},
            {"&Chat", "&New Chat", "Ctrl+N"},
            {"&Chat", "&Stop", "Esc"},
            {"&Chat", "&Message Box", "Ctrl+L"},
            {"&Chat", "Copy Chat as &Markdown", "Ctrl+Shift+C"},
            {"&View", "Show &Tokens", "Ctrl+T"},
            {"&View", "Mask", "Ctrl+1"},
            {"&View", "Policies", "Ctrl+6"},
            {"&Help", "&Model Information…", "Ctrl+I"},
        };
        for (const auto& row : rows)
            QTest::newRow(row.text) << row.menu << row.text << row.shortcut;
    }

    void menusShowTheirShortcuts() {
        QFETCH(QString, menu);
        QFETCH(QString, text);
        QFETCH(QString, shortcut);
        WindowPtr window = openWindow();
        QVERIFY(window);
        QAction* action = menuAction(window->menuBar(), menu, text);
        QVERIFY2(action, qPrintable(text));
        QCOMPARE(action->shortcut().toString(), shortcut);
    }

    // Alt and a menu's mnemonic open it; each entry that can be chosen then has its own mnemonic
    // or a shortcut.
    void everyMenuEntryIsReachableByKeyboard() {
        WindowPtr window = openWindow();
        QVERIFY(window);
        const QRegularExpression mnemonic(QStringLiteral("&[^&\\s]"));
        QList<QMenu*> menus;
        for (QAction* top : window->menuBar()->actions()) {
            QVERIFY2(top->text().contains(mnemonic), qPrintable(top->text()));
            if (top->menu()) menus << top->menu();
        }
        QVERIFY(menus.size() >= 4);
        while (!menus.isEmpty()) {
            QMenu* menu = menus.takeFirst();
            for (QAction* action : menu->actions()) {
                if (action->isSeparator() || !action->isEnabled()) continue; // "No recent models"
                if (action->menu()) menus << action->menu();
                QVERIFY2(action->text().contains(mnemonic) || !action->shortcut().isEmpty(),
                         qPrintable(menu->title() + QStringLiteral(" > ") + action->text()));
            }
        }
    }

    // Show tokens is in the View menu, and Ctrl+T switches between the readable chat and the
    // tokens.
    void showTokensFromTheViewMenu() {
        WindowPtr window = openWindow();
        QVERIFY(window);
        QAction* tokens = window->chatPanel()->showTokensAction();
        bool inViewMenu = false;
        for (QAction* top : window->menuBar()->actions())
            if (top->text() == QLatin1String("&View"))
                inViewMenu = top->menu()->actions().contains(tokens);
        QVERIFY(inViewMenu);
        activate(*window);
        const bool before = tokens->isChecked();
        QTest::keyClick(window.get(), Qt::Key_T, Qt::ControlModifier);
        QCOMPARE(tokens->isChecked(), !before);
    }
};

QTEST_MAIN(TestMainWindowKeyboard)
#include "test_main_window_keyboard.moc"
