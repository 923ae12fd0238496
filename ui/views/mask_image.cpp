#include "views/mask_image.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

namespace sinkscope::views {

namespace {

constexpr int kHatchPixels = 3; // width of the stripes that mark rows that were not recorded

// What one pixel column or pixel line of the image shows.
struct PixelSpan {
    int64_t cell = -1;  // the key (or query) drawn, -1 past the matrix
    int64_t first = -1; // the cells the pixel covers: [first, last)
    int64_t last = -1;
    bool gap = false;         // the last pixel of a cell wide enough to be drawn apart
    bool highlighted = false; // a key column: it covers a highlighted key
};

PixelSpan spanAt(int matrixPixel, double cellSize, int64_t count) {
    PixelSpan span;
    const auto first = int64_t(std::floor(matrixPixel / cellSize));
    if (matrixPixel < 0 || first >= count) return span;
    const auto next = int64_t(std::floor((matrixPixel + 1) / cellSize));
    span.first = first;
    span.last = std::min(count, std::max(first + 1, next));
    span.cell = first;
    span.gap = cellSize >= kMaskGapCellSize && next != first;
    return span;
}

bool isHighlighted(const std::vector<int64_t>& keys, int64_t first, int64_t last) {
    const auto found = std::lower_bound(keys.begin(), keys.end(), first);
    return found != keys.end() && *found < last;
}

// Key columns: a pixel covering several keys shows a sink among them, so that sink columns stay
// visible at any zoom.
std::vector<PixelSpan> keyColumns(const MaskRows& rows, const MaskRenderRequest& request) {
    std::vector<PixelSpan> columns(size_t(request.size.width()));
    for (int x = 0; x < request.size.width(); ++x) {
        PixelSpan span = spanAt(request.origin.x() + x, request.cellSize, rows.positionCount());
        if (span.cell >= 0 && span.last - span.first > 1) {
            const int64_t sink = rows.firstSinkIn(span.first, span.last);
            if (sink >= 0) span.cell = sink;
        }
        span.highlighted =
            span.cell >= 0 && isHighlighted(request.highlightedKeys, span.first, span.last);
        columns[size_t(x)] = span;
    }
    return columns;
}

// Sink columns side by side: a pixel covers the sinks of ranks [first, last) in
// spanAt(x, sinkCellSize, sinkCount); its span holds their positions [sinkAt(first),
// sinkAt(last - 1)] and is highlighted when a highlighted key is one of those sinks.
std::vector<PixelSpan> sinkColumns(const MaskRows& rows, const MaskRenderRequest& request,
                                   double sinkCellSize) {
    std::vector<PixelSpan> columns(size_t(request.size.width()));
    for (int x = 0; x < request.size.width(); ++x) {
        const PixelSpan ranks = spanAt(x, sinkCellSize, rows.sinkCount());
        if (ranks.cell < 0) continue;
        PixelSpan& span = columns[size_t(x)];
        span.cell = rows.sinkAt(ranks.first);
        span.first = span.cell;
        span.last = rows.sinkAt(ranks.last - 1) + 1;
        span.gap = ranks.gap;
        for (int64_t rank = ranks.first; rank < ranks.last && !span.highlighted; ++rank)
            span.highlighted =
                isHighlighted(request.highlightedKeys, rows.sinkAt(rank), rows.sinkAt(rank) + 1);
    }
    return columns;
}

// Query lines: a pixel covering several rows shows a recorded one among them when there is one.
std::vector<PixelSpan> queryLines(const MaskRows& rows, const MaskRenderRequest& request) {
    std::vector<PixelSpan> lines(size_t(request.size.height()));
    for (int y = 0; y < request.size.height(); ++y) {
        PixelSpan span = spanAt(request.origin.y() + y, request.cellSize, rows.positionCount());
        for (int64_t q = span.first; q >= 0 && q < span.last; ++q) {
            if (rows.isRecorded(q)) {
                span.cell = q;
                break;
            }
        }
        lines[size_t(y)] = span;
    }
    return lines;
}

// One scan line. In a recorded row every pixel of a cell has the same colour, so a cell is looked
// up once, not once per pixel; rows not recorded are hatched and looked up per pixel.
void paintLine(QRgb* pixels, int y, const MaskRows& rows, const MaskCellPalette& palette,
               QRgb background, const MaskRenderRequest& request,
               const std::vector<PixelSpan>& columns, const PixelSpan& line) {
    const bool recorded = rows.isRecorded(line.cell);
    int64_t previousKey = -1;
    QRgb previousColor = background;
    for (size_t x = 0; x < columns.size(); ++x) {
        const PixelSpan& column = columns[x];
        if (column.cell < 0 || column.gap) {
            pixels[x] = background;
            continue;
        }
        if (!recorded || column.cell != previousKey) {
            const int stripe =
                ((request.origin.x() + int(x) + request.origin.y() + y) / kHatchPixels) & 1;
            previousColor = palette.color(rows.cell(line.cell, column.cell), stripe);
            previousKey = column.cell;
        }
        pixels[x] = previousColor;
    }
}

// Paints the image's pixel columns [0, columns.size()).
void paintCells(QImage& image, const MaskRows& rows, const MaskColors& colors,
                const MaskRenderRequest& request, const std::vector<PixelSpan>& columns,
                const std::vector<PixelSpan>& lines) {
    const MaskCellPalette palette(colors);
    const QRgb background = colors.background.rgb();
    const auto width = qsizetype(columns.size());
    for (int y = 0; y < image.height(); ++y) {
        const PixelSpan& line = lines[size_t(y)];
        auto* pixels = reinterpret_cast<QRgb*>(image.scanLine(y));
        if (line.cell < 0 || line.gap) {
            std::fill_n(pixels, width, background);
            continue;
        }
        // The pixel lines of one recorded row are identical: copy the line above.
        const PixelSpan* above = y > 0 ? &lines[size_t(y - 1)] : nullptr;
        if (above && above->cell == line.cell && !above->gap && rows.isRecorded(line.cell)) {
            std::copy_n(reinterpret_cast<const QRgb*>(image.constScanLine(y - 1)), width, pixels);
            continue;
        }
        paintLine(pixels, y, rows, palette, background, request, columns, line);
    }
}

constexpr double kHighlightTint = 0.45; // how much of the highlight colour tints a selected column

// Highlighted columns get a solid edge when cells are wide enough to show one, a tint inside.
void paintHighlightedColumns(QImage& image, const MaskColors& colors, double columnCellSize,
                             const std::vector<PixelSpan>& columns,
                             const std::vector<PixelSpan>& lines) {
    const QRgb edge = colors.highlight.rgb();
    const int width = int(columns.size());
    for (int x = 0; x < width; ++x) {
        const PixelSpan& column = columns[size_t(x)];
        if (!column.highlighted) continue;
        const bool leftEdge = x == 0 || columns[size_t(x - 1)].first != column.first;
        const bool rightEdge = x + 1 == width || columns[size_t(x + 1)].first != column.first;
        const bool solid = columnCellSize >= 4 && (leftEdge || rightEdge);
        for (int y = 0; y < image.height(); ++y) {
            if (lines[size_t(y)].cell < 0) continue;
            auto* pixel = reinterpret_cast<QRgb*>(image.scanLine(y)) + x;
            *pixel =
                solid ? edge : mixColors(QColor(*pixel), colors.highlight, kHighlightTint).rgb();
        }
    }
}

bool canRender(const QImage& image, const MaskRows& rows, const MaskRenderRequest& request) {
    return !image.isNull() && rows.positionCount() > 0 && request.cellSize > 0;
}

// The previous image's memory is reused when the size has not changed: a fresh multi-megabyte
// image per frame costs more in page faults than painting it.
void prepareImage(QImage& image, QSize size) {
    if (image.size() != size || image.format() != QImage::Format_RGB32)
        image = QImage(size, QImage::Format_RGB32);
}

void paintColumns(QImage& image, const MaskRows& rows, const MaskColors& colors,
                  const MaskRenderRequest& request, const std::vector<PixelSpan>& columns,
                  double columnCellSize) {
    const std::vector<PixelSpan> lines = queryLines(rows, request);
    paintCells(image, rows, colors, request, columns, lines);
    if (!request.highlightedKeys.empty())
        paintHighlightedColumns(image, colors, columnCellSize, columns, lines);
}

} // namespace

MaskCellPalette::MaskCellPalette(const MaskColors& colors) {
    for (int kind = 0; kind < kKinds; ++kind) {
        const QColor base = colors.cell(MaskCell(kind));
        flat[size_t(kind)] = base.rgb();
        const QColor faint = mixColors(base, colors.background, 0.75);
        for (int level = 0; level < kIntensityLevels; ++level)
            weighted[size_t(kind)][size_t(level)] =
                mixColors(faint, base, double(level) / (kIntensityLevels - 1)).rgb();
        unrecorded[size_t(kind)][0] = mixColors(base, colors.background, 0.45).rgb();
        unrecorded[size_t(kind)][1] = mixColors(base, colors.background, 0.80).rgb();
    }
}

QRgb MaskCellPalette::color(const MaskCellData& cell, int hatchStripe) const {
    const auto kind = size_t(cell.kind);
    if (!cell.recorded) return unrecorded[kind][size_t(hatchStripe)];
    if (cell.intensity < 0) return flat[kind];
    const int level = std::clamp(int(std::lround(cell.intensity * (kIntensityLevels - 1))), 0,
                                 kIntensityLevels - 1);
    return weighted[kind][size_t(level)];
}

void renderMaskInto(QImage& image, const MaskRows& rows, const MaskColors& colors,
                    const MaskRenderRequest& request) {
    prepareImage(image, request.size);
    if (canRender(image, rows, request))
        paintColumns(image, rows, colors, request, keyColumns(rows, request), request.cellSize);
    else
        image.fill(colors.background);
}

QImage renderMask(const MaskRows& rows, const MaskColors& colors,
                  const MaskRenderRequest& request) {
    QImage image;
    renderMaskInto(image, rows, colors, request);
    return image;
}

void paintSinkColumns(QImage& image, const MaskRows& rows, const MaskColors& colors,
                      const MaskRenderRequest& request, double sinkCellSize) {
    const int width = std::min(request.size.width(), image.width());
    if (width <= 0 || request.size.height() != image.height() || !canRender(image, rows, request) ||
        sinkCellSize <= 0)
        return;
    MaskRenderRequest strip = request;
    strip.size.setWidth(width);
    paintColumns(image, rows, colors, strip, sinkColumns(rows, strip, sinkCellSize), sinkCellSize);
}

QImage renderLegendSwatch(const MaskColors& colors, MaskLegendEntry entry, QSize size) {
    MaskCellData cell;
    cell.recorded = entry != MaskLegendEntry::NotRecorded;
    switch (entry) {
    case MaskLegendEntry::Sink:
        cell.kind = MaskCell::AttendedSink;
        break;
    case MaskLegendEntry::Evicted:
        cell.kind = MaskCell::Evicted;
        break;
    case MaskLegendEntry::Future:
        cell.kind = MaskCell::Future;
        break;
    case MaskLegendEntry::Recent:
    case MaskLegendEntry::NotRecorded:
    case MaskLegendEntry::WeightRamp:
    case MaskLegendEntry::Selected:
        cell.kind = MaskCell::AttendedRecent;
        break;
    }
    QImage image(size, QImage::Format_RGB32);
    const MaskCellPalette palette(colors);
    for (int y = 0; y < size.height(); ++y) {
        auto* pixels = reinterpret_cast<QRgb*>(image.scanLine(y));
        for (int x = 0; x < size.width(); ++x) {
            if (entry == MaskLegendEntry::WeightRamp)
                cell.intensity = float(x) / float(std::max(1, size.width() - 1));
            pixels[x] = palette.color(cell, ((x + y) / kHatchPixels) & 1);
            if (entry == MaskLegendEntry::Selected)
                pixels[x] = mixColors(QColor(pixels[x]), colors.highlight, kHighlightTint).rgb();
        }
    }
    return image;
}

} // namespace sinkscope::views
