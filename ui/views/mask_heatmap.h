// The attention-mask heatmap: rows are query positions, columns key positions (absolute), each
// cell coloured by classify(q, k, W, sink(k)) and shaded by the probe's attention weight.
// Snapshots may arrive in batches and with rows missing: missing rows are drawn hatched, their
// kinds derived from keep() (pure), with no weights. Memory grows with rows x window, not n x n.
#pragma once

#include "memory/mask.h"
#include "memory/snapshot.h"
#include "views/live_label.h"
#include "views/mask_image.h"
#include "views/mask_rows.h"

#include <QImage>
#include <QList>
#include <QWidget>

#include <optional>
#include <utility>

class QLabel;
class QToolButton;

namespace sinkscope::views {

class MaskCanvas;

class MaskHeatmap : public QWidget {
    Q_OBJECT

public:
    explicit MaskHeatmap(QWidget* parent = nullptr);

    void addSnapshot(const sinkscope::StepSnapshot& snapshot);
    void addSnapshots(const QList<sinkscope::StepSnapshot>& snapshots); // one repaint per batch
    void clear(); // a new session: forget every row

    // These key columns are drawn highlighted (in the matrix and in the pinned sink strip),
    // replacing any earlier highlight; an empty list clears it. Negative positions are ignored.
    void highlightKeyPositions(const QList<qint64>& positions);
    QList<qint64> highlightedKeyPositions() const; // sorted, unique
    // One column: the same as highlightKeyPositions({position}); -1 removes the highlight.
    void highlightKeyPosition(qint64 position);
    qint64 highlightedKeyPosition() const; // the lowest highlighted position, -1 when none

    static constexpr int kExportMaxSide = 4096;
    // An SVG writes every cell (in runs), so its size grows with the square of the positions.
    static constexpr qint64 kSvgMaxPositions = 4096;

    // The whole matrix, each side at most maxSide pixels (cells shrink below a pixel if needed).
    QImage renderWholeMatrix(int maxSide = kExportMaxSide) const;
    bool exportPng(const QString& path) const; // false when empty or the file cannot be written
    // The same as vector cells (mask_svg.h); false also beyond kSvgMaxPositions positions.
    bool exportSvg(const QString& path) const;
    // exportSvg for a path ending in ".svg" (any case), exportPng for any other.
    bool exportImage(const QString& path) const;

    // What is drawn, read from the same rows the painter reads.
    qint64 positionCount() const;
    std::optional<sinkscope::MaskCell> cellKind(qint64 q, qint64 k) const;
    std::optional<float> cellWeight(qint64 q, qint64 k) const;
    bool isRowRecorded(qint64 q) const;
    QString cellToolTip(qint64 q, qint64 k) const;
    qint64 memoryBytes() const; // heap held by the recorded rows

    // View: zoom is the side of one cell in pixels.
    double cellSize() const;
    void setCellSize(double cellSize);
    void zoomIn();
    void zoomOut();
    void fitToView();
    bool isFollowing() const;
    void setFollowing(bool following);

    // Mapping between cells and the pixels of canvasViewport(), the widget that takes the mouse.
    QWidget* canvasViewport() const;
    QPoint cellCenter(qint64 q, qint64 k) const;
    std::optional<std::pair<qint64, qint64>> cellAt(QPoint viewportPos) const; // (q, k)
    // Viewport pixels [0, sinkStripWidth()) show the pinned sink columns and their divider once
    // the sinks have scrolled out of view; 0 while the strip is hidden.
    int sinkStripWidth() const;

signals:
    void keyPositionClicked(qint64 position);
    void followingChanged(bool following);

protected:
    void changeEvent(QEvent* event) override;

private:
    QWidget* createToolBar();
    QWidget* createLegend();
    void refreshLegend();
    void refreshStatus();
    void exportWithDialog();

    MaskRows m_rows;
    MaskCanvas* m_canvas = nullptr;
    QToolButton* m_followButton = nullptr;
    LiveLabel* m_status = nullptr;
    QList<std::pair<QLabel*, MaskLegendEntry>> m_swatches;
};

} // namespace sinkscope::views
