// The worker's loads: opening a model, restoring a saved session, pinning edited tools. Each
// reports its stages (loadProgress) and looks at its cancel flag between them and between the
// sink prefill's chunks; a cancelled load changes nothing the worker holds.
#include "worker/engine_worker.h"

#include "worker/default_model.h"
#include "worker/display_text.h"
#include "worker/engine_values.h"
#include "worker/file_hash.h"
#include "worker/worker_scope.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <exception>
#include <stdexcept>
#include <utility>

namespace sinkscope::ui {

// One load's reports: each stage as it begins (and the prefill's chunks), then Finished or
// Cancelled however the load ends.
class EngineWorker::LoadScope {
public:
    LoadScope(EngineWorker& worker, quint64 ticket, LoadKind kind, const QString& name)
        : m_worker(worker) {
        m_progress.ticket = ticket;
        m_progress.kind = kind;
        m_progress.name = name;
    }
    ~LoadScope() {
        m_progress.stage = m_stopped ? LoadStage::Cancelled : LoadStage::Finished;
        m_progress.done = m_progress.total = 0;
        emit m_worker.loadProgress(m_progress);
    }
    LoadScope(const LoadScope&) = delete;
    LoadScope& operator=(const LoadScope&) = delete;

    // Reports the stage; false when the load is cancelled and must stop.
    bool stage(LoadStage stage, int done = 0, int total = 0) {
        m_progress.stage = stage;
        m_progress.done = done;
        m_progress.total = total;
        emit m_worker.loadProgress(m_progress);
        if (m_worker.m_loadHook) m_worker.m_loadHook(m_progress);
        return proceed();
    }
    // False, and the load stopped, once it is cancelled (a Cancel after the last check does not
    // undo a load that went through).
    bool proceed() {
        m_stopped = m_stopped || m_worker.isLoadCancelled(m_progress.ticket);
        return !m_stopped;
    }
    // The engine's build stages as PrefillingSinks and Replaying.
    BuildProgressCallback buildProgress() {
        return [this](const BuildProgress& build) {
            return stage(build.stage == BuildStage::Sinks ? LoadStage::PrefillingSinks
                                                          : LoadStage::Replaying,
                         build.done, build.total);
        };
    }
    bool stopped() const { return m_stopped; }

private:
    EngineWorker& m_worker;
    LoadProgress m_progress;
    bool m_stopped = false;
};

void EngineWorker::openModel(quint64 load, const QString& path, bool installDefault) {
    const RequestScope scope(*this);
    LoadScope loading(*this, load, LoadKind::Model, QFileInfo(path).fileName());
    if (!loading.proceed()) return;
    assertEngineThread();
    try {
        QString error;
        std::unique_ptr<Model> model = loadModelFile(path, installDefault, loading, error);
        if (!model) {
            if (!loading.stopped()) emit loadFailed(error);
            return;
        }
        // Another vocabulary: the conversation's turns are rendered and tokenised anew.
        std::span<const Turn> earlier;
        if (m_chat) earlier = m_chat->conversation().turns();
        if (!loading.stage(LoadStage::Building)) return;
        QList<StepSnapshot> snapshots;
        std::unique_ptr<ToolChat> chat =
            buildChat(*model, m_settings, earlier, snapshots, loading.buildProgress());
        if (m_shutDown.load()) return;
        m_streamDecoder.resetState();
        m_chat = std::move(chat); // the old chat goes before the old model it refers to
        m_model = std::move(model);
        m_modelPath = path;
        emit modelLoaded(modelInfoFor(*m_model, *m_chat, path));
        commitSession(std::move(snapshots), QStringLiteral("Model loaded"), !earlier.empty());
        hashModel();
    } catch (const BuildCancelled&) {
        // The old model and chat stay; the scope reports Cancelled.
    } catch (...) {
        emit loadFailed(
            QStringLiteral("Could not open %1: %2")
                .arg(QFileInfo(path).fileName(), exceptionText(std::current_exception())));
    }
}

std::unique_ptr<Model> EngineWorker::loadModelFile(const QString& path, bool installDefault,
                                                   LoadScope& loading, QString& error) const {
    if (installDefault) {
        if (!loading.stage(LoadStage::Installing)) return nullptr;
        if (QString installError; !installDefaultModel(path, installError)) {
            error = QStringLiteral("Could not install the built-in model: %1").arg(installError);
            return nullptr;
        }
    }
    if (!loading.stage(LoadStage::Mapping)) return nullptr;
    std::string loadError;
    std::unique_ptr<GgufFile> file =
        GgufFile::open(QFile::encodeName(path).toStdString(), loadError);
    std::unique_ptr<Model> model;
    if (file) {
        if (!loading.stage(LoadStage::Checking)) return nullptr;
        model = Model::fromGguf(std::move(file), loadError);
    }
    if (!model)
        error = QStringLiteral("Could not open %1: %2")
                    .arg(QFileInfo(path).fileName(), QString::fromStdString(loadError));
    return model;
}

void EngineWorker::applyTools(quint64 load, const QString& compactJson) {
    const RequestScope scope(*this);
    LoadScope loading(*this, load, LoadKind::Tools, QString());
    if (!loading.proceed()) return;
    ToolsParseResult parsed = parseToolsText(compactJson);
    if (!parsed.ok()) {
        emit errorOccurred(QStringLiteral("Tools not applied: %1")
                               .arg(QString::fromStdString(parsed.errorSummary())));
        return;
    }
    if (!m_chat) {
        m_tools = std::move(*parsed.tools);
        return;
    }
    if (!loading.stage(LoadStage::Building)) return;
    try {
        QList<StepSnapshot> snapshots;
        m_chat->replaceTools(*parsed.tools, std::string(), snapshotCollector(snapshots),
                             loading.buildProgress());
        if (m_shutDown.load()) return;
        m_tools = std::move(*parsed.tools);
        commitSession(std::move(snapshots), QStringLiteral("Tools applied"));
    } catch (const BuildCancelled&) {
        // replaceTools kept the tools and session in force; the scope reports Cancelled.
    } catch (...) {
        emit errorOccurred(
            QStringLiteral("Tools not applied: %1").arg(exceptionText(std::current_exception())));
    }
}

const Model* EngineWorker::restoreModel(const SessionRestore& restore,
                                        std::unique_ptr<Model>& loaded, QString& sha256,
                                        LoadScope& loading) {
    const QString shown = QDir::toNativeSeparators(restore.modelPath);
    const auto fail = [&](RestoreFailure::Problem problem, const QString& message) {
        emit sessionRestoreFailed({problem, restore.modelPath, message});
        return nullptr;
    };
    const QFileInfo file(restore.modelPath);
    if (!file.isFile())
        return fail(RestoreFailure::Problem::ModelMissing,
                    QStringLiteral("The session's model %1 is missing.").arg(shown));
    const bool isOpen =
        m_model && file.canonicalFilePath() == QFileInfo(m_modelPath).canonicalFilePath();
    sha256 = isOpen ? m_hasher.sha256Of(m_modelPath) : QString();
    if (!restore.modelSha256.isEmpty()) {
        QString error;
        if (sha256.isEmpty())
            sha256 = sha256OfFile(restore.modelPath, error, [this] { return m_shutDown.load(); });
        if (sha256.isEmpty())
            return fail(RestoreFailure::Problem::Failed,
                        QStringLiteral("Could not check the session's model: %1.").arg(error));
        if (sha256 != restore.modelSha256)
            return fail(RestoreFailure::Problem::ModelChanged,
                        QStringLiteral("The session's model %1 is not the file the session was "
                                       "saved with: its SHA-256 is %2…, the session's %3….")
                            .arg(shown, sha256.left(12), restore.modelSha256.left(12)));
    }
    if (isOpen) return m_model.get();
    QString error;
    loaded = loadModelFile(restore.modelPath, false, loading, error);
    if (!loaded)
        return loading.stopped()
                   ? fail(RestoreFailure::Problem::Cancelled, QStringLiteral("Cancelled."))
                   : fail(RestoreFailure::Problem::Failed, error);
    return loaded.get();
}

void EngineWorker::restoreSession(quint64 load, const SessionRestore& restore) {
    const RequestScope scope(*this);
    LoadScope loading(*this, load, LoadKind::Session, QFileInfo(restore.modelPath).fileName());
    const auto cancelled = [&] {
        emit sessionRestoreFailed(
            {RestoreFailure::Problem::Cancelled, restore.modelPath, QStringLiteral("Cancelled.")});
    };
    if (!loading.proceed()) return cancelled();
    try {
        std::unique_ptr<Model> loaded;
        QString sha256;
        const Model* model = restoreModel(restore, loaded, sha256, loading);
        if (!model) return;
        ToolsParseResult parsed = parseToolsText(restore.toolsJson);
        if (!parsed.ok()) throw std::invalid_argument("its tools: " + parsed.errorSummary());
        ModelTemplateOptions templateOptions = m_templateOptions;
        templateOptions.toolsInSystemTurn = restore.toolsInSystemTurn;
        const std::vector<Turn> turns = turnsOf(restore.turns);
        if (!loading.stage(LoadStage::Building)) return cancelled();
        QList<StepSnapshot> snapshots;
        std::unique_ptr<ToolChat> chat =
            buildChat(*model, restore.settings, *parsed.tools, templateOptions, turns, snapshots,
                      loading.buildProgress());
        if (m_shutDown.load()) return;
        // Everything is built: the window's state changes only from here.
        m_streamDecoder.resetState();
        m_chat = std::move(chat);
        m_settings = restore.settings;
        m_tools = std::move(*parsed.tools);
        m_templateOptions = templateOptions;
        if (loaded) {
            m_model = std::move(loaded);
            m_modelPath = restore.modelPath;
            emit modelLoaded(modelInfoFor(*m_model, *m_chat, m_modelPath));
        }
        commitSession(std::move(snapshots), QStringLiteral("Session restored"), false, true);
        if (sha256.isEmpty()) {
            hashModel();
        } else {
            m_hasher.known(m_modelPath, sha256);
            emit modelHashed(m_modelPath, sha256);
        }
    } catch (const BuildCancelled&) {
        cancelled();
    } catch (...) {
        emit sessionRestoreFailed({RestoreFailure::Problem::Failed, restore.modelPath,
                                   QStringLiteral("The session could not be restored: %1")
                                       .arg(exceptionText(std::current_exception()))});
    }
}

} // namespace sinkscope::ui
