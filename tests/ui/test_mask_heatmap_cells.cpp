// The mask heatmap's cells against keep()/classify(): kinds, weights, colours, export, 5,000 rows.
#include <QtTest>

#include "mask_heatmap_test_support.h"
#include "memory/mask.h"
#include "memory/snapshot.h"
#include "views/mask_heatmap.h"
#include "views/mask_image.h"
#include "views/mask_rows.h"
#include "views/view_colors.h"

#include <QAbstractScrollArea>
#include <QScrollBar>
#include <QTemporaryDir>

#include <set>

using namespace sinkscope;
using namespace sinkscope::test;
using sinkscope::views::MaskColors;
using sinkscope::views::MaskHeatmap;
using sinkscope::views::MaskLegendEntry;
using sinkscope::views::MaskRows;

class TestMaskHeatmapCells : public QObject {
    Q_OBJECT

private slots:
    void everyCellKindMatchesClassify();
    void batchesWithMissingRows();
    void weightsOfReceivedRows();
    void paintedColoursFollowKinds();
    void exportPngHasSquareAspect();
    void fiveThousandPositionsWithoutDenseStorage();
    void clearForgetsEverything();
    void sinkRanksFollowPositions();
};

void TestMaskHeatmapCells::everyCellKindMatchesClassify() {
    MaskHeatmap heatmap;
    SnapshotStream stream(kWindow, kSinks, false);
    for (int i = 0; i < kPositions; ++i)
        heatmap.addSnapshot(stream.next());

    QCOMPARE(heatmap.positionCount(), qint64(kPositions));
    for (qint64 q = 0; q < kPositions; ++q) {
        QVERIFY(heatmap.isRowRecorded(q));
        for (qint64 k = 0; k < kPositions; ++k) {
            const std::optional<MaskCell> kind = heatmap.cellKind(q, k);
            QVERIFY(kind.has_value());
            QCOMPARE(int(*kind), int(classify(q, k, kWindow, kSinks.count(k) > 0)));
        }
    }
    // Spot checks of the four kinds, so that a classify() bug cannot hide behind the loop.
    QCOMPARE(int(*heatmap.cellKind(39, 37)), int(MaskCell::AttendedRecent));
    QCOMPARE(int(*heatmap.cellKind(39, 1)), int(MaskCell::AttendedSink));
    QCOMPARE(int(*heatmap.cellKind(39, 2)), int(MaskCell::Evicted));
    QCOMPARE(int(*heatmap.cellKind(10, 11)), int(MaskCell::Future));
    QVERIFY(!heatmap.cellKind(kPositions, 0).has_value());
    QVERIFY(!heatmap.cellKind(0, kPositions).has_value());
    QVERIFY(!heatmap.cellKind(-1, 0).has_value());
}

void TestMaskHeatmapCells::batchesWithMissingRows() {
    MaskHeatmap heatmap;
    SnapshotStream stream(kWindow, kSinks, true);
    // The UI keeps only the newest snapshot of each batch: rows in between never arrive.
    std::set<qint64> received;
    for (int batch = 0; batch < 8; ++batch) {
        QList<StepSnapshot> snapshots = stream.take(5);
        received.insert(snapshots.last().queryPosition);
        heatmap.addSnapshots({snapshots.last()});
    }
    QCOMPARE(heatmap.positionCount(), qint64(kPositions));
    for (qint64 q = 0; q < kPositions; ++q) {
        QCOMPARE(heatmap.isRowRecorded(q), received.count(q) > 0);
        for (qint64 k = 0; k < kPositions; ++k) {
            QCOMPARE(int(*heatmap.cellKind(q, k)),
                     int(classify(q, k, kWindow, kSinks.count(k) > 0)));
            if (!heatmap.isRowRecorded(q))
                QVERIFY2(!heatmap.cellWeight(q, k).has_value(), "a missing row has no weights");
        }
    }
    QVERIFY(heatmap.cellToolTip(5, 3).contains(QStringLiteral("not recorded")));
    QVERIFY(!heatmap.cellToolTip(4, 3).contains(QStringLiteral("not recorded")));
}

void TestMaskHeatmapCells::weightsOfReceivedRows() {
    MaskHeatmap heatmap;
    SnapshotStream stream(kWindow, kSinks, true);
    heatmap.addSnapshots(stream.take(kPositions));
    for (qint64 q = 0; q < kPositions; ++q) {
        for (qint64 k = 0; k < kPositions; ++k) {
            const std::optional<float> weight = heatmap.cellWeight(q, k);
            if (keep(q, k, kWindow, kSinks.count(k) > 0)) {
                QVERIFY(weight.has_value());
                QCOMPARE(*weight, SnapshotStream::weightOf(q, k));
            } else {
                QVERIFY(!weight.has_value());
            }
        }
    }
}

void TestMaskHeatmapCells::paintedColoursFollowKinds() {
    MaskHeatmap heatmap;
    heatmap.resize(700, 600);
    heatmap.show();
    QVERIFY(QTest::qWaitForWindowExposed(&heatmap));
    heatmap.setCellSize(12);
    SnapshotStream stream(kWindow, kSinks, false); // no weights: kept cells take the flat colour
    heatmap.addSnapshots(stream.take(kPositions));
    heatmap.setFollowing(false);
    canvasOf(heatmap)->horizontalScrollBar()->setValue(0);
    canvasOf(heatmap)->verticalScrollBar()->setValue(0);

    const MaskColors colors = MaskColors::forPalette(heatmap.palette());
    QCOMPARE(paintedColor(heatmap, 20, 19), colors.recent);
    QCOMPARE(paintedColor(heatmap, 20, 0), colors.sink);
    QCOMPARE(paintedColor(heatmap, 20, 5), colors.evicted);
    QCOMPARE(paintedColor(heatmap, 20, 30), colors.future);
    QVERIFY(colors.recent != colors.sink && colors.sink != colors.evicted &&
            colors.evicted != colors.future && colors.recent != colors.evicted);

    heatmap.highlightKeyPosition(5);
    QVERIFY(paintedColor(heatmap, 20, 5) != colors.evicted);
    QCOMPARE(paintedColor(heatmap, 20, 6), colors.evicted);

    // The legend's "selected keys" swatch is the tint a selected attended cell is painted with.
    heatmap.highlightKeyPosition(19);
    const QImage selected =
        sinkscope::views::renderLegendSwatch(colors, MaskLegendEntry::Selected, QSize(16, 12));
    QVERIFY(selected.pixelColor(8, 6) != colors.recent);
    QCOMPARE(paintedColor(heatmap, 20, 19), selected.pixelColor(8, 6));
}

void TestMaskHeatmapCells::exportPngHasSquareAspect() {
    MaskHeatmap heatmap;
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("mask.png"));
    QVERIFY2(!heatmap.exportPng(path), "nothing to export yet");

    SnapshotStream stream(kWindow, kSinks, true);
    heatmap.addSnapshots(stream.take(kPositions));
    QVERIFY(heatmap.exportPng(path));
    const QImage image(path);
    QVERIFY(!image.isNull());
    QCOMPARE(image.width(), image.height()); // as many key columns as query rows
    QCOMPARE(image.width(), kPositions * 16);
    const MaskColors colors = MaskColors::forPalette(heatmap.palette());
    QCOMPARE(image.pixelColor(image.width() - 4, 4), colors.future);            // top right: k > q
    QCOMPARE(image.pixelColor(4 + 16 * 5, image.height() - 4), colors.evicted); // (39, 5)

    QVERIFY(!heatmap.exportPng(dir.filePath(QStringLiteral("missing/folder/mask.png"))));
}

void TestMaskHeatmapCells::fiveThousandPositionsWithoutDenseStorage() {
    constexpr int kLong = 5000;
    constexpr int kLongWindow = 64;
    MaskHeatmap heatmap;
    heatmap.resize(800, 600);
    heatmap.show();
    QVERIFY(QTest::qWaitForWindowExposed(&heatmap));
    SnapshotStream stream(kLongWindow, {0, 1, 2, 3}, true);
    for (int batch = 0; batch < kLong / 100; ++batch)
        heatmap.addSnapshots(stream.take(100));

    QCOMPARE(heatmap.positionCount(), qint64(kLong));
    QVERIFY(!heatmap.grab().isNull());
    heatmap.fitToView();
    QVERIFY(heatmap.cellSize() < 1.0);
    const QImage fitted = heatmap.grab().toImage();
    QVERIFY(!fitted.isNull());
    // Sink columns stay visible when a pixel covers many keys: the newest row shows the sink hue.
    const MaskColors colors = MaskColors::forPalette(heatmap.palette());
    const QPoint sinkPixel =
        heatmap.canvasViewport()->mapTo(&heatmap, heatmap.cellCenter(kLong - 1, 0));
    QVERIFY(fitted.pixelColor(sinkPixel) != colors.evicted);

    QCOMPARE(int(*heatmap.cellKind(4999, 4950)), int(MaskCell::AttendedRecent));
    QCOMPARE(int(*heatmap.cellKind(4999, 3)), int(MaskCell::AttendedSink));
    QCOMPARE(int(*heatmap.cellKind(4999, 4)), int(MaskCell::Evicted));
    // A dense n x n byte matrix alone would take 25 MB; the rows hold window-sized weights.
    const qint64 dense = qint64(kLong) * kLong;
    QVERIFY2(heatmap.memoryBytes() < dense / 4,
             qPrintable(QStringLiteral("%1 bytes").arg(heatmap.memoryBytes())));

    const QImage exported = heatmap.renderWholeMatrix();
    QVERIFY(exported.width() <= 4096 && exported.width() >= 4000);
    QCOMPARE(exported.width(), exported.height());
}

void TestMaskHeatmapCells::clearForgetsEverything() {
    MaskHeatmap heatmap;
    SnapshotStream stream(kWindow, kSinks, true);
    heatmap.addSnapshots(stream.take(10));
    heatmap.highlightKeyPosition(3);
    heatmap.clear();
    QCOMPARE(heatmap.positionCount(), qint64(0));
    QCOMPARE(heatmap.highlightedKeyPosition(), qint64(-1));
    QVERIFY(!heatmap.cellKind(0, 0).has_value());
    QVERIFY(heatmap.renderWholeMatrix().isNull());
}

// A sink learnt after a later one (a rebuilt session's snapshot) takes its place in position
// order: every rank follows, and the weights of both stay where keep() puts them.
void TestMaskHeatmapCells::sinkRanksFollowPositions() {
    const auto snapshotWithSinks = [](int64_t q, std::vector<int64_t> sinks) {
        StepSnapshot snapshot;
        snapshot.queryPosition = q;
        snapshot.queryToken = 7;
        snapshot.effectiveWindow = 2;
        for (const int64_t position : sinks) {
            SlotView slot;
            slot.token = int32_t(position);
            slot.position = position;
            slot.kind = SlotKind::Sink;
            slot.kept = true;
            snapshot.cacheSlots.push_back(slot);
        }
        return snapshot;
    };
    MaskRows rows;
    rows.add(snapshotWithSinks(10, {5}));
    QCOMPARE(rows.sinkRank(5), 0);
    rows.add(snapshotWithSinks(11, {2, 5, 8}));
    QCOMPARE(rows.sinkCount(), 3);
    QCOMPARE(rows.sinkRank(2), 0);
    QCOMPARE(rows.sinkRank(5), 1);
    QCOMPARE(rows.sinkRank(8), 2);
    QCOMPARE(rows.sinkRank(3), -1);
    QCOMPARE(rows.sinkRank(11), -1);
    for (int64_t rank = 0; rank < rows.sinkCount(); ++rank)
        QCOMPARE(rows.sinkRank(rows.sinkAt(rank)), rank);
    QVERIFY(rows.isSink(2) && rows.isSink(8) && !rows.isSink(9));
    QCOMPARE(*rows.cellKind(11, 2), MaskCell::AttendedSink);
    QCOMPARE(*rows.cellKind(11, 3), MaskCell::Evicted);
}

QTEST_MAIN(TestMaskHeatmapCells)
#include "test_mask_heatmap_cells.moc"
