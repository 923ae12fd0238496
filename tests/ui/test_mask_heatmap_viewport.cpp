// The mask heatmap under the pointer: tooltips, clicks, highlights, sink strip, zoom, following.
#include <QtTest>

#include "mask_heatmap_test_support.h"
#include "memory/mask.h"
#include "memory/snapshot.h"
#include "views/mask_heatmap.h"
#include "views/view_colors.h"

#include <QAbstractScrollArea>
#include <QHelpEvent>
#include <QScrollBar>
#include <QToolButton>
#include <QToolTip>
#include <QWheelEvent>

#include <set>

using namespace sinkscope;
using namespace sinkscope::test;
using sinkscope::views::MaskColors;
using sinkscope::views::MaskHeatmap;

namespace {

QToolButton* buttonWithText(QWidget& parent, const QString& text) {
    for (QToolButton* button : parent.findChildren<QToolButton*>())
        if (button->text() == text) return button;
    return nullptr;
}

void sendWheel(QWidget* target, QPoint pos, int delta, Qt::KeyboardModifiers modifiers) {
    QWheelEvent event(QPointF(pos), QPointF(target->mapToGlobal(pos)), QPoint(), QPoint(0, delta),
                      Qt::NoButton, modifiers, Qt::NoScrollPhase, false);
    QApplication::sendEvent(target, &event);
}

QString toolTipAt(QWidget* viewport, QPoint pos) {
    QHelpEvent help(QEvent::ToolTip, pos, viewport->mapToGlobal(pos));
    QApplication::sendEvent(viewport, &help);
    return QToolTip::isVisible() ? QToolTip::text() : QString();
}

} // namespace

class TestMaskHeatmapViewport : public QObject {
    Q_OBJECT

private slots:
    void hoverShowsTooltip();
    void clickEmitsKeyPosition();
    void highlightKeyPositionsMarksExactlyThoseColumns_data();
    void highlightKeyPositionsMarksExactlyThoseColumns();
    void sinkStripPinsSinksWhileFollowing();
    void sinkStripNarrowsManySinks();
    void zoomButtonsAndCtrlWheel();
    void followModeStopsWhenUserScrollsAway();
};

void TestMaskHeatmapViewport::hoverShowsTooltip() {
    MaskHeatmap heatmap;
    heatmap.resize(700, 600);
    heatmap.show();
    QVERIFY(QTest::qWaitForWindowExposed(&heatmap));
    heatmap.setCellSize(12);
    SnapshotStream stream(kWindow, kSinks, true);
    heatmap.addSnapshots(stream.take(kPositions));
    heatmap.setFollowing(false);
    canvasOf(heatmap)->verticalScrollBar()->setValue(0);
    canvasOf(heatmap)->horizontalScrollBar()->setValue(0);

    const qint64 q = 30;
    const qint64 k = 1; // a sink, attended far outside the window
    const QPoint pos = heatmap.cellCenter(q, k);
    QCOMPARE(heatmap.cellAt(pos), std::make_optional(std::pair<qint64, qint64>{q, k}));
    QWidget* viewport = heatmap.canvasViewport();
    QTest::mouseMove(viewport, pos);
    QHelpEvent help(QEvent::ToolTip, pos, viewport->mapToGlobal(pos));
    QApplication::sendEvent(viewport, &help);
    QTRY_VERIFY(QToolTip::isVisible());
    const QString text = QToolTip::text();
    QCOMPARE(text, heatmap.cellToolTip(q, k));
    QVERIFY2(text.contains(QStringLiteral("query 30: “t30”")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("key 1: “t1”")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("slot 1")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("attended: sink")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("weight")), qPrintable(text));
    QToolTip::hideText();

    const QString evicted = heatmap.cellToolTip(30, 10);
    QVERIFY2(evicted.contains(QStringLiteral("evicted")), qPrintable(evicted));
    QVERIFY2(evicted.contains(QStringLiteral("not in the cache")), qPrintable(evicted));
}

void TestMaskHeatmapViewport::clickEmitsKeyPosition() {
    MaskHeatmap heatmap;
    heatmap.resize(700, 600);
    heatmap.show();
    QVERIFY(QTest::qWaitForWindowExposed(&heatmap));
    heatmap.setCellSize(10);
    SnapshotStream stream(kWindow, kSinks, false);
    heatmap.addSnapshots(stream.take(kPositions));

    QSignalSpy clicked(&heatmap, &MaskHeatmap::keyPositionClicked);
    for (const auto& [q, k] : {std::pair<qint64, qint64>{39, 37}, {38, 0}, {39, 12}}) {
        const QPoint pos = heatmap.cellCenter(q, k);
        QVERIFY2(heatmap.canvasViewport()->rect().contains(pos), "the cell is on screen");
        QTest::mouseClick(heatmap.canvasViewport(), Qt::LeftButton, {}, pos);
        QCOMPARE(clicked.last().at(0).toLongLong(), k);
        QCOMPARE(heatmap.highlightedKeyPosition(), k);
    }
    QCOMPARE(clicked.count(), 3);
}

void TestMaskHeatmapViewport::highlightKeyPositionsMarksExactlyThoseColumns_data() {
    QTest::addColumn<QList<qint64>>("positions");
    QTest::addColumn<QList<qint64>>("expected"); // sorted, unique, negatives dropped
    QTest::newRow("none") << QList<qint64>{} << QList<qint64>{};
    QTest::newRow("one sink") << QList<qint64>{1} << QList<qint64>{1};
    QTest::newRow("sink, evicted, recent, future")
        << QList<qint64>{30, 1, 9, 38} << QList<qint64>{1, 9, 30, 38};
    QTest::newRow("duplicates and negatives")
        << QList<qint64>{7, 3, 7, -2, 3} << QList<qint64>{3, 7};
    QTest::newRow("neighbours") << QList<qint64>{10, 11, 12} << QList<qint64>{10, 11, 12};
}

void TestMaskHeatmapViewport::highlightKeyPositionsMarksExactlyThoseColumns() {
    QFETCH(QList<qint64>, positions);
    QFETCH(QList<qint64>, expected);
    MaskHeatmap heatmap;
    heatmap.resize(700, 600);
    heatmap.show();
    QVERIFY(QTest::qWaitForWindowExposed(&heatmap));
    heatmap.setCellSize(12);
    SnapshotStream stream(kWindow, kSinks, false); // flat colours: a tint is a difference
    heatmap.addSnapshots(stream.take(kPositions));
    heatmap.setFollowing(false);
    canvasOf(heatmap)->horizontalScrollBar()->setValue(0);
    canvasOf(heatmap)->verticalScrollBar()->setValue(0);
    QCOMPARE(heatmap.sinkStripWidth(), 0);

    heatmap.highlightKeyPosition(20); // replaced by the list below
    heatmap.highlightKeyPositions(positions);
    QCOMPARE(heatmap.highlightedKeyPositions(), expected);
    QCOMPARE(heatmap.highlightedKeyPosition(), expected.isEmpty() ? -1 : expected.first());

    const MaskColors colors = MaskColors::forPalette(heatmap.palette());
    const QImage grab = heatmap.grab().toImage();
    for (qint64 k = 0; k < kPositions; ++k) {
        for (const qint64 q : {qint64(0), qint64(20), qint64(kPositions - 1)}) {
            const QPoint pixel =
                heatmap.canvasViewport()->mapTo(&heatmap, heatmap.cellCenter(q, k));
            const QColor flat = colors.cell(classify(q, k, kWindow, kSinks.count(k) > 0));
            const bool marked = grab.pixelColor(pixel) != flat;
            QVERIFY2(marked == expected.contains(k),
                     qPrintable(QStringLiteral("q %1, k %2 marked: %3").arg(q).arg(k).arg(marked)));
        }
    }
    heatmap.highlightKeyPositions({});
    QVERIFY(heatmap.highlightedKeyPositions().isEmpty());
    QCOMPARE(heatmap.highlightedKeyPosition(), qint64(-1));
    QCOMPARE(paintedColor(heatmap, 30, 29), colors.recent);
}

// After thousands of positions in follow mode the sink columns are far left of the view: the
// pinned strip shows them, hit-tests to them, gives their tooltip and takes their clicks.
void TestMaskHeatmapViewport::sinkStripPinsSinksWhileFollowing() {
    constexpr int kLong = 3000;
    constexpr int kLongWindow = 64;
    const std::set<int64_t> sinks{0, 1, 2, 3};
    MaskHeatmap heatmap;
    heatmap.resize(800, 600);
    heatmap.show();
    QVERIFY(QTest::qWaitForWindowExposed(&heatmap));
    heatmap.setCellSize(8);
    SnapshotStream stream(kLongWindow, sinks, false);
    for (int batch = 0; batch < kLong / 100; ++batch)
        heatmap.addSnapshots(stream.take(100));
    QVERIFY(heatmap.isFollowing());
    QWidget* viewport = heatmap.canvasViewport();
    const QRect viewRect = viewport->rect();
    QVERIFY(viewRect.contains(heatmap.cellCenter(kLong - 1, kLong - 1)));

    // Four sinks of 8 pixels each, then the divider.
    const int strip = heatmap.sinkStripWidth();
    QVERIFY2(strip > 4 * 8 && strip < viewRect.width() / 4, qPrintable(QString::number(strip)));
    const qint64 newest = kLong - 1;
    const int y = heatmap.cellCenter(newest, newest).y();
    const MaskColors colors = MaskColors::forPalette(heatmap.palette());
    for (int x = 0; x < 4 * 8; ++x) {
        const auto cell = heatmap.cellAt(QPoint(x, y));
        QVERIFY(cell.has_value());
        QCOMPARE(cell->first, newest);
        QCOMPARE(cell->second, qint64(x / 8)); // the key under the pixel is a sink
        if (x % 8 == 4) QCOMPARE(paintedColorAt(heatmap, QPoint(x, y)), colors.sink);
    }
    for (int x = 4 * 8; x < strip; ++x)
        QVERIFY2(!heatmap.cellAt(QPoint(x, y)).has_value(), "the divider is no cell");
    // Right of the strip: the scrolled matrix, far past the sinks.
    const auto scrolled = heatmap.cellAt(QPoint(strip, y));
    QVERIFY(scrolled.has_value() && scrolled->second > kLong / 2);
    QCOMPARE(paintedColorAt(heatmap, QPoint(strip + 4, y)), colors.evicted);

    // A sink's centre is in the strip; tooltips and clicks there name the sink.
    const QPoint sinkCenter = heatmap.cellCenter(newest, 2);
    QVERIFY(sinkCenter.x() < strip && viewRect.contains(sinkCenter));
    QCOMPARE(heatmap.cellAt(sinkCenter), std::make_optional(std::pair<qint64, qint64>{newest, 2}));
    const QString tip = toolTipAt(viewport, sinkCenter);
    QVERIFY2(tip.contains(QStringLiteral("key 2: “t2”")), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("slot 2")), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("attended: sink")), qPrintable(tip));
    const QString dividerTip = toolTipAt(viewport, QPoint(strip - 2, y));
    QVERIFY2(dividerTip.contains(QStringLiteral("Pinned sinks")), qPrintable(dividerTip));
    QToolTip::hideText();

    QSignalSpy clicked(&heatmap, &MaskHeatmap::keyPositionClicked);
    QTest::mouseClick(viewport, Qt::LeftButton, {}, sinkCenter);
    QCOMPARE(clicked.count(), 1);
    QCOMPARE(clicked.last().at(0).toLongLong(), qint64(2));
    QVERIFY(paintedColorAt(heatmap, sinkCenter) != colors.sink); // highlighted in the strip
    QCOMPARE(paintedColor(heatmap, newest, 1), colors.sink);
    QVERIFY(heatmap.isFollowing());

    // More tokens: still following, the strip still there.
    heatmap.addSnapshots(stream.take(50));
    QVERIFY(viewRect.contains(heatmap.cellCenter(kLong + 49, kLong + 49)));
    QCOMPARE(heatmap.cellAt(QPoint(0, heatmap.cellCenter(kLong + 49, 0).y()))->second, qint64(0));

    // Scrolled back to the start the sinks are in the matrix itself: no strip.
    canvasOf(heatmap)->horizontalScrollBar()->setValue(0);
    QVERIFY(!heatmap.isFollowing());
    QCOMPARE(heatmap.sinkStripWidth(), 0);
    QCOMPARE(heatmap.cellCenter(newest, 2).x(), 2 * 8 + 4);
}

// More sinks than fit in a quarter of the view: the strip narrows them, in position order, and
// every pixel of it still hit-tests to a sink.
void TestMaskHeatmapViewport::sinkStripNarrowsManySinks() {
    constexpr int kSinkCount = 620;
    std::set<int64_t> sinks;
    for (int64_t position = 0; position < kSinkCount; ++position)
        sinks.insert(position);
    MaskHeatmap heatmap;
    heatmap.resize(800, 600);
    heatmap.show();
    QVERIFY(QTest::qWaitForWindowExposed(&heatmap));
    heatmap.setCellSize(8);
    SnapshotStream stream(256, sinks, true);
    heatmap.addSnapshots(stream.take(2000));

    const int strip = heatmap.sinkStripWidth();
    QVERIFY(strip > 0 && strip <= heatmap.canvasViewport()->width() / 4);
    const qint64 newest = 1999;
    const int y = heatmap.cellCenter(newest, newest).y();
    qint64 previous = -1;
    int cells = 0;
    for (int x = 0; x < strip; ++x) {
        const auto cell = heatmap.cellAt(QPoint(x, y));
        if (!cell) break; // the divider
        ++cells;
        QVERIFY(sinks.count(cell->second) > 0);
        QVERIFY(cell->second > previous);
        previous = cell->second;
        QCOMPARE(int(*heatmap.cellKind(cell->first, cell->second)), int(MaskCell::AttendedSink));
    }
    QVERIFY(cells > 0 && cells < strip);
    QCOMPARE(heatmap.cellAt(QPoint(0, y))->second, qint64(0));
    QVERIFY(previous >= kSinkCount - 1 - kSinkCount / cells); // the last pixel reaches the end
    // Highlighting the last sink marks the last strip pixel, not the first.
    const QPoint lastSink = heatmap.cellCenter(newest, kSinkCount - 1);
    QVERIFY(lastSink.x() >= cells - 2 && lastSink.x() < cells);
    const QColor firstBefore = paintedColorAt(heatmap, QPoint(0, y));
    const QColor lastBefore = paintedColorAt(heatmap, lastSink);
    heatmap.highlightKeyPositions({kSinkCount - 1});
    QCOMPARE(paintedColorAt(heatmap, QPoint(0, y)), firstBefore);
    QVERIFY(paintedColorAt(heatmap, lastSink) != lastBefore);
}

void TestMaskHeatmapViewport::zoomButtonsAndCtrlWheel() {
    MaskHeatmap heatmap;
    heatmap.resize(500, 400);
    heatmap.show();
    QVERIFY(QTest::qWaitForWindowExposed(&heatmap));
    SnapshotStream stream(kWindow, kSinks, false);
    heatmap.addSnapshots(stream.take(kPositions));
    heatmap.setCellSize(8);

    QToolButton* zoomIn = buttonWithText(heatmap, QStringLiteral("+"));
    QToolButton* fit = buttonWithText(heatmap, QStringLiteral("Fit"));
    QVERIFY(zoomIn && fit);
    QTest::mouseClick(zoomIn, Qt::LeftButton);
    QCOMPARE(heatmap.cellSize(), 12.0);

    QTest::mouseClick(fit, Qt::LeftButton);
    const QSize view = heatmap.canvasViewport()->size();
    QVERIFY(heatmap.cellSize() * kPositions <= std::min(view.width(), view.height()) + 0.5);
    QVERIFY(heatmap.cellSize() * kPositions >= std::min(view.width(), view.height()) - 1.0);

    // Ctrl+wheel zooms in around the pointer: the cell under it stays under it (the matrix is
    // larger than the view, so the scroll bars can keep it there).
    heatmap.addSnapshots(stream.take(60));
    heatmap.setCellSize(8);
    heatmap.setFollowing(false);
    QScrollBar* horizontal = canvasOf(heatmap)->horizontalScrollBar();
    QScrollBar* vertical = canvasOf(heatmap)->verticalScrollBar();
    horizontal->setValue(horizontal->maximum() / 2);
    vertical->setValue(vertical->maximum() / 2);
    const auto before = heatmap.cellAt(heatmap.canvasViewport()->rect().center());
    QVERIFY(before.has_value());
    const QPoint pointer = heatmap.cellCenter(before->first, before->second);
    sendWheel(heatmap.canvasViewport(), pointer, 120, Qt::ControlModifier);
    QCOMPARE(heatmap.cellSize(), 10.0);
    QCOMPARE(heatmap.cellAt(pointer), before);
    sendWheel(heatmap.canvasViewport(), pointer, -120, Qt::ControlModifier);
    QCOMPARE(heatmap.cellSize(), 8.0);
    QCOMPARE(heatmap.cellAt(pointer), before);
}

void TestMaskHeatmapViewport::followModeStopsWhenUserScrollsAway() {
    MaskHeatmap heatmap;
    heatmap.resize(320, 320);
    heatmap.show();
    QVERIFY(QTest::qWaitForWindowExposed(&heatmap));
    heatmap.setCellSize(8);
    SnapshotStream stream(kWindow, kSinks, false);
    QScrollBar* vertical = canvasOf(heatmap)->verticalScrollBar();
    const QRect viewRect = heatmap.canvasViewport()->rect();

    heatmap.addSnapshots(stream.take(100));
    QVERIFY(heatmap.isFollowing());
    QCOMPARE(vertical->value(), vertical->maximum());
    QVERIFY(viewRect.contains(heatmap.cellCenter(99, 99)));

    QSignalSpy following(&heatmap, &MaskHeatmap::followingChanged);
    sendWheel(heatmap.canvasViewport(), viewRect.center(), 5 * 120, Qt::NoModifier);
    QVERIFY(vertical->value() < vertical->maximum());
    QVERIFY(!heatmap.isFollowing());
    QCOMPARE(following.count(), 1);
    const int scrolledTo = vertical->value();
    heatmap.addSnapshots(stream.take(20));
    QCOMPARE(vertical->value(), scrolledTo); // new rows do not pull the user back

    heatmap.setFollowing(true);
    QCOMPARE(vertical->value(), vertical->maximum());
    QVERIFY(viewRect.contains(heatmap.cellCenter(119, 119)));
    heatmap.addSnapshots(stream.take(5));
    QVERIFY(viewRect.contains(heatmap.cellCenter(124, 124)));
}

QTEST_MAIN(TestMaskHeatmapViewport)
#include "test_mask_heatmap_viewport.moc"
