// The KV cache view: one row per physical slot with the right pieces, positions, ages and kinds,
// the ring's write head, the bytes bar, clicks on slots, highlights and cheap 30 Hz updates that
// signal only the cells that changed and leave the table as a fresh model would show it.
#include <QtTest>

#include "memory/budget.h"
#include "memory/snapshot.h"
#include "model/model.h"
#include "model/synthetic.h"
#include "session/session.h"
#include "slot_test_support.h"
#include "views/kv_cache_model.h"
#include "views/kv_cache_view.h"

#include <QProgressBar>
#include <QTableView>
#include <QTemporaryDir>

#include <memory>

using namespace sinkscope;
using sinkscope::views::KvCacheModel;
using sinkscope::views::KvCacheView;

namespace {

// 3 sinks (positions 0-2) and a ring of 5 after 7 ring writes: positions 3..9 went to ring slots
// 3,4,5,6,7,3,4, so 8 and 9 overwrote 3 and 4, and the next write goes to slot 5.
StepSnapshot threeSinksRingOfFive() {
    StepSnapshot snapshot;
    snapshot.queryPosition = 9;
    snapshot.querySlot = 4;
    snapshot.cacheSlots = {
        test::keptSlot(0, SlotKind::Sink, "<s>"),   test::keptSlot(1, SlotKind::Sink, "<tools>"),
        test::keptSlot(2, SlotKind::Sink, "\n"),    test::keptSlot(8, SlotKind::Ring, " dog"),
        test::keptSlot(9, SlotKind::Ring, "!"),     test::keptSlot(5, SlotKind::Ring, " the"),
        test::keptSlot(6, SlotKind::Ring, " lazy"), test::keptSlot(7, SlotKind::Ring, "\tx"),
    };
    snapshot.tokensSeen = 10;
    snapshot.evictions = 2;
    snapshot.bytesAllocated = 6 * 1024 * 1024;
    snapshot.budgetBytes = kKvBudgetBytes;
    snapshot.effectiveWindow = 5;
    snapshot.budgetWindow = 2048;
    snapshot.sinkSlots = 3;
    snapshot.sinksUsed = 3;
    snapshot.ringHead = 5;
    snapshot.kvBits = 8;
    return snapshot;
}

QString cellText(const QAbstractItemModel* model, int row, int column) {
    return model->index(row, column).data().toString();
}

// Every role the table reads, for every cell: [rows][columns][roles].
using TableContents = QList<QList<QList<QVariant>>>;

TableContents tableContents(const QAbstractItemModel& model) {
    const int roles[] = {Qt::DisplayRole, Qt::DecorationRole,        Qt::BackgroundRole,
                         Qt::FontRole,    Qt::ForegroundRole,        Qt::TextAlignmentRole,
                         Qt::ToolTipRole, KvCacheModel::PositionRole};
    TableContents contents;
    for (int row = 0; row < model.rowCount(); ++row) {
        QList<QList<QVariant>>& cells = contents.emplace_back();
        for (int column = 0; column < model.columnCount(); ++column) {
            QList<QVariant>& values = cells.emplace_back();
            for (const int role : roles)
                values.append(model.index(row, column).data(role));
        }
    }
    return contents;
}

bool isSignalled(const QSignalSpy& changes, int row, int column) {
    for (const QList<QVariant>& change : changes) {
        const auto topLeft = change.at(0).value<QModelIndex>();
        const auto bottomRight = change.at(1).value<QModelIndex>();
        if (row >= topLeft.row() && row <= bottomRight.row() && column >= topLeft.column() &&
            column <= bottomRight.column())
            return true;
    }
    return false;
}

} // namespace

class TestKvCacheView : public QObject {
    Q_OBJECT

private slots:
    void showsEverySlot_data();
    void showsEverySlot();
    void writeHeadAndCounters();
    void bytesBarAgainstBudget();
    void clickingSlotEmitsPosition();
    void highlightPositions();
    void sameSizeUpdatesDoNotResetTheModel();
    void incrementalUpdatesMatchAFreshModel_data();
    void incrementalUpdatesMatchAFreshModel();
    void batchesShowTheNewest();
    void clearEmpties();
};

void TestKvCacheView::showsEverySlot_data() {
    QTest::addColumn<int>("slotIndex");
    QTest::addColumn<QString>("piece");
    QTest::addColumn<QString>("position");
    QTest::addColumn<QString>("age");
    QTest::addColumn<QString>("kind");
    QTest::newRow("slot 0") << 0 << "<s>"
                            << "0"
                            << "9"
                            << "sink";
    QTest::newRow("slot 1") << 1 << "<tools>"
                            << "1"
                            << "8"
                            << "sink";
    QTest::newRow("slot 2 newline shown") << 2 << QStringLiteral("⏎") << "2"
                                          << "7"
                                          << "sink";
    QTest::newRow("slot 3") << 3 << QStringLiteral("·dog") << "8"
                            << "1"
                            << "ring";
    QTest::newRow("slot 4 the query") << 4 << "!"
                                      << "9"
                                      << "0"
                                      << "ring";
    QTest::newRow("slot 5") << 5 << QStringLiteral("·the") << "5"
                            << "4"
                            << "ring";
    QTest::newRow("slot 6") << 6 << QStringLiteral("·lazy") << "6"
                            << "3"
                            << "ring";
    QTest::newRow("slot 7 tab shown") << 7 << QStringLiteral("⇥x") << "7"
                                      << "2"
                                      << "ring";
}

void TestKvCacheView::showsEverySlot() {
    QFETCH(int, slotIndex);
    QFETCH(QString, piece);
    QFETCH(QString, position);
    QFETCH(QString, age);
    QFETCH(QString, kind);
    KvCacheView view;
    view.setSnapshot(threeSinksRingOfFive());
    const QAbstractItemModel* model = view.slotTable()->model();
    QCOMPARE(model->rowCount(), 8);
    QCOMPARE(cellText(model, slotIndex, KvCacheModel::PieceColumn), piece);
    QCOMPARE(cellText(model, slotIndex, KvCacheModel::PositionColumn), position);
    QCOMPARE(cellText(model, slotIndex, KvCacheModel::AgeColumn), age);
    QCOMPARE(cellText(model, slotIndex, KvCacheModel::KindColumn), kind);
    QVERIFY(
        cellText(model, slotIndex, KvCacheModel::SlotColumn).endsWith(QString::number(slotIndex)));
}

void TestKvCacheView::writeHeadAndCounters() {
    KvCacheView view;
    view.setSnapshot(threeSinksRingOfFive());
    const QAbstractItemModel* model = view.slotTable()->model();
    for (int row = 0; row < model->rowCount(); ++row) {
        const bool head = cellText(model, row, KvCacheModel::SlotColumn).contains(QChar(0x25B6));
        QCOMPARE(head, row == 5);
    }
    QVERIFY(model->index(5, KvCacheModel::SlotColumn)
                .data(Qt::ToolTipRole)
                .toString()
                .contains(QStringLiteral("write head")));
    const QString counters = view.countersText();
    QVERIFY2(counters.contains(QStringLiteral("window 5 (budget 2,048)")), qPrintable(counters));
    QVERIFY2(counters.contains(QStringLiteral("kv_bits 8")), qPrintable(counters));
    QVERIFY2(counters.contains(QStringLiteral("sinks 3/3")), qPrintable(counters));
    QVERIFY2(counters.contains(QStringLiteral("evictions 2")), qPrintable(counters));
    QVERIFY2(counters.contains(QStringLiteral("slots 8")), qPrintable(counters));
}

void TestKvCacheView::bytesBarAgainstBudget() {
    KvCacheView view;
    StepSnapshot snapshot = threeSinksRingOfFive();
    view.setSnapshot(snapshot);
    const auto* bar = view.findChild<QProgressBar*>(QStringLiteral("kvBytesBar"));
    QVERIFY(bar);
    QCOMPARE(view.memoryText(), QStringLiteral("KV memory 6.00 MiB of 11.50 MiB budget (52%)"));
    QCOMPARE(bar->text(), view.memoryText());
    QCOMPARE(bar->maximum(), int(kKvBudgetBytes / 1024));
    QCOMPARE(bar->value(), 6 * 1024);

    snapshot.bytesAllocated = 4 * kKvBudgetBytes; // a 32-bit cache sized for the int8 budget
    view.setSnapshot(snapshot);
    QVERIFY(view.memoryText().endsWith(QStringLiteral("(400%) — over budget")));
    QCOMPARE(bar->value(), bar->maximum());

    snapshot.budgetBytes = 0; // not reported: the documented budget is assumed
    snapshot.bytesAllocated = kKvBudgetBytes;
    view.setSnapshot(snapshot);
    QCOMPARE(view.memoryText(), QStringLiteral("KV memory 11.50 MiB of 11.50 MiB budget (100%)"));
}

void TestKvCacheView::clickingSlotEmitsPosition() {
    KvCacheView view;
    view.resize(600, 400);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.setSnapshot(threeSinksRingOfFive());
    QSignalSpy clicked(&view, &KvCacheView::slotClicked);
    QTableView* table = view.slotTable();
    const QRect cell = table->visualRect(table->model()->index(4, KvCacheModel::PieceColumn));
    QVERIFY(table->viewport()->rect().contains(cell.center()));
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, cell.center());
    QCOMPARE(clicked.count(), 1);
    QCOMPARE(clicked.at(0).at(0).toInt(), 4);
    QCOMPARE(clicked.at(0).at(1).toLongLong(), qint64(9));

    const QRect sink = table->visualRect(table->model()->index(1, KvCacheModel::KindColumn));
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, sink.center());
    QCOMPARE(clicked.count(), 2);
    QCOMPARE(clicked.at(1).at(0).toInt(), 1);
    QCOMPARE(clicked.at(1).at(1).toLongLong(), qint64(1));
}

void TestKvCacheView::highlightPositions() {
    KvCacheView view;
    view.setSnapshot(threeSinksRingOfFive());
    const QAbstractItemModel* model = view.slotTable()->model();
    const QVariant plainBackground = model->index(6, 0).data(Qt::BackgroundRole);
    view.highlightPositions({8, 1});
    QCOMPARE(view.highlightedPositions(), (QList<qint64>{1, 8}));
    for (int row = 0; row < model->rowCount(); ++row) {
        if (row == 5) continue; // the write head keeps its own tint
        const bool highlighted = model->index(row, 0).data(Qt::BackgroundRole) != plainBackground;
        QCOMPARE(highlighted, row == 1 || row == 3);
    }
    // The highlight follows positions, not slots: after the ring moves on, position 8 is gone.
    StepSnapshot later = threeSinksRingOfFive();
    later.cacheSlots[3] = test::keptSlot(10, SlotKind::Ring, " ran");
    view.setSnapshot(later);
    QCOMPARE(model->index(3, 0).data(Qt::BackgroundRole), plainBackground);
    view.highlightPositions({});
    QCOMPARE(model->index(1, 0).data(Qt::BackgroundRole), plainBackground);
}

void TestKvCacheView::sameSizeUpdatesDoNotResetTheModel() {
    KvCacheView view;
    view.resize(600, 400);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    StepSnapshot snapshot;
    snapshot.sinkSlots = 0;
    snapshot.cacheSlots.resize(512);
    view.setSnapshot(snapshot);
    const QAbstractItemModel* model = view.slotTable()->model();
    QSignalSpy resets(model, &QAbstractItemModel::modelReset);
    QSignalSpy changes(model, &QAbstractItemModel::dataChanged);
    QElapsedTimer timer;
    timer.start();
    for (int64_t q = 0; q < 300; ++q) {
        snapshot.queryPosition = q;
        snapshot.cacheSlots[size_t(q % 512)] = test::keptSlot(q, SlotKind::Ring, " w");
        snapshot.ringHead = int((q + 1) % 512);
        view.setSnapshot(snapshot);
        view.repaint();
    }
    qInfo("300 updates of 512 slots, repainted: %lld ms", timer.elapsed());
    QCOMPARE(resets.count(), 0);
    QVERIFY(!changes.isEmpty());
    // Each step signals the Age column and the rows it touched (written slot, old and new head),
    // never the whole table.
    for (const QList<QVariant>& change : changes) {
        const auto topLeft = change.at(0).value<QModelIndex>();
        const auto bottomRight = change.at(1).value<QModelIndex>();
        const bool ageColumn = topLeft.column() == KvCacheModel::AgeColumn &&
                               bottomRight.column() == KvCacheModel::AgeColumn;
        QVERIFY(ageColumn || bottomRight.row() - topLeft.row() < 2);
    }
    QCOMPARE(model->rowCount(), 512);
    QCOMPARE(cellText(model, 299, KvCacheModel::PositionColumn), QStringLiteral("299"));
}

void TestKvCacheView::incrementalUpdatesMatchAFreshModel_data() {
    QTest::addColumn<bool>("probe");
    QTest::newRow("with weights") << true;     // every kept slot's weight changes at every step
    QTest::newRow("without weights") << false; // most rows keep their text; ages still move
}

// A real session on a synthetic model, window 6 and 3 first-N sinks, 80 tokens: after every step
// the incrementally updated model shows, cell by cell and role by role, what a fresh model given
// only that snapshot shows, and every cell that changed was signalled.
void TestKvCacheView::incrementalUpdatesMatchAFreshModel() {
    QFETCH(bool, probe);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path =
        QFile::encodeName(dir.filePath(QStringLiteral("m.gguf"))).toStdString();
    std::string error;
    QVERIFY2(writeSyntheticModel(SyntheticSpec{}, path, error), error.c_str());
    const std::unique_ptr<Model> synthetic = Model::load(path, error);
    QVERIFY2(synthetic, error.c_str());
    SessionOptions options;
    options.kvWindow = 6;
    options.sinks = SinkMode::FirstN;
    options.firstN = 3;
    options.probe = AttentionProbe{probe, -1, -1};
    Session session(*synthetic, options);

    const QSet<qint64> highlighted{1, 10, 40};
    KvCacheModel incremental;
    incremental.setHighlightedPositions(highlighted);
    QSignalSpy resets(&incremental, &QAbstractItemModel::modelReset);
    for (int step = 0; step < 80; ++step) {
        const int32_t token = 259 + (step * 37) % 200;
        session.prefill(std::span<const int32_t>(&token, 1));
        const StepSnapshot snapshot = session.snapshot();
        const TableContents before = tableContents(incremental);
        QSignalSpy changes(&incremental, &QAbstractItemModel::dataChanged);
        incremental.setSnapshot(snapshot);
        KvCacheModel fresh;
        fresh.setHighlightedPositions(highlighted);
        fresh.setSnapshot(snapshot);
        const TableContents after = tableContents(incremental);
        QCOMPARE(after, tableContents(fresh));
        if (step == 0) continue; // the first snapshot resets the empty model
        for (int row = 0; row < after.size(); ++row)
            for (int column = 0; column < after[row].size(); ++column)
                if (after[row][column] != before[row][column])
                    QVERIFY2(isSignalled(changes, row, column),
                             qPrintable(QStringLiteral("step %1: cell (%2, %3) changed unsignalled")
                                            .arg(step)
                                            .arg(row)
                                            .arg(column)));
    }
    QCOMPARE(resets.count(), 1);
    QCOMPARE(incremental.rowCount(), 3 + 6);
    QCOMPARE(incremental.snapshot().evictions, session.cache().evictions());
}

void TestKvCacheView::batchesShowTheNewest() {
    KvCacheView view;
    StepSnapshot older = threeSinksRingOfFive();
    older.queryPosition = 8;
    view.setSnapshots({older, threeSinksRingOfFive()});
    QCOMPARE(cellText(view.slotTable()->model(), 0, KvCacheModel::AgeColumn), QStringLiteral("9"));
}

void TestKvCacheView::clearEmpties() {
    KvCacheView view;
    view.setSnapshot(threeSinksRingOfFive());
    view.highlightPositions({1});
    view.clear();
    QCOMPARE(view.slotTable()->model()->rowCount(), 0);
    QVERIFY(view.highlightedPositions().isEmpty());
}

QTEST_MAIN(TestKvCacheView)
#include "test_kv_cache_view.moc"
