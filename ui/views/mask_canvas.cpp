#include "views/mask_canvas.h"

#include "views/mask_image.h"
#include "views/piece_text.h"
#include "views/view_colors.h"

#include <QFont>
#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QScopedValueRollback>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <climits>
#include <cmath>

namespace sinkscope::views {

namespace {

constexpr double kWheelZoomStep = 1.25;        // per wheel notch (120 units)
constexpr double kSinkStripMaxFraction = 0.25; // of the viewport's width, divider included

QString quotedPiece(const QString& piece) {
    return piece.isEmpty() ? QStringLiteral("(no text)")
                           : QStringLiteral("“%1”").arg(visiblePiece(piece));
}

QString kindDescription(MaskCell kind, qint64 distance, qint64 window) {
    switch (kind) {
    case MaskCell::AttendedRecent:
        return QStringLiteral("attended: recent (q − k = %1 < W = %2)").arg(distance).arg(window);
    case MaskCell::AttendedSink:
        return QStringLiteral("attended: sink (q − k = %1 ≥ W = %2)").arg(distance).arg(window);
    case MaskCell::Evicted:
        return QStringLiteral("evicted (q − k = %1 ≥ W = %2, not a sink)")
            .arg(distance)
            .arg(window);
    case MaskCell::Future:
        break;
    }
    return QStringLiteral("future (k > q)");
}

} // namespace

MaskCanvas::MaskCanvas(const MaskRows& rows, QWidget* parent)
    : QAbstractScrollArea(parent), m_rows(rows) {
    setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    viewport()->setCursor(Qt::CrossCursor);
    for (QScrollBar* bar : {horizontalScrollBar(), verticalScrollBar()})
        connect(bar, &QScrollBar::valueChanged, this, [this] {
            if (!m_adjusting) userScrolled();
        });
}

void MaskCanvas::rowsChanged() {
    {
        QScopedValueRollback adjusting(m_adjusting, true);
        updateScrollRanges();
        if (m_following) scrollToNewest();
    }
    invalidateImage();
}

void MaskCanvas::setCellSize(double cellSize, QPoint anchor) {
    const double clamped = std::clamp(cellSize, std::min(fitCellSize(), 1.0), kMaxCellSize);
    if (clamped == m_cellSize) return;
    const double anchorX = (horizontalScrollBar()->value() + anchor.x()) / m_cellSize;
    const double anchorY = (verticalScrollBar()->value() + anchor.y()) / m_cellSize;
    m_cellSize = clamped;
    {
        QScopedValueRollback adjusting(m_adjusting, true);
        updateScrollRanges();
        if (m_following) {
            scrollToNewest();
        } else {
            horizontalScrollBar()->setValue(int(std::lround(anchorX * m_cellSize - anchor.x())));
            verticalScrollBar()->setValue(int(std::lround(anchorY * m_cellSize - anchor.y())));
        }
    }
    invalidateImage();
}

void MaskCanvas::zoomBy(double factor) {
    setCellSize(m_cellSize * factor, viewport()->rect().center());
}

void MaskCanvas::fitToView() {
    setCellSize(std::min(fitCellSize(), kMaxCellSize), QPoint());
}

double MaskCanvas::fitCellSize() const {
    const qint64 count = std::max<qint64>(1, m_rows.positionCount());
    const int side = std::min(viewport()->width(), viewport()->height());
    return std::max(1, side) / double(count);
}

void MaskCanvas::setFollowing(bool following) {
    if (following == m_following) return;
    m_following = following;
    if (m_following) rowsChanged();
    emit followingChanged(m_following);
}

void MaskCanvas::setHighlightedKeys(std::vector<int64_t> keys) {
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    keys.erase(keys.begin(), std::lower_bound(keys.begin(), keys.end(), 0));
    if (keys == m_highlightedKeys) return;
    m_highlightedKeys = std::move(keys);
    invalidateImage();
}

int MaskCanvas::sinkStripWidth() const {
    return sinkStrip().width();
}

// Shown once the first sink's column has scrolled (even partly) out of view on the left.
MaskCanvas::SinkStrip MaskCanvas::sinkStrip() const {
    SinkStrip strip;
    const int64_t sinks = m_rows.sinkCount();
    if (sinks == 0 || double(m_rows.sinkAt(0)) * m_cellSize >= horizontalScrollBar()->value())
        return strip;
    const int cellsRoom =
        std::max(1, int(viewport()->width() * kSinkStripMaxFraction) - kDividerPixels);
    strip.sinkCellSize = std::min(m_cellSize, double(cellsRoom) / double(sinks));
    strip.cellsWidth = std::clamp(int(std::ceil(double(sinks) * strip.sinkCellSize)), 1, cellsRoom);
    return strip;
}

std::optional<int64_t> MaskCanvas::sinkInStrip(const SinkStrip& strip, int x) const {
    if (x < 0 || x >= strip.cellsWidth) return std::nullopt;
    const auto rank = std::min(m_rows.sinkCount() - 1, int64_t(std::floor(x / strip.sinkCellSize)));
    return m_rows.sinkAt(rank);
}

MaskCanvas::VisibleCells MaskCanvas::visibleCells() const {
    const qint64 last = m_rows.positionCount() - 1;
    const auto cellUnder = [this, last](int pixel) {
        return std::min(last, qint64(std::floor(pixel / m_cellSize)));
    };
    VisibleCells cells;
    const int left = horizontalScrollBar()->value();
    const int top = verticalScrollBar()->value();
    cells.firstKey = cellUnder(left + sinkStrip().width());
    cells.lastKey = cellUnder(left + viewport()->width() - 1);
    cells.firstQuery = cellUnder(top);
    cells.lastQuery = cellUnder(top + viewport()->height() - 1);
    return cells;
}

QPoint MaskCanvas::cellCenter(qint64 q, qint64 k) const {
    const int y = int(std::floor((double(q) + 0.5) * m_cellSize)) - verticalScrollBar()->value();
    const SinkStrip strip = sinkStrip();
    const int64_t rank = strip.cellsWidth > 0 ? m_rows.sinkRank(k) : -1;
    if (rank >= 0) return QPoint(int(std::floor((double(rank) + 0.5) * strip.sinkCellSize)), y);
    return QPoint(int(std::floor((double(k) + 0.5) * m_cellSize)) - horizontalScrollBar()->value(),
                  y);
}

std::optional<std::pair<qint64, qint64>> MaskCanvas::cellAt(QPoint pos) const {
    if (!viewport()->rect().contains(pos)) return std::nullopt;
    const auto q = qint64(std::floor((verticalScrollBar()->value() + pos.y()) / m_cellSize));
    const SinkStrip strip = sinkStrip();
    std::optional<qint64> k;
    if (pos.x() < strip.width())
        k = sinkInStrip(strip, pos.x());
    else
        k = qint64(std::floor((horizontalScrollBar()->value() + pos.x()) / m_cellSize));
    if (!k || q < 0 || *k < 0 || q >= m_rows.positionCount() || *k >= m_rows.positionCount())
        return std::nullopt;
    return std::pair{q, *k};
}

QString MaskCanvas::describeCell(qint64 q, qint64 k) const {
    const std::optional<MaskCell> kind = m_rows.cellKind(q, k);
    if (!kind) return {};
    const qint64 window = m_rows.window(q);
    QStringList lines;
    lines << QStringLiteral("query %1: %2").arg(q).arg(quotedPiece(m_rows.piece(q)));
    lines << QStringLiteral("key %1: %2").arg(k).arg(quotedPiece(m_rows.piece(k)));
    const bool inCache = *kind == MaskCell::AttendedRecent || *kind == MaskCell::AttendedSink;
    const int slot = m_rows.slotOf(k);
    lines << (inCache && slot >= 0 ? QStringLiteral("slot %1").arg(slot)
                                   : QStringLiteral("not in the cache at this step"));
    lines << kindDescription(*kind, q - k, window);
    if (!m_rows.isRecorded(q))
        lines << QStringLiteral("row not recorded: kind derived from keep()");
    else if (const std::optional<float> weight = m_rows.weight(q, k))
        lines << QStringLiteral("weight %1 (%2)")
                     .arg(double(*weight), 0, 'g', 4)
                     .arg(m_rows.probeLabel(q));
    return lines.join(QLatin1Char('\n'));
}

// The image is rebuilt here only when something changed since the last paint: a hidden heatmap
// builds nothing, and changes between two paints cost one build.
void MaskCanvas::paintEvent(QPaintEvent*) {
    if (m_imageStale) rebuildImage();
    QPainter painter(viewport());
    painter.drawImage(0, 0, m_image);
}

void MaskCanvas::resizeEvent(QResizeEvent* event) {
    QAbstractScrollArea::resizeEvent(event);
    rowsChanged();
}

void MaskCanvas::scrollContentsBy(int, int) {
    if (!m_adjusting) invalidateImage();
}

void MaskCanvas::wheelEvent(QWheelEvent* event) {
    if (!(event->modifiers() & Qt::ControlModifier)) {
        QAbstractScrollArea::wheelEvent(event);
        return;
    }
    const double notches = event->angleDelta().y() / 120.0;
    setCellSize(m_cellSize * std::pow(kWheelZoomStep, notches), event->position().toPoint());
    event->accept();
}

void MaskCanvas::mousePressEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton) return;
    if (const auto cell = cellAt(event->position().toPoint()))
        emit cellClicked(cell->first, cell->second);
}

bool MaskCanvas::viewportEvent(QEvent* event) {
    if (event->type() != QEvent::ToolTip) return QAbstractScrollArea::viewportEvent(event);
    const auto* help = static_cast<QHelpEvent*>(event);
    if (const auto cell = cellAt(help->pos()))
        QToolTip::showText(help->globalPos(), describeCell(cell->first, cell->second), viewport());
    else if (help->pos().x() < sinkStripWidth())
        QToolTip::showText(help->globalPos(), dividerToolTip(), viewport());
    else
        QToolTip::hideText();
    return true;
}

void MaskCanvas::changeEvent(QEvent* event) {
    QAbstractScrollArea::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::StyleChange) {
        m_divider = QImage();
        invalidateImage();
    }
}

int MaskCanvas::matrixPixels() const {
    const double pixels = std::ceil(double(m_rows.positionCount()) * m_cellSize);
    return int(std::min<double>(pixels, INT_MAX / 2));
}

void MaskCanvas::updateScrollRanges() {
    const int side = matrixPixels();
    const QSize view = viewport()->size();
    const int step = std::max(1, int(std::lround(m_cellSize)));
    horizontalScrollBar()->setRange(0, std::max(0, side - view.width()));
    horizontalScrollBar()->setPageStep(view.width());
    horizontalScrollBar()->setSingleStep(step);
    verticalScrollBar()->setRange(0, std::max(0, side - view.height()));
    verticalScrollBar()->setPageStep(view.height());
    verticalScrollBar()->setSingleStep(step);
}

// The newest row is the bottom line and its own key the rightmost column.
void MaskCanvas::scrollToNewest() {
    horizontalScrollBar()->setValue(horizontalScrollBar()->maximum());
    verticalScrollBar()->setValue(verticalScrollBar()->maximum());
}

bool MaskCanvas::newestCellVisible() const {
    const qint64 newest = m_rows.positionCount() - 1;
    return newest < 0 || viewport()->rect().contains(cellCenter(newest, newest));
}

// Scrolling away from the newest cell stops follow mode; scrolling back to it resumes it.
void MaskCanvas::userScrolled() {
    const bool following = newestCellVisible();
    if (following == m_following) return;
    m_following = following;
    emit followingChanged(m_following);
}

void MaskCanvas::paintSinkStrip(const SinkStrip& strip, const MaskColors& colors) {
    MaskRenderRequest request;
    request.cellSize = m_cellSize;
    request.origin = QPoint(0, verticalScrollBar()->value());
    request.size = QSize(strip.cellsWidth, m_image.height());
    request.highlightedKeys = m_highlightedKeys;
    paintSinkColumns(m_image, m_rows, colors, request, strip.sinkCellSize);
    if (m_divider.height() != m_image.height()) m_divider = renderDivider(m_image.height());
    QPainter(&m_image).drawImage(strip.cellsWidth, 0, m_divider);
}

// A band in the window colour with edges and a vertical "pinned sinks" label at its top.
QImage MaskCanvas::renderDivider(int height) const {
    QImage image(kDividerPixels, height, QImage::Format_RGB32);
    image.fill(palette().color(QPalette::Window));
    QPainter painter(&image);
    painter.fillRect(QRect(0, 0, 1, height), palette().color(QPalette::Mid));
    painter.fillRect(QRect(kDividerPixels - 1, 0, 1, height), palette().color(QPalette::Mid));
    QFont font = painter.font();
    font.setPixelSize(kDividerPixels - 4);
    painter.setFont(font);
    painter.setPen(palette().color(QPalette::WindowText));
    painter.translate(2, 4);
    painter.rotate(90);
    painter.drawText(QPoint(0, -2), tr("◀ pinned sinks"));
    return image;
}

QString MaskCanvas::dividerToolTip() const {
    const int64_t sinks = m_rows.sinkCount();
    return tr("Pinned sinks: the %1 sink positions (%2–%3) stay drawn left of this divider.\n"
              "Right of it: the scrolled matrix, keys from %4.")
        .arg(sinks)
        .arg(sinks > 0 ? m_rows.sinkAt(0) : 0)
        .arg(sinks > 0 ? m_rows.sinkAt(sinks - 1) : 0)
        .arg(visibleCells().firstKey);
}

void MaskCanvas::invalidateImage() {
    m_imageStale = true;
    viewport()->update();
    emit viewChanged();
}

void MaskCanvas::rebuildImage() {
    MaskRenderRequest request;
    request.cellSize = m_cellSize;
    request.origin = QPoint(horizontalScrollBar()->value(), verticalScrollBar()->value());
    request.size = viewport()->size();
    request.highlightedKeys = m_highlightedKeys;
    const MaskColors colors = MaskColors::forPalette(palette());
    renderMaskInto(m_image, m_rows, colors, request);
    if (const SinkStrip strip = sinkStrip(); strip.cellsWidth > 0) paintSinkStrip(strip, colors);
    m_imageStale = false;
}

} // namespace sinkscope::views
