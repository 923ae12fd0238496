// The playground's persistent settings, stored with QSettings under organization "Sinkscope",
// application "sinkscope" (tests point QSettings at a temporary folder).
#pragma once

#include "window/window_state.h"
#include "worker/engine_types.h"

#include <QString>
#include <QStringList>

#include <optional>

namespace sinkscope::ui {

// The value a name stands for (positionModeName, sinkModeName, callPolicyName); nullopt for any
// other name.
std::optional<PositionMode> positionModeNamed(const QString& name);
std::optional<SinkMode> sinkModeNamed(const QString& name);
std::optional<CallPolicy> callPolicyNamed(const QString& name);

struct AppSettings {
    QString modelPath;              // empty: the synthetic model on first run
    QStringList recentModels;       // opened successfully, most recent first (recent_models.h)
    QString toolsText;              // the tools editor text last applied; empty: the first preset
    bool toolsInSystemTurn = false; // the template's switch, where a model's template has it
    bool restoreLastSession = true; // the chat saved at quit comes back at the next start
    bool sendWithCtrlEnter = false; // Enter adds a line and Ctrl+Enter sends (MessageInput)
    EngineSettings engine;
    GenerationLimits limits;
    WindowState window; // as the window was last closed

    static AppSettings load();
    void save() const;
};

} // namespace sinkscope::ui
