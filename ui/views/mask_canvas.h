// The heatmap's scrolling surface: maps viewport pixels to (query, key) cells, keeps a cached
// image of the visible cells only, and handles zoom, follow mode, clicks and tooltips.
#pragma once

#include "mask_rows.h"

#include <QAbstractScrollArea>
#include <QImage>

#include <optional>
#include <utility>

namespace sinkscope::views {

class MaskCanvas : public QAbstractScrollArea {
    Q_OBJECT

public:
    static constexpr double kMaxCellSize = 40.0;
    static constexpr double kDefaultCellSize = 8.0;

    explicit MaskCanvas(const MaskRows& rows, QWidget* parent = nullptr);

    void rowsChanged(); // after rows were added or cleared

    double cellSize() const { return m_cellSize; }
    // Zooms keeping the cell under `anchor` (viewport pixels) where it is.
    void setCellSize(double cellSize, QPoint anchor);
    void zoomBy(double factor);
    void fitToView(); // the whole matrix in the viewport
    double fitCellSize() const;

    bool isFollowing() const { return m_following; }
    void setFollowing(bool following);

    qint64 highlightedKey() const { return m_highlightedKey; }
    void setHighlightedKey(qint64 key);

    // The cells in view, clamped to the matrix: [firstQuery, lastQuery] x [firstKey, lastKey].
    struct VisibleCells {
        qint64 firstQuery = 0;
        qint64 lastQuery = -1;
        qint64 firstKey = 0;
        qint64 lastKey = -1;
    };
    VisibleCells visibleCells() const;

    QPoint cellCenter(qint64 q, qint64 k) const;                       // viewport pixels
    std::optional<std::pair<qint64, qint64>> cellAt(QPoint pos) const; // (q, k)
    QString describeCell(qint64 q, qint64 k) const;                    // the tooltip's text

signals:
    void cellClicked(qint64 q, qint64 k);
    void followingChanged(bool following);
    void viewChanged(); // rows, zoom, scroll position or size changed

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void scrollContentsBy(int dx, int dy) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    bool viewportEvent(QEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    int matrixPixels() const; // the matrix's side in pixels at the current zoom
    void updateScrollRanges();
    void scrollToNewest();
    void userScrolled();
    bool newestCellVisible() const;
    void rebuildImage();

    const MaskRows& m_rows;
    QImage m_image; // the visible cells, rebuilt when the rows, viewport, zoom or colours change
    double m_cellSize = kDefaultCellSize;
    bool m_following = true;
    bool m_adjusting = false; // scroll changes made by this class, not by the user
    qint64 m_highlightedKey = -1;
};

} // namespace sinkscope::views
