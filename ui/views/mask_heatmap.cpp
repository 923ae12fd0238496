#include "views/mask_heatmap.h"

#include "views/mask_canvas.h"
#include "views/mask_svg.h"
#include "views/view_colors.h"

#include <QEvent>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QMessageBox>
#include <QSaveFile>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace sinkscope::views {

namespace {

constexpr double kZoomStep = 1.5;
constexpr double kExportMaxCellSize = 16.0;
constexpr QSize kSwatchSize(14, 14);
constexpr QSize kRampSize(42, 14);

QToolButton* toolButton(const QString& name, const QString& text, const QString& tip,
                        QWidget* parent) {
    auto* button = new QToolButton(parent);
    button->setObjectName(name);
    button->setText(text);
    button->setToolTip(tip);
    button->setAutoRaise(true);
    return button;
}

} // namespace

MaskHeatmap::MaskHeatmap(QWidget* parent) : QWidget(parent) {
    m_canvas = new MaskCanvas(m_rows, this);
    m_canvas->setObjectName(QStringLiteral("maskCanvas"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(createToolBar());
    layout->addWidget(m_canvas, 1);
    layout->addWidget(createLegend());

    connect(m_canvas, &MaskCanvas::cellClicked, this, [this](qint64, qint64 key) {
        highlightKeyPosition(key);
        emit keyPositionClicked(key);
    });
    connect(m_canvas, &MaskCanvas::followingChanged, this, [this](bool following) {
        m_followButton->setChecked(following);
        emit followingChanged(following);
    });
    connect(m_canvas, &MaskCanvas::viewChanged, this, &MaskHeatmap::refreshStatus);
    refreshLegend();
    refreshStatus();
}

QWidget* MaskHeatmap::createToolBar() {
    auto* bar = new QWidget(this);
    auto* layout = new QHBoxLayout(bar);
    layout->setContentsMargins(2, 2, 2, 0);
    auto* zoomOutButton = toolButton(QStringLiteral("maskZoomOut"), QStringLiteral("−"),
                                     tr("Zoom out (Ctrl+wheel)"), bar);
    auto* zoomInButton = toolButton(QStringLiteral("maskZoomIn"), QStringLiteral("+"),
                                    tr("Zoom in (Ctrl+wheel)"), bar);
    auto* fitButton =
        toolButton(QStringLiteral("maskFit"), tr("Fit"), tr("Show the whole matrix"), bar);
    m_followButton = toolButton(QStringLiteral("maskFollow"), tr("Follow"),
                                tr("Keep the newest row in view"), bar);
    m_followButton->setCheckable(true);
    m_followButton->setChecked(m_canvas->isFollowing());
    auto* exportButton =
        toolButton(QStringLiteral("maskExport"), tr("Export…"),
                   tr("Save the whole matrix as a PNG image or an SVG drawing"), bar);
    m_status = new LiveLabel(tr("290 sinks pinned · q 1,000–1,500 × k 1,000–1,500 of 1,500 · "
                                "window 256 · 1.0 px/cell"),
                             bar);

    connect(zoomOutButton, &QToolButton::clicked, this, &MaskHeatmap::zoomOut);
    connect(zoomInButton, &QToolButton::clicked, this, &MaskHeatmap::zoomIn);
    connect(fitButton, &QToolButton::clicked, this, &MaskHeatmap::fitToView);
    connect(m_followButton, &QToolButton::toggled, this, &MaskHeatmap::setFollowing);
    connect(exportButton, &QToolButton::clicked, this, &MaskHeatmap::exportWithDialog);

    for (QWidget* widget :
         {static_cast<QWidget*>(zoomOutButton), static_cast<QWidget*>(zoomInButton),
          static_cast<QWidget*>(fitButton), static_cast<QWidget*>(m_followButton),
          static_cast<QWidget*>(exportButton)})
        layout->addWidget(widget);
    layout->addStretch(1);
    layout->addWidget(m_status);
    setTabOrder(exportButton, m_canvas); // the canvas was made first; it is drawn below the bar
    return bar;
}

QWidget* MaskHeatmap::createLegend() {
    auto* legend = new QWidget(this);
    auto* layout = new QHBoxLayout(legend);
    layout->setContentsMargins(4, 0, 4, 2);
    const std::pair<MaskLegendEntry, QString> entries[] = {
        {MaskLegendEntry::Recent, tr("attended: recent")},
        {MaskLegendEntry::Sink, tr("attended: sink")},
        {MaskLegendEntry::Evicted, tr("evicted")},
        {MaskLegendEntry::Future, tr("future")},
        {MaskLegendEntry::NotRecorded, tr("row not recorded")},
        {MaskLegendEntry::WeightRamp, tr("weight: low → high")},
        {MaskLegendEntry::Selected, tr("selected keys")},
    };
    for (const auto& [entry, text] : entries) {
        auto* swatch = new QLabel(legend);
        m_swatches.append({swatch, entry});
        layout->addWidget(swatch);
        layout->addWidget(new QLabel(text, legend));
        layout->addSpacing(6);
    }
    layout->addStretch(1);
    return legend;
}

void MaskHeatmap::refreshLegend() {
    const MaskColors colors = MaskColors::forPalette(palette());
    const QColor frame = palette().color(QPalette::Mid);
    for (const auto& [label, entry] : m_swatches) {
        const QSize size = entry == MaskLegendEntry::WeightRamp ? kRampSize : kSwatchSize;
        QImage swatch = renderLegendSwatch(colors, entry, size);
        for (int x = 0; x < size.width(); ++x) {
            swatch.setPixelColor(x, 0, frame);
            swatch.setPixelColor(x, size.height() - 1, frame);
        }
        for (int y = 0; y < size.height(); ++y) {
            swatch.setPixelColor(0, y, frame);
            swatch.setPixelColor(size.width() - 1, y, frame);
        }
        label->setPixmap(QPixmap::fromImage(swatch));
    }
}

void MaskHeatmap::refreshStatus() {
    const double cell = m_canvas->cellSize();
    const QString zoom = cell >= 1 ? tr("%1 px/cell").arg(cell, 0, 'f', 1)
                                   : tr("%1 cells/px").arg(1.0 / cell, 0, 'f', 1);
    const qint64 count = m_rows.positionCount();
    if (count == 0) {
        m_status->setText(tr("no positions yet · %1").arg(zoom));
        return;
    }
    const MaskCanvas::VisibleCells view = m_canvas->visibleCells();
    const QString pinned = m_canvas->sinkStripWidth() > 0
                               ? tr("%1 sinks pinned · ").arg(m_rows.sinkCount())
                               : QString();
    m_status->setText(tr("%1q %2–%3 × k %4–%5 of %6 · window %7 · %8")
                          .arg(pinned)
                          .arg(view.firstQuery)
                          .arg(view.lastQuery)
                          .arg(view.firstKey)
                          .arg(view.lastKey)
                          .arg(count)
                          .arg(m_rows.window(count - 1))
                          .arg(zoom));
}

void MaskHeatmap::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) refreshLegend();
}

void MaskHeatmap::addSnapshot(const StepSnapshot& snapshot) {
    m_rows.add(snapshot);
    m_canvas->rowsChanged();
}

void MaskHeatmap::addSnapshots(const QList<StepSnapshot>& snapshots) {
    if (snapshots.isEmpty()) return;
    for (const StepSnapshot& snapshot : snapshots)
        m_rows.add(snapshot);
    m_canvas->rowsChanged();
}

void MaskHeatmap::clear() {
    m_rows.clear();
    m_canvas->setHighlightedKeys({});
    m_canvas->rowsChanged();
}

void MaskHeatmap::highlightKeyPositions(const QList<qint64>& positions) {
    m_canvas->setHighlightedKeys(std::vector<int64_t>(positions.begin(), positions.end()));
}

QList<qint64> MaskHeatmap::highlightedKeyPositions() const {
    const std::vector<int64_t>& keys = m_canvas->highlightedKeys();
    return QList<qint64>(keys.begin(), keys.end());
}

void MaskHeatmap::highlightKeyPosition(qint64 position) {
    highlightKeyPositions(position >= 0 ? QList<qint64>{position} : QList<qint64>{});
}

qint64 MaskHeatmap::highlightedKeyPosition() const {
    const std::vector<int64_t>& keys = m_canvas->highlightedKeys();
    return keys.empty() ? -1 : keys.front();
}

QImage MaskHeatmap::renderWholeMatrix(int maxSide) const {
    const qint64 count = m_rows.positionCount();
    if (count == 0 || maxSide <= 0) return {};
    MaskRenderRequest request;
    request.cellSize = std::min(kExportMaxCellSize, double(maxSide) / double(count));
    const int side = std::min(maxSide, int(std::ceil(double(count) * request.cellSize)));
    request.size = QSize(side, side);
    request.highlightedKeys = m_canvas->highlightedKeys();
    return renderMask(m_rows, MaskColors::forPalette(palette()), request);
}

bool MaskHeatmap::exportPng(const QString& path) const {
    const QImage image = renderWholeMatrix();
    return !image.isNull() && image.save(path, "PNG");
}

bool MaskHeatmap::exportSvg(const QString& path) const {
    const qint64 count = m_rows.positionCount();
    if (count == 0 || count > kSvgMaxPositions) return false;
    QSaveFile file(path);
    const double cellSize = std::min(kExportMaxCellSize, double(kExportMaxSide) / double(count));
    return file.open(QIODevice::WriteOnly) &&
           file.write(maskSvg(m_rows, MaskColors::forPalette(palette()), cellSize,
                              m_canvas->highlightedKeys())) >= 0 &&
           file.commit();
}

bool MaskHeatmap::exportImage(const QString& path) const {
    return path.endsWith(QStringLiteral(".svg"), Qt::CaseInsensitive) ? exportSvg(path)
                                                                      : exportPng(path);
}

void MaskHeatmap::exportWithDialog() {
    if (m_rows.positionCount() == 0) {
        QMessageBox::information(this, tr("Export"), tr("The mask has no rows yet."));
        return;
    }
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Export the mask"), QStringLiteral("mask.png"),
                                     tr("PNG images (*.png);;SVG drawings (*.svg)"));
    if (!path.isEmpty() && !exportImage(path))
        QMessageBox::warning(this, tr("Export"),
                             tr("Could not write %1. (An SVG holds at most %2 positions; a PNG "
                                "has no limit.)")
                                 .arg(path, QLocale().toString(kSvgMaxPositions)));
}

qint64 MaskHeatmap::positionCount() const {
    return m_rows.positionCount();
}

std::optional<MaskCell> MaskHeatmap::cellKind(qint64 q, qint64 k) const {
    return m_rows.cellKind(q, k);
}

std::optional<float> MaskHeatmap::cellWeight(qint64 q, qint64 k) const {
    return m_rows.weight(q, k);
}

bool MaskHeatmap::isRowRecorded(qint64 q) const {
    return m_rows.isRecorded(q);
}

QString MaskHeatmap::cellToolTip(qint64 q, qint64 k) const {
    return m_canvas->describeCell(q, k);
}

qint64 MaskHeatmap::memoryBytes() const {
    return m_rows.memoryBytes();
}

double MaskHeatmap::cellSize() const {
    return m_canvas->cellSize();
}

void MaskHeatmap::setCellSize(double cellSize) {
    m_canvas->setCellSize(cellSize, m_canvas->viewport()->rect().center());
}

void MaskHeatmap::zoomIn() {
    m_canvas->zoomBy(kZoomStep);
}

void MaskHeatmap::zoomOut() {
    m_canvas->zoomBy(1.0 / kZoomStep);
}

void MaskHeatmap::fitToView() {
    m_canvas->fitToView();
}

bool MaskHeatmap::isFollowing() const {
    return m_canvas->isFollowing();
}

void MaskHeatmap::setFollowing(bool following) {
    m_canvas->setFollowing(following);
}

QWidget* MaskHeatmap::canvasViewport() const {
    return m_canvas->viewport();
}

QPoint MaskHeatmap::cellCenter(qint64 q, qint64 k) const {
    return m_canvas->cellCenter(q, k);
}

std::optional<std::pair<qint64, qint64>> MaskHeatmap::cellAt(QPoint viewportPos) const {
    return m_canvas->cellAt(viewportPos);
}

int MaskHeatmap::sinkStripWidth() const {
    return m_canvas->sinkStripWidth();
}

} // namespace sinkscope::views
