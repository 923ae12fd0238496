// Paints the mask matrix (rows = query positions, columns = key positions) into an image: the
// heatmap's viewport cache, its pinned sink strip and its PNG export share this one renderer.
#pragma once

#include "views/mask_rows.h"
#include "views/view_colors.h"

#include <QImage>
#include <QPoint>
#include <QRgb>
#include <QSize>

#include <array>
#include <cstdint>
#include <vector>

namespace sinkscope::views {

struct MaskRenderRequest {
    double cellSize = 1;                  // pixels per cell; below 1 a pixel covers several cells
    QPoint origin;                        // the matrix pixel drawn at the image's top-left corner
    QSize size;                           // the image's size in pixels
    std::vector<int64_t> highlightedKeys; // key columns drawn highlighted, sorted
};

// Every colour a cell can take, looked up per pixel instead of mixed per pixel (the PNG and SVG
// renderers share it).
struct MaskCellPalette {
    static constexpr int kIntensityLevels = 64;
    static constexpr int kKinds = 4;
    std::array<QRgb, kKinds> flat{};                                   // kept, no weight
    std::array<std::array<QRgb, kIntensityLevels>, kKinds> weighted{}; // by intensity
    std::array<std::array<QRgb, 2>, kKinds> unrecorded{};              // two hatch stripes

    explicit MaskCellPalette(const MaskColors& colors);
    QRgb color(const MaskCellData& cell, int hatchStripe) const;
};

// Below this cell size cells are drawn edge to edge; from it on a one-pixel gap separates them.
inline constexpr double kMaskGapCellSize = 6.0;

QImage renderMask(const MaskRows& rows, const MaskColors& colors, const MaskRenderRequest& request);
// The same into `image`, whose memory is reused when it already has request.size.
void renderMaskInto(QImage& image, const MaskRows& rows, const MaskColors& colors,
                    const MaskRenderRequest& request);

// Overpaints the image's pixel columns [0, request.size.width()) with the sink columns alone,
// side by side in position order, each sinkCellSize pixels wide; rows as in renderMask
// (request.cellSize, request.origin.y()); request.size.height() must be the image's height.
void paintSinkColumns(QImage& image, const MaskRows& rows, const MaskColors& colors,
                      const MaskRenderRequest& request, double sinkCellSize);

// Legend swatches drawn with the renderer's own colours.
// Selected: a highlighted key column (a clicked KV slot or tool), tinted over an attended cell.
enum class MaskLegendEntry { Recent, Sink, Evicted, Future, NotRecorded, WeightRamp, Selected };
QImage renderLegendSwatch(const MaskColors& colors, MaskLegendEntry entry, QSize size);

} // namespace sinkscope::views
