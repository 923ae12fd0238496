#include "model_files/recent_models.h"

#include <QDir>
#include <QFileInfo>

namespace sinkscope::ui {

namespace {

QString comparable(const QString& path) {
    return QDir::cleanPath(QFileInfo(path).absoluteFilePath());
}

// "&3 model.gguf — /models": the number is the entry's mnemonic; a '&' in a name is literal.
QString entryText(int index, const QString& path) {
    const QFileInfo file(path);
    QString name = file.fileName();
    name.replace(QLatin1Char('&'), QLatin1String("&&"));
    QString folder = QDir::toNativeSeparators(file.absolutePath());
    folder.replace(QLatin1Char('&'), QLatin1String("&&"));
    return QObject::tr("&%1 %2 — %3").arg(index + 1).arg(name, folder);
}

} // namespace

QStringList cleanRecentModels(const QStringList& recent) {
    QStringList cleaned;
    QStringList seen;
    for (const QString& path : recent) {
        if (path.isEmpty() || seen.contains(comparable(path))) continue;
        seen << comparable(path);
        cleaned << path;
        if (cleaned.size() == kMaxRecentModels) break;
    }
    return cleaned;
}

QStringList withRecentModel(const QStringList& recent, const QString& path) {
    return cleanRecentModels(QStringList{path} + recent);
}

RecentModelsMenu::RecentModelsMenu(QWidget* parent) : QMenu(tr("Recent &Models"), parent) {
    setObjectName(QStringLiteral("recentModelsMenu"));
    setToolTipsVisible(true);
    connect(this, &QMenu::aboutToShow, this, &RecentModelsMenu::rebuild);
    rebuild();
}

void RecentModelsMenu::setModels(const QStringList& paths) {
    m_paths = paths;
    rebuild();
}

void RecentModelsMenu::rebuild() {
    clear();
    for (int i = 0; i < m_paths.size(); ++i) {
        const QString path = m_paths[i];
        QAction* entry =
            addAction(entryText(i, path), this, [this, path] { emit modelChosen(path); });
        // Ctrl+Alt: Ctrl+1… pick the inspector's tabs (View menu).
        entry->setShortcut(QKeySequence(tr("Ctrl+Alt+%1").arg(i + 1)));
        const bool present = QFileInfo(path).isFile();
        entry->setEnabled(present);
        entry->setToolTip(present
                              ? QDir::toNativeSeparators(path)
                              : tr("%1 is no longer there").arg(QDir::toNativeSeparators(path)));
    }
    if (m_paths.isEmpty()) addAction(tr("No recent models"))->setEnabled(false);
    addSeparator();
    QAction* clearList = addAction(tr("&Clear Recent Models"), QKeySequence(tr("Ctrl+Shift+Del")),
                                   this, &RecentModelsMenu::clearRequested);
    clearList->setEnabled(!m_paths.isEmpty());
}

} // namespace sinkscope::ui
