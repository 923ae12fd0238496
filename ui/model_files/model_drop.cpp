#include "model_files/model_drop.h"

#include <QApplication>
#include <QDropEvent>
#include <QFileInfo>
#include <QMimeData>
#include <QUrl>
#include <QWidget>

#include <algorithm>

namespace sinkscope::ui {

ModelDrop modelDropOf(const QMimeData* data) {
    ModelDrop drop;
    const QList<QUrl> urls = data && data->hasUrls() ? data->urls() : QList<QUrl>{};
    drop.carriesFiles = std::ranges::any_of(urls, &QUrl::isLocalFile);
    if (!drop.carriesFiles) return drop;
    if (urls.size() > 1) {
        drop.refusal =
            QObject::tr("Drop one model file at a time (%1 were dropped).").arg(urls.size());
        return drop;
    }
    const QFileInfo file(urls.constFirst().toLocalFile());
    if (file.isDir())
        drop.refusal = QObject::tr("%1 is a folder, not a model file.").arg(file.fileName());
    else if (file.suffix().compare(QLatin1String("gguf"), Qt::CaseInsensitive) != 0)
        drop.refusal =
            QObject::tr("%1 is not a GGUF model: only .gguf files open.").arg(file.fileName());
    else
        drop.path = file.absoluteFilePath();
    return drop;
}

ModelDropTarget::ModelDropTarget(QWidget* window) : QObject(window), m_window(window) {
    m_window->setAcceptDrops(true);
    // On the application, not the window: a drag over a child that takes drops (the message box)
    // goes to that child, and the window would never see it.
    qApp->installEventFilter(this);
}

bool ModelDropTarget::eventFilter(QObject* watched, QEvent* event) {
    const QEvent::Type type = event->type();
    if (type != QEvent::DragEnter && type != QEvent::DragMove && type != QEvent::Drop) return false;
    const auto* widget = qobject_cast<QWidget*>(watched);
    if (!widget || widget->window() != m_window) return false;
    // QDragEnterEvent and QDragMoveEvent are QDropEvents.
    auto* dropEvent = static_cast<QDropEvent*>(event);
    const ModelDrop drop = modelDropOf(dropEvent->mimeData());
    if (!drop.carriesFiles) return false;
    if (drop.path.isEmpty()) {
        dropEvent->ignore();
        if (type != QEvent::DragMove) emit refused(drop.refusal);
        return true;
    }
    dropEvent->setDropAction(Qt::CopyAction);
    dropEvent->accept();
    if (type == QEvent::Drop) emit modelDropped(drop.path);
    return true;
}

} // namespace sinkscope::ui
