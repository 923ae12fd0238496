// The status bar's memory gauge in the playground: after every batch of a reply it shows the same
// counters as the KV view's snapshot (window fill, sinks, evictions, the ring head), and a new
// chat starts it again from the pinned sinks.
#include <QtTest>

#include "chat_panel/chat_panel.h"
#include "main_window_fixture.h"
#include "views/kv_cache_view.h"
#include "views/memory_gauge.h"
#include "window_test_support.h"
#include "worker/engine_client.h"

#include <QPushButton>
#include <QStatusBar>

#include <algorithm>

using namespace sinkscope;
using namespace sinkscope::test;
using sinkscope::ui::EngineBatch;
using sinkscope::ui::EngineClient;
using sinkscope::ui::MainWindow;
using sinkscope::views::MemoryGauge;

class TestMainWindowGauge : public QObject, public MainWindowFixture {
    Q_OBJECT

private slots:
    void initTestCase() { setUpFolders(); }
    void init() { saveSettings(); }

    void followsTheKvViewAtEveryBatch() {
        WindowPtr window = openWindow();
        QVERIFY(window);
        MemoryGauge* gauge = window->memoryGauge();
        QVERIFY(gauge->isVisible());
        QVERIFY(window->statusBar()->isAncestorOf(gauge));
        int batches = 0;
        QString mismatch;
        // Queued after MainWindow's own handler, so both views have taken the batch.
        connect(
            window->engine(), &EngineClient::batchReady, this,
            [&](const EngineBatch& batch) {
                if (batch.snapshots.isEmpty() || !mismatch.isEmpty()) return;
                ++batches;
                const StepSnapshot& shown = *window->latestSnapshot();
                const auto& f = gauge->figures();
                const qint64 ring =
                    std::count_if(shown.cacheSlots.begin(), shown.cacheSlots.end(),
                                  [](const SlotView& slot) { return slot.kind == SlotKind::Ring; });
                const QString counters = window->kvCacheView()->countersText();
                if (f.ringFilled != ring || f.evictions != shown.evictions ||
                    f.sinksUsed != shown.sinksUsed || f.nextSlot != shown.ringHead ||
                    !counters.contains(QStringLiteral("evictions %1 ").arg(f.evictions)) ||
                    !counters.contains(QStringLiteral("ring head %1 ").arg(f.nextSlot)))
                    mismatch = QStringLiteral("batch %1: gauge %2 / KV view %3")
                                   .arg(batches)
                                   .arg(gauge->figuresText(), counters);
            },
            Qt::QueuedConnection);
        QSignalSpy replies(window.get(), &MainWindow::replyFinished);
        typeMessage(*window, QStringLiteral("Hello there"));
        waitForReply(replies);
        QCoreApplication::processEvents();
        QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
        QVERIFY(batches > 0);
        // Window 16 and a 40-token reply: the ring is full and has evicted.
        QCOMPARE(gauge->figures().window, 16);
        QCOMPARE(gauge->figures().ringFilled, 16);
        QVERIFY(gauge->figures().evictions > 0);
        QVERIFY2(gauge->toolTip().contains(QStringLiteral("and evicts '")),
                 qPrintable(gauge->toolTip()));

        QSignalSpy rebuilt(window.get(), &MainWindow::sessionRebuilt);
        QTest::mouseClick(window->chatPanel()->newChatButton(), Qt::LeftButton);
        QVERIFY(rebuilt.wait(kWaitMs));
        QCoreApplication::processEvents();
        QVERIFY2(gauge->figures().evictions == 0 && gauge->figures().ringFilled <= 1,
                 qPrintable(gauge->figuresText()));
    }
};

QTEST_MAIN(TestMainWindowGauge)
#include "test_main_window_gauge.moc"
