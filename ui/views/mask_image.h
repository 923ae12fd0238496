// Paints the mask matrix (rows = query positions, columns = key positions) into an image: the
// heatmap's viewport cache and its PNG export share this one renderer.
#pragma once

#include "mask_rows.h"
#include "view_colors.h"

#include <QImage>
#include <QPoint>
#include <QSize>

namespace sinkscope::views {

struct MaskRenderRequest {
    double cellSize = 1;         // pixels per cell; below 1 a pixel covers several cells
    QPoint origin;               // the matrix pixel drawn at the image's top-left corner
    QSize size;                  // the image's size in pixels
    int64_t highlightedKey = -1; // key column drawn highlighted, -1 for none
};

// Below this cell size cells are drawn edge to edge; from it on a one-pixel gap separates them.
inline constexpr double kMaskGapCellSize = 6.0;

QImage renderMask(const MaskRows& rows, const MaskColors& colors, const MaskRenderRequest& request);

// Legend swatches drawn with the renderer's own colours.
enum class MaskLegendEntry { Recent, Sink, Evicted, Future, NotRecorded, WeightRamp };
QImage renderLegendSwatch(const MaskColors& colors, MaskLegendEntry entry, QSize size);

} // namespace sinkscope::views
