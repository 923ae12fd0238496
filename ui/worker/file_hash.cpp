#include "worker/file_hash.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>

namespace sinkscope::ui {

namespace {

constexpr qint64 kChunkBytes = 4 * 1024 * 1024;

} // namespace

QString sha256OfFile(const QString& path, QString& error, const std::function<bool()>& cancelled) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        error = QStringLiteral("cannot read %1: %2")
                    .arg(QDir::toNativeSeparators(path), file.errorString());
        return {};
    }
    QCryptographicHash hash(QCryptographicHash::Sha256);
    while (!file.atEnd()) {
        if (cancelled && cancelled()) {
            error = QStringLiteral("stopped");
            return {};
        }
        const QByteArray chunk = file.read(kChunkBytes);
        if (chunk.isEmpty() && file.error() != QFileDevice::NoError) {
            error = QStringLiteral("cannot read %1: %2")
                        .arg(QDir::toNativeSeparators(path), file.errorString());
            return {};
        }
        hash.addData(chunk);
    }
    return QString::fromLatin1(hash.result().toHex());
}

} // namespace sinkscope::ui
