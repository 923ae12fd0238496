#include "panels/policy_slots_view.h"

#include "views/view_colors.h"

#include <QPainter>

namespace sinkscope::ui {

namespace {

constexpr int kRowHeight = 50;
constexpr int kNameWidth = 130;
constexpr int kBarHeight = 12;
constexpr int kMinRunWidth = 6; // a run of one key stays visible beside thousands

// Pixel widths of runs of `counts`, proportional, at least kMinRunWidth each, summing to `width`.
QList<int> runWidths(const QList<qint64>& counts, int width) {
    QList<int> widths;
    if (counts.isEmpty()) return widths;
    qint64 total = 0;
    for (const qint64 count : counts)
        total += count;
    const int spare = qMax(0, width - kMinRunWidth * int(counts.size()));
    int used = 0;
    for (const qint64 count : counts) {
        const int extra = int(double(spare) * double(count) / double(qMax<qint64>(1, total)));
        widths << kMinRunWidth + extra;
        used += widths.constLast();
    }
    widths.last() += width - used; // rounding
    return widths;
}

// The oldest position held outside the sink slots; `fallback` when there is none.
qint64 oldestWindowPosition(const QList<SlotRun>& runs, qint64 fallback) {
    qint64 oldest = fallback;
    for (const SlotRun& run : runs)
        if (!run.sink) oldest = qMin(oldest, run.firstPosition);
    return oldest;
}

QString rangeText(qint64 first, qint64 last) {
    return first == last ? QString::number(first) : QStringLiteral("%1–%2").arg(first).arg(last);
}

QString cellName(MaskCell cell) {
    switch (cell) {
    case MaskCell::AttendedRecent:
        return QObject::tr("recent");
    case MaskCell::AttendedSink:
        return QObject::tr("sink");
    case MaskCell::Evicted:
        return QObject::tr("evicted");
    case MaskCell::Future:
        break;
    }
    return QObject::tr("future");
}

} // namespace

PolicyMaskShape maskShapeOf(const Policy& policy, qint64 window, qint64 query) {
    switch (policy.kind) {
    case PolicyKind::Dense:
        return {query + 1, 0};
    case PolicyKind::Sinks:
        return {window, policy.sinks};
    case PolicyKind::Window:
    case PolicyKind::Recompute:
        break;
    }
    return {window, 0};
}

QList<KeySegment> maskRowSegments(qint64 query, const PolicyMaskShape& shape) {
    QList<KeySegment> segments;
    for (qint64 key = 0; key <= query; ++key) {
        const MaskCell cell = classify(query, key, shape.window, key < shape.sinks);
        if (!segments.isEmpty() && segments.last().cell == cell)
            segments.last().last = key;
        else
            segments << KeySegment{cell, key, key};
    }
    return segments;
}

qint64 ringSlotOf(qint64 position, qint64 sinks, qint64 window) {
    if (position < sinks) return position;
    return sinks + (position - sinks) % window;
}

QList<SlotRun> slotRuns(const Policy& policy, qint64 window, qint64 query) {
    if (query < 0) return {};
    if (policy.kind == PolicyKind::Dense) return {SlotRun{0, query, 0, query, false}};
    if (policy.kind == PolicyKind::Recompute) {
        const qint64 first = qMax<qint64>(0, query - window + 1);
        return {SlotRun{0, query - first, first, query, false}};
    }
    QList<SlotRun> runs;
    const qint64 sinks =
        policy.kind == PolicyKind::Sinks ? qMin<qint64>(policy.sinks, query + 1) : 0;
    if (sinks > 0) runs << SlotRun{0, sinks - 1, 0, sinks - 1, true};
    const qint64 written = query - sinks + 1; // non-sink positions written so far
    if (written <= 0) return runs;
    if (written <= window) {
        runs << SlotRun{sinks, sinks + written - 1, sinks, query, false};
        return runs;
    }
    // A full ring: slots up to the newest write hold the newest positions, the rest the oldest.
    const qint64 newestSlot = ringSlotOf(query, sinks, window);
    runs << SlotRun{sinks, newestSlot, query - (newestSlot - sinks), query, false};
    const qint64 lastSlot = sinks + window - 1;
    if (newestSlot < lastSlot) {
        const qint64 oldest = query - window + 1;
        runs << SlotRun{newestSlot + 1, lastSlot, oldest, oldest + (lastSlot - newestSlot - 1),
                        false};
    }
    return runs;
}

PolicySlotsView::PolicySlotsView(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("policySlotsView"));
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
}

void PolicySlotsView::setPolicies(const QList<Policy>& policies, qint64 window) {
    m_policies = policies;
    m_window = window;
    m_query = -1;
    updateGeometry();
    update();
}

void PolicySlotsView::setQuery(qint64 query) {
    m_query = query;
    update();
}

void PolicySlotsView::clear() {
    setPolicies({}, 0);
}

QSize PolicySlotsView::sizeHint() const {
    return {600, 24 + kRowHeight * int(qMax<qsizetype>(1, m_policies.size()))};
}

QSize PolicySlotsView::minimumSizeHint() const {
    return sizeHint(); // the scroll area scrolls rather than squeezing the strips
}

QStringList PolicySlotsView::summaryLines() const {
    QStringList lines;
    if (m_query < 0) return lines;
    for (const Policy& policy : m_policies)
        lines << summaryOf(policy);
    return lines;
}

QString PolicySlotsView::summaryOf(const Policy& policy) const {
    QStringList keys;
    for (const KeySegment& segment :
         maskRowSegments(m_query, maskShapeOf(policy, m_window, m_query)))
        keys << tr("%1 %2").arg(cellName(segment.cell), rangeText(segment.first, segment.last));
    QStringList slotTexts;
    for (const SlotRun& run : slotRuns(policy, m_window, m_query))
        slotTexts << tr("slots %1 ← %2")
                         .arg(rangeText(run.firstSlot, run.lastSlot),
                              rangeText(run.firstPosition, run.lastPosition));
    QString line = tr("keys: %1 · %2")
                       .arg(keys.join(QStringLiteral(", ")), slotTexts.join(QStringLiteral(", ")));
    if (policy.kind == PolicyKind::Recompute) line += tr(" (fresh cache, re-run)");
    if (policy.streaming) line += tr(" (positions taken within the cache)");
    return line;
}

void PolicySlotsView::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.fillRect(rect(), palette().base());
    if (m_query < 0 || m_policies.isEmpty()) {
        painter.setPen(palette().color(QPalette::PlaceholderText));
        painter.drawText(rect(), Qt::AlignCenter,
                         tr("Click the chart to see the mask row and KV slots at a position."));
        return;
    }
    painter.setPen(palette().color(QPalette::Text));
    painter.drawText(QRect(6, 2, width() - 12, 20), Qt::AlignLeft | Qt::AlignVCenter,
                     tr("Position %1, W = %2: mask row over keys 0..q (blue recent, orange "
                        "sink, pink evicted), then KV slots")
                         .arg(m_query)
                         .arg(m_window));
    for (qsizetype i = 0; i < m_policies.size(); ++i)
        paintPolicy(painter, QRect(6, 24 + int(i) * kRowHeight, width() - 12, kRowHeight - 4),
                    m_policies.at(i));
}

void PolicySlotsView::paintPolicy(QPainter& painter, const QRect& area,
                                  const Policy& policy) const {
    painter.setPen(palette().color(QPalette::Text));
    painter.drawText(QRect(area.left(), area.top(), kNameWidth, kBarHeight * 2 + 2),
                     Qt::AlignLeft | Qt::AlignVCenter, QString::fromStdString(policyName(policy)));
    const int barLeft = area.left() + kNameWidth;
    const int barWidth = area.width() - kNameWidth;
    paintMaskRow(painter, QRect(barLeft, area.top(), barWidth, kBarHeight), policy);
    paintSlots(painter, QRect(barLeft, area.top() + kBarHeight + 2, barWidth, kBarHeight), policy);
    QFont small = painter.font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    painter.setFont(small);
    painter.setPen(palette().color(QPalette::Text));
    painter.drawText(QRect(area.left(), area.top() + 2 * kBarHeight + 6, area.width(),
                           area.height() - 2 * kBarHeight - 6),
                     Qt::AlignLeft | Qt::AlignTop, summaryOf(policy));
    painter.setFont(font());
}

void PolicySlotsView::paintMaskRow(QPainter& painter, const QRect& bar,
                                   const Policy& policy) const {
    const views::MaskColors colors = views::MaskColors::forPalette(palette());
    const QList<KeySegment> segments =
        maskRowSegments(m_query, maskShapeOf(policy, m_window, m_query));
    QList<qint64> counts;
    for (const KeySegment& segment : segments)
        counts << segment.count();
    const QList<int> widths = runWidths(counts, bar.width());
    int x = bar.left();
    for (qsizetype i = 0; i < segments.size(); ++i) {
        painter.fillRect(QRect(x, bar.top(), widths.at(i), bar.height()),
                         colors.cell(segments.at(i).cell));
        x += widths.at(i);
    }
}

// Sink slots in the sink colour; the window's slots shaded by age, newest darkest, with the slot
// the query was written to outlined.
void PolicySlotsView::paintSlots(QPainter& painter, const QRect& bar, const Policy& policy) const {
    const views::MaskColors colors = views::MaskColors::forPalette(palette());
    const QList<SlotRun> runs = slotRuns(policy, m_window, m_query);
    QList<qint64> counts;
    for (const SlotRun& run : runs)
        counts << run.lastSlot - run.firstSlot + 1;
    const QList<int> widths = runWidths(counts, bar.width());
    const qint64 oldest = oldestWindowPosition(runs, m_query);
    int x = bar.left();
    for (qsizetype i = 0; i < runs.size(); ++i) {
        const SlotRun& run = runs.at(i);
        const QRect cell(x, bar.top(), widths.at(i), bar.height());
        if (run.sink) {
            painter.fillRect(cell, colors.sink);
        } else {
            // Newer runs darker: the age of the run's newest position within the held span.
            const double age =
                double(m_query - run.lastPosition) / double(qMax<qint64>(1, m_query - oldest));
            painter.fillRect(cell, views::mixColors(colors.recent, colors.background, 0.6 * age));
        }
        if (!run.sink && run.lastPosition == m_query) {
            painter.setPen(QPen(colors.highlight, 2));
            painter.drawLine(cell.right() - 1, cell.top(), cell.right() - 1, cell.bottom());
        }
        x += widths.at(i);
    }
}

} // namespace sinkscope::ui
