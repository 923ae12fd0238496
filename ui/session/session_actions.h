// Sessions as the user meets them: File > Save Session… and Open Session…, the chat kept for the
// next start (AppDataLocation/last-session.json, written after every turn, tool edit and setting
// change, and at quit) and restored then, the chat of a run that was killed or crashed offered
// back, and what a session that cannot be opened says. A bad file changes nothing; a session whose
// model is missing or is another file says so and offers to pick the model. The window provides the
// session in force and adopts a restored one's settings and tools (restored); the worker rebuilds
// it.
#pragma once

#include "session/session_file.h"

#include <QObject>

#include <functional>
#include <optional>

class QMainWindow;
class QMenu;
class QTimer;

namespace sinkscope::ui {

class EngineClient;
class SessionAutosave;

class SessionActions : public QObject {
    Q_OBJECT
public:
    enum class Choice { SaveSession, OpenSession, ModelFile };
    // Asks for a file and calls `chosen` with it; never when the user cancels.
    using FileChooser = std::function<void(Choice choice, const QString& suggestion,
                                           const std::function<void(const QString&)>& chosen)>;
    // The session in force; nullopt before a model is loaded. Its modelSha256 is "" while the
    // model file is still being read.
    using CurrentSession = std::function<std::optional<SessionFile>()>;

    SessionActions(QMainWindow& window, EngineClient& engine, CurrentSession current);

    // The default chooser opens a window-modal QFileDialog.
    void setFileChooser(FileChooser chooser) { m_chooser = std::move(chooser); }

    // Save Session… (Ctrl+S), Open Session… (Ctrl+Shift+O) and the checkable Restore Last
    // Session at Start, between separators.
    void addActions(QMenu& file, bool restoreAtStart);
    void saveWithDialog(); // File > Save Session…
    void openWithDialog(); // File > Open Session…
    void openFile(const QString& path);
    // At start, in a run that keeps its chat: from then on the chat is kept after every change.
    // The chat of a run that did not quit is offered back (a window-modal question, which
    // `restoreModelChat` false still asks); otherwise the kept chat is restored when
    // `restoreAtStart` and `restoreModelChat` (false: a model named on the command line).
    void startUp(bool restoreAtStart, bool restoreModelChat);
    // Queues the chat in force to be kept (coalesced: one write for a burst of changes). Called
    // for the engine's sessions, replies and the model's hash here; the window calls it for a
    // change the engine does not see (the reply limits).
    void keepChat();
    // At quit: the chat in force, or no file when there is none. Reads the model's hash here
    // when the worker has not yet.
    void saveLastSession();

    static QString lastSessionPath();
    static QString lockPath(); // held while a window that keeps its chat is open

signals:
    void restored(const sinkscope::ui::SessionFile& session);
    void restoreAtStartToggled(bool enabled);

private:
    bool saveTo(const QString& path);
    void restore(const SessionFile& session);
    void offerChatOfEndedRun(const QString& path);
    void setAsideChatOfEndedRun(const QString& path);
    void writeKeptChat();
    void onSessionReady(const SessionInfo& info);
    void onRestoreFailed(const RestoreFailure& failure);
    void chooseModelFor(const SessionFile& session);
    void showError(const QString& text);
    void defaultChooser(Choice choice, const QString& suggestion,
                        const std::function<void(const QString&)>& chosen);

    QMainWindow& m_window;
    EngineClient& m_engine;
    CurrentSession m_current;
    FileChooser m_chooser;
    QString m_pendingSource;              // the file being restored, for the messages
    std::optional<SessionFile> m_pending; // asked of the worker, not answered yet
    SessionAutosave* m_autosave;
    QTimer* m_keepTimer;    // coalesces keepChat() calls into one write
    bool m_keeping = false; // set once startUp has decided what the chat at start is
};

} // namespace sinkscope::ui
