// The heatmap's SVG export: every cell of the matrix covered exactly once, in its kind's colour
// (read back from the rectangles' runs), the highlighted key column outlined, and the refusals
// (nothing to export, more positions than an SVG holds, a folder that does not exist).
#include <QtTest>

#include "mask_heatmap_test_support.h"
#include "memory/mask.h"
#include "views/mask_heatmap.h"
#include "views/view_colors.h"

#include <QColor>
#include <QFile>
#include <QTemporaryDir>
#include <QXmlStreamReader>

#include <map>
#include <utility>

using namespace sinkscope;
using namespace sinkscope::test;
using sinkscope::views::MaskColors;
using sinkscope::views::MaskHeatmap;

namespace {

struct SvgCells {
    double width = 0;
    std::map<std::pair<qint64, qint64>, QString> fill; // (q, k) -> colour; a cell once
    int duplicates = 0;
    QList<double> outlinedX; // x of the rectangles drawn with a stroke and no fill
};

// Reads the export back: each filled rectangle after the background is a run of cells of one row.
SvgCells readCells(const QString& path, double cellSize) {
    QFile file(path);
    SvgCells cells;
    if (!file.open(QIODevice::ReadOnly)) return cells;
    QXmlStreamReader xml(&file);
    bool background = true;
    while (xml.readNextStartElement() || !xml.atEnd()) {
        if (!xml.isStartElement()) continue;
        if (xml.name() == QLatin1String("svg"))
            cells.width = xml.attributes().value(QLatin1String("width")).toDouble();
        if (xml.name() != QLatin1String("rect")) continue;
        const QXmlStreamAttributes a = xml.attributes();
        const QString fill = a.value(QLatin1String("fill")).toString();
        const double x = a.value(QLatin1String("x")).toDouble();
        if (fill == QLatin1String("none")) {
            cells.outlinedX.append(x);
            continue;
        }
        if (std::exchange(background, false)) continue;
        const qint64 q = qRound64(a.value(QLatin1String("y")).toDouble() / cellSize);
        const qint64 first = qRound64(x / cellSize);
        const qint64 count = qRound64(a.value(QLatin1String("width")).toDouble() / cellSize);
        for (qint64 k = first; k < first + count; ++k)
            if (!cells.fill.emplace(std::make_pair(q, k), fill).second) ++cells.duplicates;
    }
    return cells;
}

} // namespace

class TestMaskSvg : public QObject {
    Q_OBJECT

private slots:
    void everyCellInItsKindsColour() {
        MaskHeatmap heatmap;
        SnapshotStream stream(kWindow, kSinks, false);
        heatmap.addSnapshots(stream.take(kPositions));
        heatmap.highlightKeyPosition(19);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(QStringLiteral("mask.SVG"));
        QVERIFY(heatmap.exportImage(path)); // chosen by the suffix, in any case
        constexpr double kCell = 16; // kPositions is small: cells at the export's largest size
        const SvgCells cells = readCells(path, kCell);
        QCOMPARE(cells.width, kPositions * kCell);
        QCOMPARE(cells.duplicates, 0);
        QCOMPARE(qint64(cells.fill.size()), qint64(kPositions) * kPositions);
        const MaskColors colors = MaskColors::forPalette(heatmap.palette());
        for (qint64 q = 0; q < kPositions; ++q)
            for (qint64 k = 0; k < kPositions; ++k) {
                const MaskCell kind = classify(q, k, kWindow, kSinks.count(k) > 0);
                QCOMPARE(cells.fill.at({q, k}), colors.cell(kind).name());
            }
        QCOMPARE(cells.outlinedX, QList<double>{19 * kCell});
    }

    void refusals() {
        MaskHeatmap heatmap;
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY2(!heatmap.exportSvg(dir.filePath(QStringLiteral("empty.svg"))),
                 "nothing to export yet");
        SnapshotStream stream(8, {0}, false);
        heatmap.addSnapshots(stream.take(8));
        QVERIFY(!heatmap.exportSvg(dir.filePath(QStringLiteral("missing/folder/mask.svg"))));
        QVERIFY(heatmap.exportSvg(dir.filePath(QStringLiteral("small.svg"))));
        heatmap.addSnapshots(stream.take(int(MaskHeatmap::kSvgMaxPositions)));
        QVERIFY2(!heatmap.exportSvg(dir.filePath(QStringLiteral("large.svg"))),
                 "more positions than an SVG export holds");
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("large.svg"))));
        QVERIFY(heatmap.exportImage(dir.filePath(QStringLiteral("large.png"))));
    }
};

QTEST_MAIN(TestMaskSvg)
#include "test_mask_svg.moc"
