// What the main window suites share: temporary folders, the baseline settings, a loaded window.
#pragma once

#include "model/synthetic.h"
#include "session/session_actions.h"
#include "window/app_settings.h"
#include "window/main_window.h"
#include "window_test_support.h"
#include "worker/default_model.h"
#include "worker/engine_types.h"

#include <QFile>
#include <QSettings>
#include <QSignalSpy>
#include <QString>
#include <QTemporaryDir>
#include <QtTest>

#include <memory>
#include <string>

namespace sinkscope::test {

inline constexpr int kWaitMs = 60000;
inline const QString kSmallTools = QStringLiteral(R"([{"name":"get_time"}])");

using WindowPtr = std::unique_ptr<ui::MainWindow>;

inline ui::GenerationReport waitForReply(QSignalSpy& replies) {
    if (replies.isEmpty() && !replies.wait(kWaitMs)) return {};
    return replies.takeFirst().at(0).value<ui::GenerationReport>();
}

// Each suite's initTestCase calls setUpFolders() and its init() saveSettings().
class MainWindowFixture {
protected:
    // Settings and the first-run model inside m_dir, and the synthetic model at m_modelPath.
    void setUpFolders();
    // Saves the baseline settings (synthetic model, window 16, small tools) changed by `edit`, and
    // forgets the chat an earlier test's window kept at quit.
    template <typename Edit> void saveSettings(Edit edit);
    void saveSettings() {
        saveSettings([](ui::AppSettings&) {});
    }
    // A shown window with its model loaded and its first session built.
    WindowPtr openWindow();

    QTemporaryDir m_dir;
    QString m_modelPath;
};

inline void MainWindowFixture::setUpFolders() {
    QVERIFY(m_dir.isValid());
    useTemporaryAppFolders(m_dir);
    QVERIFY(ui::defaultModelPath().startsWith(m_dir.path()));

    m_modelPath = m_dir.filePath(QStringLiteral("synthetic.gguf"));
    std::string error;
    QVERIFY2(
        writeSyntheticModel(SyntheticSpec{}, QFile::encodeName(m_modelPath).toStdString(), error),
        error.c_str());
}

template <typename Edit> void MainWindowFixture::saveSettings(Edit edit) {
    QSettings(QStringLiteral("Sinkscope"), QStringLiteral("sinkscope")).clear();
    QFile::remove(ui::SessionActions::lastSessionPath());
    ui::AppSettings settings;
    settings.modelPath = m_modelPath;
    settings.toolsText = kSmallTools;
    settings.engine.kvWindow = 16;
    settings.limits.maxNewTokens = 40;
    // Random weights may sample end-of-text or a newline anywhere: replies run to their limit.
    settings.limits.stopAtNewline = false;
    settings.limits.ignoreEos = true;
    edit(settings);
    settings.save();
}

inline WindowPtr MainWindowFixture::openWindow() {
    return openLoadedWindow(kWaitMs);
}

} // namespace sinkscope::test
