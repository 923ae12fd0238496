// Helpers shared by the tests: where the shared model lives, and temporary synthetic models.
#pragma once

#include <QDir>
#include <QFileInfo>
#include <QString>
#include <QTemporaryDir>
#include <QtTest>

#include <string>

namespace sinkscope::test {

// ../shared beside the checkout, or $SINKSCOPE_SHARED.
inline QString sharedPath(const QString& relative) {
    const QByteArray env = qgetenv("SINKSCOPE_SHARED");
    const QString root =
        env.isEmpty() ? QStringLiteral(SINKSCOPE_SHARED_DIR) : QString::fromLocal8Bit(env);
    return QDir(root).filePath(relative);
}

inline QString storiesModelPath() {
    return sharedPath("models/stories260K.gguf");
}

} // namespace sinkscope::test

// Skips the calling test function when stories260K.gguf is absent, saying where it was looked for.
#define SINKSCOPE_REQUIRE_STORIES()                                                                \
    do {                                                                                           \
        if (!QFileInfo::exists(sinkscope::test::storiesModelPath()))                               \
            QSKIP(qPrintable(                                                                      \
                QStringLiteral("stories260K.gguf not found at %1 (set SINKSCOPE_SHARED)")          \
                    .arg(sinkscope::test::storiesModelPath())));                                   \
    } while (0)
