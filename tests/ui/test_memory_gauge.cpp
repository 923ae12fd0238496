// The memory gauge: its figures and tooltip from hand-made snapshots (an empty ring, a filling
// ring, a full ring whose next write evicts a token), and, on a real session stepped token by
// token, the same counters as the snapshot and the KV cache view at every step.
#include <QtTest>

#include "memory/budget.h"
#include "memory/snapshot.h"
#include "model/model.h"
#include "session/session.h"
#include "slot_test_support.h"
#include "synthetic_model_support.h"
#include "views/kv_cache_view.h"
#include "views/memory_gauge.h"

using namespace sinkscope;
using sinkscope::views::KvCacheView;
using sinkscope::views::MemoryGauge;

namespace {

// 2 sinks and a ring of 4: `ringTokens` window tokens written so far (positions 2, 3, ...).
StepSnapshot twoSinksRingOfFour(int ringTokens) {
    StepSnapshot snapshot;
    snapshot.cacheSlots = {test::keptSlot(0, SlotKind::Sink, "<s>"),
                           test::keptSlot(1, SlotKind::Sink, "<tools>"),
                           SlotView{},
                           SlotView{},
                           SlotView{},
                           SlotView{}};
    const char* pieces[] = {" kitchen", " lights", " on", "\n", " please", " now"};
    for (int i = 0; i < ringTokens; ++i)
        snapshot.cacheSlots[size_t(2 + i % 4)] = test::keptSlot(2 + i, SlotKind::Ring, pieces[i]);
    snapshot.sinkSlots = 2;
    snapshot.sinksUsed = 2;
    snapshot.effectiveWindow = 4;
    snapshot.ringHead = 2 + ringTokens % 4;
    snapshot.evictions = std::max(0, ringTokens - 4);
    snapshot.bytesAllocated = 3 * 1024 * 1024;
    snapshot.budgetBytes = kKvBudgetBytes;
    return snapshot;
}

} // namespace

class TestMemoryGauge : public QObject {
    Q_OBJECT

private slots:
    void noModel() {
        MemoryGauge gauge;
        QCOMPARE(gauge.figuresText(), QStringLiteral("KV: no model"));
        QCOMPARE(gauge.figures().nextSlot, -1);
    }

    void fillingRing() {
        MemoryGauge gauge;
        gauge.showStep(twoSinksRingOfFour(3));
        QCOMPARE(gauge.figures().ringFilled, 3);
        QCOMPARE(gauge.figures().nextSlot, 5);
        QVERIFY2(gauge.figuresText().startsWith(QStringLiteral("window 3/4 · 2 sinks · ")),
                 qPrintable(gauge.figuresText()));
        QVERIFY2(gauge.figuresText().endsWith(QStringLiteral(" · 0 evicted")),
                 qPrintable(gauge.figuresText()));
        QVERIFY2(gauge.toolTip().contains(QStringLiteral("writes slot 5, still empty")),
                 qPrintable(gauge.toolTip()));
    }

    // Six window tokens in a ring of four: positions 6 and 7 overwrote 2 and 3, and the next
    // token writes slot 4, which holds " on" at position 4.
    void fullRingEvicts() {
        MemoryGauge gauge;
        gauge.showStep(twoSinksRingOfFour(6));
        QCOMPARE(gauge.figures().ringFilled, 4);
        QCOMPARE(gauge.figures().evictions, 2);
        QVERIFY2(gauge.figuresText().contains(QStringLiteral("window 4/4")),
                 qPrintable(gauge.figuresText()));
        QVERIFY2(
            gauge.toolTip().contains(QStringLiteral("writes slot 4 and evicts '·on' (position 4)")),
            qPrintable(gauge.toolTip()));
        QVERIFY2(gauge.figuresText().contains(QStringLiteral("3.00 MiB of 11.50 MiB")),
                 qPrintable(gauge.figuresText()));
    }

    // Steps rewrite the figures 30 times a second: the size hint only grows, so a shorter text
    // lays nothing out again, and clear() (no model) lets it shrink.
    void widthOnlyGrowsUntilCleared() {
        MemoryGauge gauge;
        StepSnapshot busy = twoSinksRingOfFour(4);
        busy.evictions = 123456789;
        gauge.showStep(busy);
        const QSize wide = gauge.sizeHint();
        gauge.showStep(twoSinksRingOfFour(1));
        QCOMPARE(gauge.sizeHint(), wide);
        busy.evictions = 12345678901234;
        gauge.showStep(busy);
        QVERIFY(gauge.sizeHint().width() > wide.width());
        gauge.clear();
        QVERIFY(gauge.sizeHint().width() < wide.width());
    }

    void sessionBeforeItsFirstStep() {
        MemoryGauge gauge;
        gauge.showSession(290, 290, 256, 1024 * 1024, kKvBudgetBytes);
        QVERIFY2(gauge.figuresText().startsWith(QStringLiteral("window 0/256 · 290 sinks")),
                 qPrintable(gauge.figuresText()));
        gauge.clear();
        QCOMPARE(gauge.figuresText(), QStringLiteral("KV: no model"));
    }

    // A real session: pinned sinks, then a window of 6 overflowing; the gauge's counters equal the
    // snapshot's and the KV view's at every step, and the tooltip names the token the ring head
    // holds.
    void followsARealSession() {
        const std::unique_ptr<Model> model = test::modelFromSpec();
        SessionOptions options;
        options.kvWindow = 6;
        options.sinks = SinkMode::FirstN;
        options.firstN = 2;
        Session session(*model, options);
        MemoryGauge gauge;
        KvCacheView view;
        const std::vector<int32_t> tokens = {1, 5, 9, 13, 17, 21, 25, 29, 33, 37, 41, 45};
        int steps = 0;
        session.prefill(tokens, [&](const StepSnapshot& snapshot) {
            gauge.showStep(snapshot);
            view.setSnapshot(snapshot);
            ++steps;
            const auto& f = gauge.figures();
            const int64_t ringTokens = snapshot.tokensSeen - snapshot.sinksUsed;
            if (f.ringFilled != std::min<int64_t>(ringTokens, 6) ||
                f.evictions != snapshot.evictions || f.sinksUsed != snapshot.sinksUsed ||
                f.nextSlot != snapshot.ringHead || f.bytesAllocated != snapshot.bytesAllocated)
                return false;
            const QString evicts = QStringLiteral("(position %1)").arg(ringTokens - 6 + 2);
            if (ringTokens >= 6 && !gauge.toolTip().contains(evicts)) return false;
            return view.countersText().contains(QStringLiteral("evictions %1 ").arg(f.evictions)) &&
                   view.countersText().contains(QStringLiteral("ring head %1 ").arg(f.nextSlot));
        });
        QCOMPARE(steps, int(tokens.size()));
        QCOMPARE(gauge.figures().evictions, 4);
    }
};

QTEST_MAIN(TestMemoryGauge)
#include "test_memory_gauge.moc"
