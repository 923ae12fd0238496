// Helpers shared by the suites that drive the whole playground window: private settings and data
// folders, a window opened with its model loaded, and typing a message as a user does.
#pragma once

#include "chat_panel/chat_panel.h"
#include "chat_panel/chat_view.h"
#include "chat_panel/message_input.h"
#include "session/session_actions.h"
#include "window/main_window.h"
#include "worker/engine_types.h"

#include <QAbstractTextDocumentLayout>
#include <QAction>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QMenu>
#include <QMenuBar>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTextBlock>
#include <QTextEdit>
#include <QtTest>

#include <memory>

namespace sinkscope::test {

// Settings and AppDataLocation (where the first-run model is written) inside `dir`, so that a
// test never reads or writes the user's own.
inline void useAppFolders(const QDir& dir) {
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, dir.filePath("config"));
    qputenv("XDG_DATA_HOME", QFile::encodeName(dir.filePath("data")));
    QCoreApplication::setOrganizationName(QStringLiteral("Sinkscope"));
    QCoreApplication::setApplicationName(QStringLiteral("sinkscope"));
}

inline void useTemporaryAppFolders(const QTemporaryDir& dir) {
    useAppFolders(QDir(dir.path()));
}

// A shown window on a new chat with its model loaded and its first session built; nullptr when
// that takes longer than `waitMs`. A chat an earlier window kept (after each of its turns) is
// forgotten first. Settings, tools and the model are queued in that order, so the model's session
// comes last.
inline std::unique_ptr<ui::MainWindow> openLoadedWindow(int waitMs) {
    QFile::remove(ui::SessionActions::lastSessionPath());
    auto window = std::make_unique<ui::MainWindow>();
    QSignalSpy sessions(window.get(), &ui::MainWindow::sessionRebuilt);
    window->show();
    if (!QTest::qWaitForWindowExposed(window.get())) return nullptr;
    while (!window->hasModel() || sessions.isEmpty() ||
           sessions.constLast().at(0).value<ui::SessionInfo>().reason !=
               QStringLiteral("Model loaded"))
        if (!sessions.wait(waitMs)) return nullptr;
    return window;
}

// The model file's SHA-256, which a saved session records, is read in the background once the
// model has loaded, at the lowest priority (so after a reply rather than during it); Save
// refuses until it is known.
inline bool waitForModelHash(const ui::MainWindow& window, int waitMs) {
    return QTest::qWaitFor([&] { return !window.modelSha256().isEmpty(); }, waitMs);
}

// The entry `text` of the menu bar's menu `menu` (texts with their & marks); null when absent.
inline QAction* menuAction(QMenuBar* bar, const QString& menu, const QString& text) {
    for (QAction* top : bar->actions())
        if (top->menu() && top->text() == menu)
            for (QAction* action : top->menu()->actions())
                if (action->text() == text) return action;
    return nullptr;
}

// Where the link `href` is drawn in the view's viewport (scrolled into view); null when absent.
inline QPoint linkPoint(QTextEdit* view, const QString& href) {
    QTextDocument* document = view->document();
    for (QTextBlock block = document->begin(); block.isValid(); block = block.next())
        for (auto it = block.begin(); !it.atEnd(); ++it) {
            const QTextFragment fragment = it.fragment();
            if (fragment.charFormat().anchorHref() != href || fragment.length() < 2) continue;
            QTextCursor cursor(document);
            cursor.setPosition(fragment.position() + 1);
            view->setTextCursor(cursor);
            view->ensureCursorVisible();
            return view->cursorRect(cursor).center();
        }
    return {};
}

// Where the link `href` is drawn in the readable chat's viewport (its message scrolled into view);
// null when no message shows it.
inline QPoint linkPoint(ui::ChatView* view, const QString& href) {
    for (qsizetype message = 0; message < view->messages().size(); ++message) {
        const QTextDocument* document = view->messageDocument(message);
        for (QTextBlock block = document->begin(); block.isValid(); block = block.next())
            for (auto it = block.begin(); !it.atEnd(); ++it) {
                const QTextFragment fragment = it.fragment();
                if (fragment.charFormat().anchorHref() != href || fragment.length() < 2) continue;
                const QRect box = view->messageRect(message);
                document = view->messageDocument(message); // laid out at the view's width
                block = document->findBlock(fragment.position());
                const QTextLayout* layout = block.layout();
                const int inBlock = fragment.position() + 1 - block.position();
                const QTextLine line = layout->lineForTextPosition(inBlock);
                // The block's place in the document, less where its lines start in it.
                const QPointF origin =
                    document->documentLayout()->blockBoundingRect(block).topLeft() -
                    layout->boundingRect().topLeft();
                const QPointF inDocument =
                    origin + QPointF(line.cursorToX(inBlock), line.y() + line.height() / 2);
                if (document->documentLayout()->anchorAt(inDocument) != href) return {};
                return box.topLeft() + inDocument.toPoint();
            }
    }
    return {};
}

// The readable chat's text as drawn, message after message.
inline QString chatText(const ui::ChatView& view) {
    QStringList messages;
    for (qsizetype message = 0; message < view.messages().size(); ++message)
        messages << view.messageDocument(message)->toPlainText();
    return messages.join(u'\n');
}

// Types `text` into the chat's input and presses Enter.
inline void typeMessage(ui::MainWindow& window, const QString& text) {
    ui::MessageInput* input = window.chatPanel()->input();
    QTest::keyClicks(input, text);
    QTest::keyClick(input, Qt::Key_Return);
}

} // namespace sinkscope::test
