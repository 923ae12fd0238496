#include "views/memory_gauge.h"

#include "views/kv_bytes.h"
#include "views/piece_text.h"
#include "views/view_colors.h"

#include <QEvent>
#include <QLocale>
#include <QPainter>

#include <algorithm>

namespace sinkscope::views {

namespace {

constexpr int kBarWidth = 120;
constexpr int kBarHeight = 10;
constexpr int kGap = 6;     // between the bar and the figures
constexpr int kMinPart = 3; // the narrower part of the bar stays visible

// "evicts 'kitchen' (position 205)", or what writing into an empty slot means.
QString nextWriteText(const StepSnapshot& snapshot) {
    const auto slot = static_cast<size_t>(snapshot.ringHead);
    if (snapshot.ringHead < 0 || slot >= snapshot.cacheSlots.size()) return {};
    const SlotView& occupant = snapshot.cacheSlots[slot];
    if (occupant.kind != SlotKind::Ring)
        return MemoryGauge::tr("The next token writes slot %1, still empty: the window is not "
                               "full yet, nothing is evicted.")
            .arg(snapshot.ringHead);
    return MemoryGauge::tr("The next token writes slot %1 and evicts '%2' (position %3).")
        .arg(snapshot.ringHead)
        .arg(visiblePiece(occupant.piece))
        .arg(occupant.position);
}

} // namespace

MemoryGauge::MemoryGauge(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("memoryGauge"));
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
    clear();
}

void MemoryGauge::showSession(int sinkSlots, int sinksUsed, qint64 window, qint64 bytesAllocated,
                              qint64 budgetBytes) {
    m_figures = GaugeFigures{sinkSlots, sinksUsed, window, 0, bytesAllocated, budgetBytes, 0, -1};
    m_empty = false;
    refresh(tr("The session is ready: its sinks are pinned."));
}

void MemoryGauge::showStep(const StepSnapshot& snapshot) {
    m_figures.sinkSlots = snapshot.sinkSlots;
    m_figures.sinksUsed = snapshot.sinksUsed;
    m_figures.window = snapshot.effectiveWindow;
    m_figures.ringFilled =
        std::count_if(snapshot.cacheSlots.begin(), snapshot.cacheSlots.end(),
                      [](const SlotView& slot) { return slot.kind == SlotKind::Ring; });
    m_figures.bytesAllocated = snapshot.bytesAllocated;
    m_figures.budgetBytes = snapshot.budgetBytes;
    m_figures.evictions = snapshot.evictions;
    m_figures.nextSlot = snapshot.ringHead;
    m_empty = false;
    refresh(nextWriteText(snapshot));
}

void MemoryGauge::clear() {
    m_figures = GaugeFigures{};
    m_empty = true;
    m_text = tr("KV: no model");
    setToolTip(tr("The KV memory of the loaded model's session."));
    m_textWidth = 0;
    fitText();
    update();
}

void MemoryGauge::refresh(const QString& nextWrite) {
    const GaugeFigures& f = m_figures;
    m_text = tr("window %1/%2 · %3 sinks · %4 of %5 · %6 evicted")
                 .arg(QLocale().toString(f.ringFilled), QLocale().toString(f.window))
                 .arg(QLocale().toString(f.sinksUsed), mebibytes(f.bytesAllocated),
                      mebibytes(f.budgetBytes), QLocale().toString(f.evictions));
    setToolTip(tr("KV memory: %1 pinned sink slots (%2 used) and a window of %3 slots; %4 "
                  "allocated of the %5 budget; %6 tokens evicted so far.\n%7")
                   .arg(f.sinkSlots)
                   .arg(f.sinksUsed)
                   .arg(f.window)
                   .arg(mebibytes(f.bytesAllocated), mebibytes(f.budgetBytes))
                   .arg(f.evictions)
                   .arg(nextWrite));
    fitText();
    update();
}

// The figures change every step; asking the status bar to lay out again each time would repaint
// it 30 times a second, so the width only grows (and starts over when the model is closed).
void MemoryGauge::fitText() {
    const int width = QFontMetrics(font()).horizontalAdvance(m_text);
    if (width <= m_textWidth) return;
    m_textWidth = width;
    updateGeometry();
}

void MemoryGauge::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() != QEvent::FontChange) return;
    m_textWidth = 0; // measured again in the new font
    fitText();
}

QSize MemoryGauge::sizeHint() const {
    const QFontMetrics metrics(font());
    return {kBarWidth + kGap + m_textWidth + 2, std::max(kBarHeight, metrics.height()) + 2};
}

void MemoryGauge::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    const MaskColors colors = MaskColors::forPalette(palette());
    const QRect bar(0, (height() - kBarHeight) / 2, kBarWidth, kBarHeight);
    painter.fillRect(bar, colors.background);
    const GaugeFigures& f = m_figures;
    const qint64 total = f.sinkSlots + f.window;
    if (!m_empty && total > 0) {
        // Sinks, then the ring, each part as wide as its share of the slots.
        int sinkWidth = static_cast<int>(bar.width() * f.sinkSlots / total);
        if (f.sinkSlots > 0) sinkWidth = std::clamp(sinkWidth, kMinPart, bar.width() - kMinPart);
        const int ringWidth = bar.width() - sinkWidth;
        const int sinkFill = f.sinkSlots > 0 ? sinkWidth * f.sinksUsed / f.sinkSlots : 0;
        painter.fillRect(QRect(bar.left(), bar.top(), sinkFill, bar.height()), colors.sink);
        const int ringFill =
            f.window > 0 ? static_cast<int>(ringWidth * std::min(f.ringFilled, f.window) / f.window)
                         : 0;
        painter.fillRect(QRect(bar.left() + sinkWidth, bar.top(), ringFill, bar.height()),
                         colors.recent);
        if (f.nextSlot >= f.sinkSlots && f.window > 0) {
            const int x = bar.left() + sinkWidth +
                          static_cast<int>(ringWidth * (f.nextSlot - f.sinkSlots) / f.window);
            painter.fillRect(QRect(x, bar.top() - 1, 2, bar.height() + 2), colors.highlight);
        }
    }
    painter.setPen(palette().color(QPalette::Mid));
    painter.drawRect(bar.adjusted(0, 0, -1, -1));
    painter.setPen(palette().color(QPalette::WindowText));
    painter.drawText(QRect(bar.right() + kGap, 0, width() - bar.right() - kGap, height()),
                     Qt::AlignVCenter | Qt::AlignLeft, m_text);
}

} // namespace sinkscope::views
