// The heatmap's scrolling surface: maps viewport pixels to (query, key) cells, keeps a cached
// image of the visible cells only, and handles zoom, follow mode, clicks and tooltips.
// Once the sink columns scroll out of view on the left, a pinned strip at the viewport's left
// edge shows them (all sinks, in position order, narrowed to fit), then a labelled divider, then
// the scrolled matrix: the sinks stay visible in long sessions.
#pragma once

#include "views/mask_rows.h"
#include "views/view_colors.h"

#include <QAbstractScrollArea>
#include <QImage>

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

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

    const std::vector<int64_t>& highlightedKeys() const { return m_highlightedKeys; } // sorted
    void setHighlightedKeys(std::vector<int64_t> keys);

    // Viewport pixels [0, sinkStripWidth()) hold the pinned sinks and the divider; 0 when hidden.
    int sinkStripWidth() const;

    // The cells in view, clamped to the matrix: [firstQuery, lastQuery] x [firstKey, lastKey].
    struct VisibleCells {
        qint64 firstQuery = 0;
        qint64 lastQuery = -1;
        qint64 firstKey = 0;
        qint64 lastKey = -1;
    };
    VisibleCells visibleCells() const;

    // In viewport pixels; a sink's centre lies in the pinned strip while the strip is shown.
    QPoint cellCenter(qint64 q, qint64 k) const;
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
    // The pinned strip: the sinks, sinkCellSize pixels each, then the divider.
    struct SinkStrip {
        double sinkCellSize = 0;
        int cellsWidth = 0; // 0: the strip is hidden
        int width() const { return cellsWidth > 0 ? cellsWidth + kDividerPixels : 0; }
    };
    static constexpr int kDividerPixels = 14;

    SinkStrip sinkStrip() const;
    std::optional<int64_t> sinkInStrip(const SinkStrip& strip, int x) const; // nullopt: divider
    void paintSinkStrip(const SinkStrip& strip, const MaskColors& colors);   // into m_image
    QImage renderDivider(int height) const;
    QString dividerToolTip() const;
    int matrixPixels() const; // the matrix's side in pixels at the current zoom
    void updateScrollRanges();
    void scrollToNewest();
    void userScrolled();
    bool newestCellVisible() const;
    void invalidateImage(); // rebuilt at the next paint
    void rebuildImage();

    const MaskRows& m_rows;
    QImage m_image;   // the visible cells, rebuilt when the rows, viewport, zoom or colours change
    QImage m_divider; // [kDividerPixels x viewport height], rebuilt on resize or palette change
    bool m_imageStale = true;
    double m_cellSize = kDefaultCellSize;
    bool m_following = true;
    bool m_adjusting = false;               // scroll changes made by this class, not by the user
    std::vector<int64_t> m_highlightedKeys; // sorted, unique
};

} // namespace sinkscope::views
