// The physical KV cache of the newest snapshot: every slot (sinks first, then the ring) with its
// piece, position, age and kind, the ring's write head marked, and the session's counters with
// the bytes allocated against the KV budget.
#pragma once

#include "memory/snapshot.h"
#include "views/live_label.h"

#include <QList>
#include <QWidget>

class QProgressBar;
class QTableView;

namespace sinkscope::views {

class KvCacheModel;

class KvCacheView : public QWidget {
    Q_OBJECT

public:
    explicit KvCacheView(QWidget* parent = nullptr);

    void setSnapshot(const sinkscope::StepSnapshot& snapshot);
    void setSnapshots(const QList<sinkscope::StepSnapshot>& snapshots); // shows the last one
    void clear();

    // Marks the slots holding these positions (tool attribution); an empty list clears.
    void highlightPositions(const QList<qint64>& positions);
    QList<qint64> highlightedPositions() const;

    QString memoryText() const;   // the bytes bar's text
    QString countersText() const; // window, kv_bits, sinks, evictions
    QTableView* slotTable() const { return m_table; }

signals:
    void slotClicked(int slot, qint64 position);

private:
    void configureTable();
    void refreshCounters();

    KvCacheModel* m_model = nullptr;
    QTableView* m_table = nullptr;
    LiveLabel* m_counters = nullptr;
    QProgressBar* m_bytesBar = nullptr;
};

} // namespace sinkscope::views
