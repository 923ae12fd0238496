// For one query position, what each policy keeps: the mask row (which key positions are attended
// as recent or as sinks, and which are evicted), from the pure keep()/classify() rule, and which
// KV slot holds which position. Ring policies put sinks in slots [0, S) and the n-th non-sink
// token in ring slot S + (n mod W); dense holds position p in slot p; recompute re-runs the last
// W tokens into a fresh cache, slot i holding the window's i-th token.
#pragma once

#include "eval/stream_eval.h"
#include "memory/mask.h"

#include <QList>
#include <QWidget>

namespace sinkscope::ui {

// The window and sink set a policy's mask applies at query q.
struct PolicyMaskShape {
    qint64 window = 0; // keys with q - k < window are recent
    qint64 sinks = 0;  // keys k < sinks are sinks
};
PolicyMaskShape maskShapeOf(const Policy& policy, qint64 window, qint64 query);

// A run of consecutive key positions [first, last] that classify() puts in the same cell.
struct KeySegment {
    MaskCell cell = MaskCell::Evicted;
    qint64 first = 0;
    qint64 last = 0;
    qint64 count() const { return last - first + 1; }
};
// [runs] the mask row of query q over keys 0..q.
QList<KeySegment> maskRowSegments(qint64 query, const PolicyMaskShape& shape);

// A run of KV slots [firstSlot, lastSlot] holding consecutive positions from firstPosition up,
// except that a ring run holds them rotated: the slot of position p is slotOf(p).
struct SlotRun {
    qint64 firstSlot = 0;
    qint64 lastSlot = 0;
    qint64 firstPosition = 0; // the oldest position held in the run
    qint64 lastPosition = 0;  // the newest
    bool sink = false;
};
// [runs] the slots of a policy after query q was written, sinks first.
QList<SlotRun> slotRuns(const Policy& policy, qint64 window, qint64 query);
// The slot that holds position p under a ring policy with S sinks and window W.
qint64 ringSlotOf(qint64 position, qint64 sinks, qint64 window);

class PolicySlotsView : public QWidget {
    Q_OBJECT
public:
    explicit PolicySlotsView(QWidget* parent = nullptr);

    void setPolicies(const QList<Policy>& policies, qint64 window);
    void setQuery(qint64 query); // -1: nothing picked
    void clear();

    qint64 query() const { return m_query; }
    // One line per policy, as drawn under its strips ("sink:4 · ring slot 40 ← 5000 · …").
    QStringList summaryLines() const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    QString summaryOf(const Policy& policy) const;
    void paintPolicy(QPainter& painter, const QRect& area, const Policy& policy) const;
    void paintMaskRow(QPainter& painter, const QRect& bar, const Policy& policy) const;
    void paintSlots(QPainter& painter, const QRect& bar, const Policy& policy) const;

    QList<Policy> m_policies;
    qint64 m_window = 0;
    qint64 m_query = -1;
};

} // namespace sinkscope::ui
