// The attention mask as an SVG document, for papers and slides: one cell per (query, key) in the
// heatmap's colours (mask_image.h's palette), each row's runs of equal colour written as one
// rectangle, rows not recorded in their lighter hatch colour, highlighted key columns outlined.
#pragma once

#include "views/mask_rows.h"
#include "views/view_colors.h"

#include <QByteArray>

#include <cstdint>
#include <vector>

namespace sinkscope::views {

// cellSize: the side of one cell in SVG user units (the document is n * cellSize square).
QByteArray maskSvg(const MaskRows& rows, const MaskColors& colors, double cellSize,
                   const std::vector<int64_t>& highlightedKeys = {});

} // namespace sinkscope::views
