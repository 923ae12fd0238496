// How the playground's window was left, taken when it closes and given back at the next start:
// its geometry, the state of each named splitter, the inspector's tab.
#pragma once

#include <QByteArray>
#include <QMap>
#include <QString>

class QMainWindow;
class QTabWidget;

namespace sinkscope::ui {

struct WindowState {
    QByteArray geometry;                 // QWidget::saveGeometry(); empty: none saved
    QMap<QString, QByteArray> splitters; // QSplitter::saveState() by the splitter's object name
    int tab = -1;                        // the inspector's tab; -1: none saved
};

WindowState captureWindowState(const QMainWindow& window, const QTabWidget& tabs);
// What does not fit (another layout's splitter, a tab that no longer exists, bytes that are not
// a saved state) is left as it is.
void restoreWindowState(QMainWindow& window, QTabWidget& tabs, const WindowState& state);

} // namespace sinkscope::ui
