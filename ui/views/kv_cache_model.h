// One row per physical KV slot of the newest snapshot (sinks first, then the ring). Updating
// with the same slot count only signals dataChanged, so a 30 Hz stream stays cheap.
#pragma once

#include "snapshot.h"

#include <QAbstractTableModel>
#include <QSet>

namespace sinkscope::views {

class KvCacheModel : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column {
        SlotColumn,
        KindColumn,
        PieceColumn,
        PositionColumn,
        AgeColumn,
        TokenColumn,
        AttentionColumn,
        ColumnCount
    };
    static constexpr int PositionRole = Qt::UserRole + 1; // qint64, -1 for an empty slot

    explicit KvCacheModel(QObject* parent = nullptr);

    void setSnapshot(const sinkscope::StepSnapshot& snapshot);
    const sinkscope::StepSnapshot& snapshot() const { return m_snapshot; }
    void clear();

    void setHighlightedPositions(const QSet<qint64>& positions);
    const QSet<qint64>& highlightedPositions() const { return m_highlighted; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    QVariant displayText(int slot, int column) const;
    QVariant background(int slot) const;
    QString toolTip(int slot) const;
    void signalAllRowsChanged();

    sinkscope::StepSnapshot m_snapshot;
    QSet<qint64> m_highlighted;
};

} // namespace sinkscope::views
