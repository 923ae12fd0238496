// One row per physical KV slot of the newest snapshot (sinks first, then the ring). Updating
// with the same slot count signals dataChanged only for the cells that changed: the rows whose
// slot changed (a step writes one ring slot; kept flags and weights move with the query), the Age
// column when the query moved, and the rows that gain or lose the write-head and query marks.
#pragma once

#include "memory/snapshot.h"

#include <QAbstractTableModel>
#include <QSet>

#include <vector>

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
    void updateSlots(const sinkscope::StepSnapshot& snapshot);
    void signalRowsChanged(const std::vector<bool>& changed);

    sinkscope::StepSnapshot m_snapshot;
    QSet<qint64> m_highlighted;
};

} // namespace sinkscope::views
