#include "session/session_actions.h"

#include "session/session_autosave.h"
#include "worker/display_text.h"
#include "worker/engine_client.h"
#include "worker/file_hash.h"

#include <QDateTime>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QLocale>
#include <QMainWindow>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTimer>

#include <utility>

namespace sinkscope::ui {

namespace {

constexpr int kStatusMessageMs = 10000;

QString shown(const QString& path) {
    return QDir::toNativeSeparators(path);
}

QString turnCount(qsizetype turns) {
    return countOf(turns, SessionActions::tr("turn"), SessionActions::tr("turns"));
}

} // namespace

SessionActions::SessionActions(QMainWindow& window, EngineClient& engine, CurrentSession current)
    : QObject(&window), m_window(window), m_engine(engine), m_current(std::move(current)),
      m_autosave(new SessionAutosave(lastSessionPath(), lockPath(), this)),
      m_keepTimer(new QTimer(this)) {
    m_chooser = [this](Choice choice, const QString& suggestion,
                       const std::function<void(const QString&)>& chosen) {
        defaultChooser(choice, suggestion, chosen);
    };
    connect(&engine, &EngineClient::sessionReady, this, &SessionActions::onSessionReady);
    connect(&engine, &EngineClient::sessionRestoreFailed, this, &SessionActions::onRestoreFailed);
    // A rebuilt session (tools, settings, a restore), a finished turn and the model's hash (which
    // a kept chat needs) each change what is kept; the window's own handlers run first.
    connect(&engine, &EngineClient::sessionReady, this, &SessionActions::keepChat);
    connect(&engine, &EngineClient::generationFinished, this, &SessionActions::keepChat);
    connect(&engine, &EngineClient::modelHashed, this, &SessionActions::keepChat);
    m_keepTimer->setSingleShot(true);
    m_keepTimer->setInterval(0);
    connect(m_keepTimer, &QTimer::timeout, this, &SessionActions::writeKeptChat);
    connect(m_autosave, &SessionAutosave::keepFailed, this,
            [this](const QString& path, const QString& error) {
                m_window.statusBar()->showMessage(
                    tr("The chat could not be kept in %1: %2. It is written again after the "
                       "next change.")
                        .arg(shown(path), error),
                    kStatusMessageMs);
            });
}

QString SessionActions::lastSessionPath() {
    return QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation))
        .filePath(QStringLiteral("last-session.json"));
}

QString SessionActions::lockPath() {
    return QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation))
        .filePath(QStringLiteral("sinkscope.lock"));
}

void SessionActions::addActions(QMenu& file, bool restoreAtStart) {
    file.addSeparator();
    file.addAction(tr("&Save Session…"), QKeySequence::Save, this, &SessionActions::saveWithDialog);
    file.addAction(tr("Open &Session…"), QKeySequence(tr("Ctrl+Shift+O")), this,
                   &SessionActions::openWithDialog);
    QAction* restore = file.addAction(tr("&Restore Last Session at Start"));
    restore->setCheckable(true);
    restore->setChecked(restoreAtStart);
    connect(restore, &QAction::toggled, this, &SessionActions::restoreAtStartToggled);
    file.addSeparator();
}

void SessionActions::saveWithDialog() {
    m_chooser(Choice::SaveSession, QStringLiteral("session.json"),
              [this](const QString& path) { saveTo(path); });
}

void SessionActions::openWithDialog() {
    m_chooser(Choice::OpenSession, QString(), [this](const QString& path) { openFile(path); });
}

bool SessionActions::saveTo(const QString& path) {
    const std::optional<SessionFile> session = m_current();
    if (!session) {
        showError(tr("There is no session to save: no model is loaded yet."));
        return false;
    }
    if (session->modelSha256.isEmpty()) {
        showError(tr("The model file is still being read for its SHA-256; save again in a "
                     "moment."));
        return false;
    }
    if (QString error; !writeSessionFile(path, *session, error)) {
        showError(tr("Could not save the session to %1: %2").arg(shown(path), error));
        return false;
    }
    m_window.statusBar()->showMessage(
        tr("Session saved to %1 (%2)").arg(shown(path), turnCount(session->turns.size())),
        kStatusMessageMs);
    return true;
}

void SessionActions::openFile(const QString& path) {
    QString error;
    const std::optional<SessionFile> session = readSessionFile(path, error);
    if (!session) {
        showError(
            tr("Could not open the session %1: %2. Nothing was changed.").arg(shown(path), error));
        return;
    }
    m_pendingSource = path;
    restore(*session);
}

void SessionActions::restore(const SessionFile& session) {
    m_pending = session;
    m_window.statusBar()->showMessage(
        tr("Restoring the session from %1…").arg(shown(m_pendingSource)));
    m_engine.restoreSession(session);
}

void SessionActions::keepChat() {
    if (m_keeping) m_keepTimer->start();
}

void SessionActions::writeKeptChat() {
    // A restore still under way has not replaced the chat; an empty chat keeps the one before
    // (the file is removed at quit only, when the user has seen the new chat through).
    if (m_pending) return;
    const std::optional<SessionFile> session = m_current();
    if (!session || session->turns.isEmpty() || session->modelSha256.isEmpty()) return;
    m_autosave->keep(*session);
}

void SessionActions::saveLastSession() {
    m_keeping = false;
    m_autosave->flush(); // a write under way must not land after this one
    // A restore still under way has not replaced the chat: the kept file stays as it is.
    if (m_pending) return;
    std::optional<SessionFile> session = m_current();
    if (!session) return;
    const QString path = lastSessionPath();
    if (session->turns.isEmpty()) {
        QFile::remove(path); // a new chat at quit is a new chat at the next start
        return;
    }
    QString error;
    if (session->modelSha256.isEmpty())
        session->modelSha256 = sha256OfFile(session->modelPath, error);
    if (session->modelSha256.isEmpty() || !QDir().mkpath(QFileInfo(path).absolutePath()) ||
        !writeSessionFile(path, *session, error))
        qWarning("sinkscope: the session was not kept for the next start: %s", qPrintable(error));
}

void SessionActions::startUp(bool restoreAtStart, bool restoreModelChat) {
    const bool keeper = m_autosave->takeLock();
    const QString path = lastSessionPath();
    if (keeper && m_autosave->previousRunEnded() && QFileInfo::exists(path)) {
        offerChatOfEndedRun(path); // keeping begins with the answer
        return;
    }
    if (restoreAtStart && restoreModelChat && QFileInfo::exists(path)) openFile(path);
    m_keeping = true;
}

// Asked, not restored at once even when Restore at Start is on: the chat may be what made the
// last run crash, and a start that crashes again every time would never let the user out.
void SessionActions::offerChatOfEndedRun(const QString& path) {
    QString error;
    const std::optional<SessionFile> session = readSessionFile(path, error);
    if (!session) {
        m_keeping = true;
        showError(tr("The chat kept by the last run, which did not quit, could not be read: %1: "
                     "%2. The file was left as it is.")
                      .arg(shown(path), error));
        return;
    }
    const QDateTime written = QFileInfo(path).lastModified();
    auto* box = new QMessageBox(
        QMessageBox::Question, tr("Restore Chat"),
        tr("Sinkscope did not quit the last time it ran. Restore the chat from %1 (%2)?")
            .arg(QLocale().toString(written, QLocale::ShortFormat),
                 turnCount(session->turns.size())),
        QMessageBox::NoButton, &m_window);
    box->setObjectName(QStringLiteral("restoreEndedRun"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setWindowModality(Qt::WindowModal);
    QPushButton* restoreButton = box->addButton(tr("Restore"), QMessageBox::AcceptRole);
    QPushButton* newChat = box->addButton(tr("New Chat"), QMessageBox::RejectRole);
    box->setDefaultButton(restoreButton);
    box->setEscapeButton(newChat);
    connect(restoreButton, &QPushButton::clicked, this, [this, path, session = *session] {
        m_pendingSource = path;
        restore(session);
        m_keeping = true;
    });
    connect(newChat, &QPushButton::clicked, this, [this, path] {
        setAsideChatOfEndedRun(path);
        m_keeping = true;
    });
    box->open();
}

// A chat not restored is moved beside the kept one, not deleted: File > Open Session opens it.
void SessionActions::setAsideChatOfEndedRun(const QString& path) {
    const QFileInfo kept(path);
    const QString aside = kept.dir().filePath(
        QStringLiteral("chat-%1.json")
            .arg(kept.lastModified().toString(QStringLiteral("yyyy-MM-dd-HHmmss"))));
    if (QFile file(path); !file.rename(aside)) {
        showError(tr("The chat of the last run could not be moved to %1: %2. The next turn "
                     "replaces it in %3.")
                      .arg(shown(aside), file.errorString(), shown(path)));
        return;
    }
    m_window.statusBar()->showMessage(
        tr("The chat of the last run was kept in %1; File > Open Session opens it.")
            .arg(shown(aside)),
        kStatusMessageMs);
}

void SessionActions::onSessionReady(const SessionInfo& info) {
    if (!info.restored || !m_pending) return;
    const SessionFile session = *std::exchange(m_pending, std::nullopt);
    emit restored(session);
    m_window.statusBar()->showMessage(
        tr("Session restored from %1: %2 turns tokenised anew, the last %3 tokens re-prefilled.")
            .arg(shown(m_pendingSource))
            .arg(session.turns.size())
            .arg(info.reprefilledTokens),
        kStatusMessageMs);
}

void SessionActions::onRestoreFailed(const RestoreFailure& failure) {
    if (!m_pending) return;
    const SessionFile session = *std::exchange(m_pending, std::nullopt);
    if (failure.problem == RestoreFailure::Problem::Cancelled) {
        m_window.statusBar()->showMessage(
            tr("Restoring the session from %1 was cancelled; nothing was changed.")
                .arg(shown(m_pendingSource)),
            kStatusMessageMs);
        return;
    }
    if (failure.problem == RestoreFailure::Problem::Failed) {
        showError(tr("The session %1 was not restored. %2 Nothing was changed.")
                      .arg(shown(m_pendingSource), failure.message));
        return;
    }
    m_window.statusBar()->showMessage(failure.message, kStatusMessageMs);
    auto* box = new QMessageBox(QMessageBox::Warning, tr("Open Session"),
                                tr("%1\n\nNothing was changed. Choose the model file to open the "
                                   "session with?")
                                    .arg(failure.message),
                                QMessageBox::Cancel, &m_window);
    box->setObjectName(QStringLiteral("sessionModelProblem"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setWindowModality(Qt::WindowModal);
    QPushButton* choose = box->addButton(tr("Choose Model…"), QMessageBox::AcceptRole);
    box->setDefaultButton(choose);
    connect(choose, &QPushButton::clicked, this, [this, session] { chooseModelFor(session); });
    box->open();
}

void SessionActions::chooseModelFor(const SessionFile& session) {
    m_chooser(Choice::ModelFile, session.modelPath, [this, session](const QString& path) {
        SessionFile chosen = session;
        chosen.modelPath = path;
        chosen.modelSha256.clear(); // the user's choice: whatever the file holds
        restore(chosen);
    });
}

void SessionActions::showError(const QString& text) {
    m_window.statusBar()->showMessage(text, kStatusMessageMs);
    auto* box =
        new QMessageBox(QMessageBox::Warning, tr("Session"), text, QMessageBox::Ok, &m_window);
    box->setObjectName(QStringLiteral("sessionError"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setWindowModality(Qt::WindowModal);
    box->open();
}

// Window-modal, not exec(): the engine keeps streaming while the dialog is open.
void SessionActions::defaultChooser(Choice choice, const QString& suggestion,
                                    const std::function<void(const QString&)>& chosen) {
    const bool model = choice == Choice::ModelFile;
    auto* dialog = new QFileDialog(
        &m_window, model ? tr("Choose the Session's Model") : tr("Session"), suggestion,
        model ? tr("GGUF models (*.gguf);;All files (*)")
              : tr("Sinkscope sessions (*.json);;All files (*)"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    if (choice == Choice::SaveSession) {
        dialog->setAcceptMode(QFileDialog::AcceptSave);
        dialog->setDefaultSuffix(QStringLiteral("json"));
    } else {
        dialog->setFileMode(QFileDialog::ExistingFile);
    }
    connect(dialog, &QFileDialog::fileSelected, this, chosen);
    dialog->open();
}

} // namespace sinkscope::ui
