#include "window/window_state.h"

#include <QMainWindow>
#include <QSplitter>
#include <QTabWidget>

namespace sinkscope::ui {

WindowState captureWindowState(const QMainWindow& window, const QTabWidget& tabs) {
    WindowState state;
    state.geometry = window.saveGeometry();
    for (const QSplitter* splitter : window.findChildren<QSplitter*>())
        if (!splitter->objectName().isEmpty())
            state.splitters.insert(splitter->objectName(), splitter->saveState());
    state.tab = tabs.currentIndex();
    return state;
}

void restoreWindowState(QMainWindow& window, QTabWidget& tabs, const WindowState& state) {
    if (!state.geometry.isEmpty()) window.restoreGeometry(state.geometry);
    for (QSplitter* splitter : window.findChildren<QSplitter*>()) {
        const auto saved = state.splitters.constFind(splitter->objectName());
        if (saved != state.splitters.cend()) splitter->restoreState(*saved);
    }
    if (state.tab >= 0 && state.tab < tabs.count()) tabs.setCurrentIndex(state.tab);
}

} // namespace sinkscope::ui
