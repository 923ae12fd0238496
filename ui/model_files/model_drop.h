// A model file dragged onto the playground window opens as File > Open Model… opens it: one
// local .gguf file is taken; other files, several files or a folder are refused, and the reason
// is said while the drag is still over the window.
#pragma once

#include <QObject>
#include <QString>

class QMimeData;
class QWidget;

namespace sinkscope::ui {

// What dropping `data` does: open `path`, or be refused for `refusal` (exactly one is set).
// `carriesFiles` is false for drags with no local file (text, web links): those are left to
// the widget under the cursor (the message box takes text).
struct ModelDrop {
    bool carriesFiles = false;
    QString path;
    QString refusal;
};
ModelDrop modelDropOf(const QMimeData* data);

class ModelDropTarget : public QObject {
    Q_OBJECT
public:
    // Accepts drops on `window` and watches the drags over any of its widgets.
    explicit ModelDropTarget(QWidget* window);

signals:
    void modelDropped(const QString& path);
    void refused(const QString& reason);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    QWidget* m_window;
};

} // namespace sinkscope::ui
