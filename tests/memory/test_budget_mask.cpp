// The budget-derived window and the attention mask, against the figures of the memory
// architecture (docs: shared/docs/memory-architecture.md, sections 1 and 2).
#include <QtTest>

#include "memory/budget.h"
#include "memory/mask.h"

#include <stdexcept>

using namespace sinkscope;

Q_DECLARE_METATYPE(sinkscope::BudgetShape)

class TestBudgetMask : public QObject {
    Q_OBJECT

private slots:
    void budgetTable_data();
    void budgetTable();
    void needleShipsWithWindow256();
    void effectiveWindowRule_data();
    void effectiveWindowRule();
    void invalidShapesThrow_data();
    void invalidShapesThrow();
    void keepTable_data();
    void keepTable();
    void classifyAgreesWithKeep();
};

namespace {

BudgetShape makeShape(int64_t layers, int64_t kvHeads, int64_t headDim, int64_t dModel,
                      int64_t sites, int64_t maxSeq) {
    BudgetShape shape;
    shape.layers = layers;
    shape.kvHeads = kvHeads;
    shape.headDim = headDim;
    shape.dModel = dModel;
    shape.sites = sites;
    shape.maxSeq = maxSeq;
    return shape;
}

// The Needle 2 large preset of the spec's table.
BudgetShape needleShape() {
    return makeShape(27, 6, 64, 768, 2, 2048);
}

} // namespace

void TestBudgetMask::budgetTable_data() {
    QTest::addColumn<BudgetShape>("shape");
    QTest::addColumn<qint64>("perPosition");
    QTest::addColumn<qint64>("window");

    // The reference rows of the spec, exactly.
    QTest::newRow("needle") << needleShape() << qint64(25056) << qint64(480);
    QTest::newRow("base") << makeShape(27, 4, 64, 512, 2, 2048) << qint64(16704) << qint64(704);
    QTest::newRow("stories260K") << makeShape(5, 4, 8, 64, 0, 2048) << qint64(360) << qint64(2048);

    // Floor: 12,058,624 / 921,600 = 13 positions, rounded down to 0, lifted to 160.
    QTest::newRow("floor, budget fits 13 positions")
        << makeShape(100, 32, 128, 0, 0, 4096) << qint64(921600) << qint64(160);
    // Floor: 12,058,624 / 100,800 = 119 -> 96 -> 160.
    QTest::newRow("floor, budget fits 96 after rounding")
        << makeShape(14, 4, 800, 0, 0, 4096) << qint64(100800) << qint64(160);
    // The floor wins over a max_seq below 160.
    QTest::newRow("floor above max_seq")
        << makeShape(5, 4, 8, 64, 0, 64) << qint64(360) << qint64(160);
    // Cap: max_seq is taken as is, not rounded to 32.
    QTest::newRow("max_seq cap, not rounded")
        << makeShape(5, 4, 8, 64, 0, 1000) << qint64(360) << qint64(1000);
    // Rounding: 12,058,624 / 144 = 83,740 -> 83,712.
    QTest::newRow("rounded down to 32")
        << makeShape(1, 1, 64, 0, 0, 100000) << qint64(144) << qint64(83712);
    // kv = 31: no whole group, so no scale bytes: 2 * 31 = 62; 194,493 -> 194,464.
    QTest::newRow("kv below one group")
        << makeShape(1, 1, 31, 0, 0, 1000000) << qint64(62) << qint64(194464);
    // kv = 8: 16 bytes; 753,664 positions is already a multiple of 32.
    QTest::newRow("exact multiple of 32")
        << makeShape(1, 1, 8, 0, 0, 1000000) << qint64(16) << qint64(753664);
    // Sites only; d = 40 counts one whole group: 40 + 4 = 44 per site.
    QTest::newRow("engram sites only")
        << makeShape(0, 0, 0, 40, 3, 1000000) << qint64(132) << qint64(91328);
}

void TestBudgetMask::budgetTable() {
    QFETCH(BudgetShape, shape);
    QFETCH(qint64, perPosition);
    QFETCH(qint64, window);
    QCOMPARE(bytesPerPosition(shape), perPosition);
    QCOMPARE(budgetWindow(shape), window);
}

void TestBudgetMask::needleShipsWithWindow256() {
    // Needle 2 ships with kv_window 256, so its effective window is 256.
    QCOMPARE(effectiveWindow(budgetWindow(needleShape()), 256), int64_t(256));
}

void TestBudgetMask::effectiveWindowRule_data() {
    QTest::addColumn<qint64>("budget");
    QTest::addColumn<qint64>("kvWindow");
    QTest::addColumn<qint64>("expected");

    QTest::newRow("kv_window 0 takes the budget") << qint64(480) << qint64(0) << qint64(480);
    QTest::newRow("needle kv_window 256") << qint64(480) << qint64(256) << qint64(256);
    QTest::newRow("kv_window above budget") << qint64(480) << qint64(1024) << qint64(480);
    QTest::newRow("kv_window equal to budget") << qint64(704) << qint64(704) << qint64(704);
    QTest::newRow("kv_window 1") << qint64(2048) << qint64(1) << qint64(1);
    QTest::newRow("negative kv_window is no override")
        << qint64(2048) << qint64(-5) << qint64(2048);
}

void TestBudgetMask::effectiveWindowRule() {
    QFETCH(qint64, budget);
    QFETCH(qint64, kvWindow);
    QFETCH(qint64, expected);
    QCOMPARE(effectiveWindow(budget, kvWindow), expected);
}

void TestBudgetMask::invalidShapesThrow_data() {
    QTest::addColumn<BudgetShape>("shape");

    QTest::newRow("all zero: no bytes per position") << makeShape(0, 0, 0, 0, 0, 2048);
    QTest::newRow("layers but no kv width, no sites") << makeShape(27, 0, 64, 768, 0, 2048);
    QTest::newRow("negative layers") << makeShape(-1, 4, 8, 64, 0, 2048);
    QTest::newRow("negative kvHeads") << makeShape(5, -4, 8, 64, 0, 2048);
    QTest::newRow("negative headDim") << makeShape(5, 4, -8, 64, 0, 2048);
    QTest::newRow("negative dModel") << makeShape(5, 4, 8, -64, 2, 2048);
    QTest::newRow("negative sites") << makeShape(5, 4, 8, 64, -1, 2048);
    QTest::newRow("negative maxSeq") << makeShape(5, 4, 8, 64, 0, -1);
    QTest::newRow("overflowing kv width")
        << makeShape(5, int64_t(1) << 40, int64_t(1) << 40, 64, 0, 2048);
    QTest::newRow("overflowing layers") << makeShape(int64_t(1) << 60, 4, 8, 64, 0, 2048);
}

void TestBudgetMask::invalidShapesThrow() {
    QFETCH(BudgetShape, shape);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, bytesPerPosition(shape));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, budgetWindow(shape));
}

void TestBudgetMask::keepTable_data() {
    QTest::addColumn<qint64>("q");
    QTest::addColumn<qint64>("k");
    QTest::addColumn<qint64>("window");
    QTest::addColumn<bool>("sink");
    QTest::addColumn<bool>("expected");

    QTest::newRow("future key") << qint64(5) << qint64(6) << qint64(4) << false << false;
    QTest::newRow("future sink") << qint64(5) << qint64(6) << qint64(4) << true << false;
    QTest::newRow("key is the query") << qint64(5) << qint64(5) << qint64(4) << false << true;
    QTest::newRow("oldest in window, q-k == W-1")
        << qint64(10) << qint64(7) << qint64(4) << false << true;
    QTest::newRow("just left the window, q-k == W")
        << qint64(10) << qint64(6) << qint64(4) << false << false;
    QTest::newRow("sink at q-k == W") << qint64(10) << qint64(6) << qint64(4) << true << true;
    QTest::newRow("sink far in the past")
        << qint64(100000) << qint64(0) << qint64(256) << true << true;
    QTest::newRow("ordinary far in the past")
        << qint64(100000) << qint64(0) << qint64(256) << false << false;
    QTest::newRow("W 1, the query itself") << qint64(3) << qint64(3) << qint64(1) << false << true;
    QTest::newRow("W 1, previous token") << qint64(3) << qint64(2) << qint64(1) << false << false;
    QTest::newRow("W 1, sink") << qint64(3) << qint64(0) << qint64(1) << true << true;
    QTest::newRow("first token attends itself")
        << qint64(0) << qint64(0) << qint64(1) << true << true;
}

void TestBudgetMask::keepTable() {
    QFETCH(qint64, q);
    QFETCH(qint64, k);
    QFETCH(qint64, window);
    QFETCH(bool, sink);
    QFETCH(bool, expected);
    QCOMPARE(keep(q, k, window, sink), expected);
}

void TestBudgetMask::classifyAgreesWithKeep() {
    for (long long window = 1; window <= 8; ++window) {
        for (long long q = 0; q < 40; ++q) {
            for (long long k = 0; k < 40; ++k) {
                for (const bool sink : {false, true}) {
                    const MaskCell cell = classify(q, k, window, sink);
                    const bool attended =
                        cell == MaskCell::AttendedRecent || cell == MaskCell::AttendedSink;
                    const QByteArray where = QStringLiteral("q %1 k %2 W %3 sink %4")
                                                 .arg(q)
                                                 .arg(k)
                                                 .arg(window)
                                                 .arg(sink)
                                                 .toUtf8();
                    QVERIFY2(attended == keep(q, k, window, sink), where.constData());
                    QVERIFY2((cell == MaskCell::Future) == (k > q), where.constData());
                    // A sink cell is one that only the sink rule admits.
                    QVERIFY2((cell == MaskCell::AttendedSink) ==
                                 (keep(q, k, window, sink) && !keep(q, k, window, false)),
                             where.constData());
                }
            }
        }
    }
}

QTEST_GUILESS_MAIN(TestBudgetMask)
#include "test_budget_mask.moc"
