// What the mask heatmap suites share: snapshots as the engine reports them, colours painted.
#pragma once

#include "memory/mask.h"
#include "memory/snapshot.h"
#include "views/mask_heatmap.h"

#include <QAbstractScrollArea>
#include <QColor>
#include <QImage>
#include <QList>
#include <QPoint>

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace sinkscope::test {

// Reports one step per position as the engine does (memory-architecture.md, section 3): sinks
// take slots [0, S) in order, the n-th other token takes ring slot S + (n mod W).
class SnapshotStream {
public:
    SnapshotStream(int window, std::set<int64_t> sinks, bool withAttention)
        : m_window(window), m_sinks(std::move(sinks)), m_withAttention(withAttention),
          m_slots(m_sinks.size() + size_t(window)) {}

    static std::string pieceOf(int64_t position) {
        return std::string("t").append(std::to_string(position));
    }
    static float weightOf(int64_t q, int64_t k) { return float(k + 1) / float(q + 1) / 64.f; }

    StepSnapshot next() {
        const int64_t q = m_next++;
        StepSnapshot snapshot;
        snapshot.queryPosition = q;
        snapshot.queryToken = int32_t(q);
        snapshot.queryPiece = pieceOf(q);
        snapshot.querySlot = place(q);
        snapshot.effectiveWindow = m_window;
        snapshot.hasAttention = m_withAttention;
        for (SlotView view : m_slots) {
            if (view.kind != SlotKind::Empty) {
                view.kept = keep(q, view.position, m_window, view.kind == SlotKind::Sink);
                view.attention = view.kept && m_withAttention ? weightOf(q, view.position) : 0.f;
            }
            snapshot.cacheSlots.push_back(view);
        }
        return snapshot;
    }

    QList<StepSnapshot> take(int count) {
        QList<StepSnapshot> batch;
        for (int i = 0; i < count; ++i)
            batch.append(next());
        return batch;
    }

private:
    int place(int64_t position) {
        const bool sink = m_sinks.count(position) > 0;
        const int slot =
            sink ? m_sinksPlaced++ : int(m_sinks.size() + size_t(m_ringWrites++ % m_window));
        SlotView& view = m_slots[size_t(slot)];
        view.token = int32_t(position);
        view.position = position;
        view.piece = pieceOf(position);
        view.kind = sink ? SlotKind::Sink : SlotKind::Ring;
        return slot;
    }

    int64_t m_window;
    std::set<int64_t> m_sinks;
    bool m_withAttention;
    std::vector<SlotView> m_slots; // [sinks + window]
    int m_sinksPlaced = 0;
    int64_t m_ringWrites = 0;
    int64_t m_next = 0;
};

inline constexpr int kWindow = 4;
inline constexpr int kPositions = 40;
inline const std::set<int64_t> kSinks{0, 1};

inline QAbstractScrollArea* canvasOf(views::MaskHeatmap& heatmap) {
    return heatmap.findChild<QAbstractScrollArea*>();
}

// The colour painted at a viewport pixel, read from a grab of the whole widget.
inline QColor paintedColorAt(views::MaskHeatmap& heatmap, QPoint inViewport) {
    const QPoint inWidget = heatmap.canvasViewport()->mapTo(&heatmap, inViewport);
    return heatmap.grab().toImage().pixelColor(inWidget);
}

// The colour painted at the centre of cell (q, k).
inline QColor paintedColor(views::MaskHeatmap& heatmap, qint64 q, qint64 k) {
    return paintedColorAt(heatmap, heatmap.cellCenter(q, k));
}

} // namespace sinkscope::test
