#include "worker/default_model.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QStandardPaths>

namespace sinkscope::ui {

namespace {

const QString kEmbeddedModel = QStringLiteral(":/models/needle-nano.gguf");

bool sameBytes(const QString& path, const QByteArray& bytes) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly) || file.size() != bytes.size()) return false;
    return file.readAll() == bytes;
}

} // namespace

QString defaultModelPath() {
    const QString dataDir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
    return QDir(dataDir).filePath(QStringLiteral("models/needle-nano.gguf"));
}

bool isDefaultModelPath(const QString& path) {
    const QString folder = QFileInfo(defaultModelPath()).absolutePath();
    return path == defaultModelPath() ||
           path == QDir(folder).filePath(QStringLiteral("synthetic-random.gguf"));
}

bool installDefaultModel(const QString& path, QString& error) {
    QFile embedded(kEmbeddedModel);
    if (!embedded.open(QIODevice::ReadOnly)) {
        error = QStringLiteral("the built-in model is missing from this build");
        return false;
    }
    const QByteArray bytes = embedded.readAll();
    if (sameBytes(path, bytes)) return true;
    const QString folder = QFileInfo(path).absolutePath();
    if (!QDir().mkpath(folder)) {
        error =
            QStringLiteral("could not create the folder %1").arg(QDir::toNativeSeparators(folder));
        return false;
    }
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit()) {
        error = QStringLiteral("could not write %1: %2")
                    .arg(QDir::toNativeSeparators(path), file.errorString());
        return false;
    }
    return true;
}

} // namespace sinkscope::ui
