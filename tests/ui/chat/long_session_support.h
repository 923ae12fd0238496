// Long saved sessions for the suites and the benchmark: the session in force, saved through the
// window's own Save, with its turns replaced by `turnCount` short ones. Every 1,000th exchange,
// and the last but one, is a call of get_time, its result and a reply after it.
#pragma once

#include "session/session_file.h"
#include "ui/main_window_fixture.h"

namespace sinkscope::test {

inline QString longUserText(int exchange) {
    return QStringLiteral("message %1: is the kitchen light still on?").arg(exchange);
}

inline QString longReplyText(int exchange) {
    return QStringLiteral("reply %1: yes, it is on.").arg(exchange);
}

inline QList<ui::TurnView> longTurns(int turnCount) {
    QList<ui::TurnView> turns;
    turns.reserve(turnCount);
    const auto add = [&turns](TurnRole role, const QString& text) {
        ui::TurnView& turn = turns.emplace_back();
        turn.role = role;
        turn.text = text;
    };
    for (int exchange = 0; turns.size() < turnCount; ++exchange) {
        add(TurnRole::User, longUserText(exchange));
        const bool call = exchange % 1000 == 999 || turns.size() + 5 == turnCount;
        if (call && turns.size() + 3 <= turnCount) {
            add(TurnRole::Assistant, {});
            ui::ToolCallView call;
            call.name = QStringLiteral("get_time");
            call.argumentsJson = QStringLiteral("{}");
            turns.last().calls.append(call);
            add(TurnRole::ToolResult, QStringLiteral("{\"time\": \"12:%1\"}").arg(exchange % 60));
        }
        if (turns.size() < turnCount) add(TurnRole::Assistant, longReplyText(exchange));
    }
    return turns;
}

// Writes the session to `path`; false with `error` set when the window had none to save.
inline bool writeLongSession(ui::MainWindow& window, const QString& path, int turnCount,
                             QString& error) {
    const QString base = path + QStringLiteral(".base");
    window.sessionActions()->setFileChooser(
        [base](ui::SessionActions::Choice, const QString&,
               const std::function<void(const QString&)>& chosen) { chosen(base); });
    if (!waitForModelHash(window, kWaitMs)) {
        error = QStringLiteral("the model's hash was not read");
        return false;
    }
    window.sessionActions()->saveWithDialog();
    std::optional<ui::SessionFile> session = ui::readSessionFile(base, error);
    if (!session) return false;
    session->turns = longTurns(turnCount);
    return ui::writeSessionFile(path, *session, error);
}

// Opens the session file as File > Open Session does; the session the worker rebuilt from it,
// or one with an empty reason when that took longer than `waitMs`.
inline ui::SessionInfo openSession(ui::MainWindow& window, const QString& path, int waitMs) {
    QSignalSpy sessions(&window, &ui::MainWindow::sessionRebuilt);
    window.sessionActions()->openFile(path);
    while (true) {
        if (sessions.isEmpty() && !sessions.wait(waitMs)) return {};
        const ui::SessionInfo info = sessions.takeFirst().at(0).value<ui::SessionInfo>();
        if (info.restored) return info;
    }
}

} // namespace sinkscope::test
