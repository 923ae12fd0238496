#include "window/session_actions.h"

#include "worker/engine_client.h"
#include "worker/file_hash.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMainWindow>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QStandardPaths>
#include <QStatusBar>

#include <utility>

namespace sinkscope::ui {

namespace {

constexpr int kStatusMessageMs = 10000;

QString shown(const QString& path) {
    return QDir::toNativeSeparators(path);
}

} // namespace

SessionActions::SessionActions(QMainWindow& window, EngineClient& engine, CurrentSession current)
    : QObject(&window), m_window(window), m_engine(engine), m_current(std::move(current)) {
    m_chooser = [this](Choice choice, const QString& suggestion,
                       const std::function<void(const QString&)>& chosen) {
        defaultChooser(choice, suggestion, chosen);
    };
    connect(&engine, &EngineClient::sessionReady, this, &SessionActions::onSessionReady);
    connect(&engine, &EngineClient::sessionRestoreFailed, this, &SessionActions::onRestoreFailed);
}

QString SessionActions::lastSessionPath() {
    return QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation))
        .filePath(QStringLiteral("last-session.json"));
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
        tr("Session saved to %1 (%n turn(s))", nullptr, int(session->turns.size()))
            .arg(shown(path)),
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

void SessionActions::saveLastSession() {
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

void SessionActions::restoreLastSession() {
    const QString path = lastSessionPath();
    if (QFileInfo::exists(path)) openFile(path);
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
