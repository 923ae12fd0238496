// File > Recent Models: the models last opened, most recent first, as the window's settings keep
// them (AppSettings::recentModels). Entries for files that are gone are shown disabled; the
// menu checks again each time it opens.
#pragma once

#include <QMenu>
#include <QStringList>

namespace sinkscope::ui {

inline constexpr int kMaxRecentModels = 8;

// `path` first, then the entries of `recent` that are other files, at most kMaxRecentModels.
QStringList withRecentModel(const QStringList& recent, const QString& path);
// Without empty entries and repeats (paths compared made absolute and clean), at most
// kMaxRecentModels: settings edited by hand may hold anything.
QStringList cleanRecentModels(const QStringList& recent);

class RecentModelsMenu : public QMenu {
    Q_OBJECT
public:
    explicit RecentModelsMenu(QWidget* parent = nullptr);

    void setModels(const QStringList& paths); // most recent first
    const QStringList& models() const { return m_paths; }

signals:
    void modelChosen(const QString& path);
    void clearRequested();

private:
    void rebuild();

    QStringList m_paths;
};

} // namespace sinkscope::ui
