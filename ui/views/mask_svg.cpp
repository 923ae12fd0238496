#include "views/mask_svg.h"

#include "views/mask_image.h"

#include <QColor>
#include <QString>

namespace sinkscope::views {

namespace {

QByteArray number(double value) {
    return QByteArray::number(value, 'g', 10);
}

QByteArray rect(double x, double y, double width, double height, QRgb fill) {
    return "<rect x=\"" + number(x) + "\" y=\"" + number(y) + "\" width=\"" + number(width) +
           "\" height=\"" + number(height) + "\" fill=\"" +
           QColor(fill).name(QColor::HexRgb).toLatin1() + "\"/>\n";
}

} // namespace

QByteArray maskSvg(const MaskRows& rows, const MaskColors& colors, double cellSize,
                   const std::vector<int64_t>& highlightedKeys) {
    const int64_t count = rows.positionCount();
    const double side = double(count) * cellSize;
    const MaskCellPalette palette(colors);
    QByteArray svg = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                     "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                     number(side) + "\" height=\"" + number(side) + "\" viewBox=\"0 0 " +
                     number(side) + " " + number(side) +
                     "\" shape-rendering=\"crispEdges\">\n"
                     "<title>Sinkscope attention mask: rows are query positions, columns key "
                     "positions</title>\n";
    svg += rect(0, 0, side, side, colors.background.rgb());
    for (int64_t q = 0; q < count; ++q) {
        // Runs of equal colour along the row: a window band, the sinks and the evicted span are
        // a few rectangles each, not one per cell.
        int64_t runStart = 0;
        QRgb runColor = palette.color(rows.cell(q, 0), 0);
        for (int64_t k = 1; k <= count; ++k) {
            const QRgb color = k < count ? palette.color(rows.cell(q, k), 0) : 0;
            if (k < count && color == runColor) continue;
            svg += rect(double(runStart) * cellSize, double(q) * cellSize,
                        double(k - runStart) * cellSize, cellSize, runColor);
            runStart = k;
            runColor = color;
        }
    }
    const QByteArray outline = QColor(colors.highlight).name(QColor::HexRgb).toLatin1();
    for (const int64_t key : highlightedKeys)
        if (key >= 0 && key < count)
            svg += "<rect x=\"" + number(double(key) * cellSize) + "\" y=\"0\" width=\"" +
                   number(cellSize) + "\" height=\"" + number(side) + "\" fill=\"none\" stroke=\"" +
                   outline + "\" stroke-width=\"" + number(cellSize / 4) + "\"/>\n";
    svg += "</svg>\n";
    return svg;
}

} // namespace sinkscope::views
