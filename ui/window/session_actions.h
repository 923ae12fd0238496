// Sessions as the user meets them: File > Save Session… and Open Session…, the chat kept at quit
// (AppDataLocation/last-session.json) and restored at the next start, and what a session that
// cannot be opened says. A bad file changes nothing; a session whose model is missing or is
// another file says so and offers to pick the model. The window provides the session in force
// and adopts a restored one's settings and tools (restored); the worker rebuilds it.
#pragma once

#include "window/session_file.h"

#include <QObject>

#include <functional>
#include <optional>

class QMainWindow;
class QMenu;

namespace sinkscope::ui {

class EngineClient;

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
    // At quit: the chat in force, or no file when there is none. Reads the model's hash here
    // when the worker has not yet.
    void saveLastSession();
    void restoreLastSession(); // at start; nothing when no session was kept

    static QString lastSessionPath();

signals:
    void restored(const sinkscope::ui::SessionFile& session);
    void restoreAtStartToggled(bool enabled);

private:
    bool saveTo(const QString& path);
    void restore(const SessionFile& session);
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
};

} // namespace sinkscope::ui
