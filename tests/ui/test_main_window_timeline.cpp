// File > Export KV Timeline (CSV)… in the playground window: after a reply with window 16 (so the
// ring evicts), the file chosen in the menu's dialog holds one row per token written to the cache,
// checked against the engine's own state as the KV view shows it: every slot's last write is its
// occupant, every eviction names the previous write at that slot, and the last row's counters are
// the KV view's. A new chat starts a new timeline; a file that cannot be written says why.
#include <QtTest>

#include "chat_panel/chat_panel.h"
#include "main_window_fixture.h"
#include "views/kv_cache_view.h"
#include "window/kv_timeline_export.h"
#include "window/status_banner.h"
#include "window_test_support.h"
#include "worker/engine_client.h"

#include <QFileDialog>
#include <QPushButton>
#include <QStatusBar>

#include <map>

using namespace sinkscope;
using namespace sinkscope::ui;
using namespace sinkscope::test;

namespace {

const QStringList kColumns = {
    "step",  "position",         "token_id",         "token_text",         "slot",
    "sink",  "evicted_position", "evicted_token_id", "evicted_token_text", "window_tokens",
    "sinks", "evictions",        "kv_bytes"};

// RFC 4180 fields: quoted ones may hold commas, line breaks and doubled quotes.
QList<QStringList> parseCsv(const QString& text) {
    QList<QStringList> rows;
    QStringList row;
    QString field;
    bool quoted = false;
    for (qsizetype i = 0; i < text.size(); ++i) {
        const QChar c = text.at(i);
        if (quoted) {
            if (c == u'"' && i + 1 < text.size() && text.at(i + 1) == u'"') {
                field += u'"';
                ++i;
            } else if (c == u'"') {
                quoted = false;
            } else {
                field += c;
            }
        } else if (c == u'"') {
            quoted = true;
        } else if (c == u',') {
            row << field;
            field.clear();
        } else if (c == u'\n') {
            row << field;
            rows << row;
            row.clear();
            field.clear();
        } else {
            field += c;
        }
    }
    return rows;
}

// The timeline written through File > Export KV Timeline's dialog, as rows of named fields.
QList<QMap<QString, QString>> exportThroughTheMenu(MainWindow& window, const QString& path) {
    QSignalSpy exported(window.engine(), &EngineClient::kvTimelineExported);
    QAction* action = menuAction(window.menuBar(), QStringLiteral("&File"),
                                 QStringLiteral("Export KV &Timeline (CSV)…"));
    if (!action) return {};
    action->trigger();
    QFileDialog* dialog = nullptr; // the one just opened: an earlier one may await deletion
    for (QFileDialog* open : window.findChildren<QFileDialog*>(QStringLiteral("kvTimelineDialog")))
        if (open->isVisible()) dialog = open;
    if (!dialog || dialog->windowModality() != Qt::WindowModal) return {};
    dialog->selectFile(path);
    static_cast<QDialog*>(dialog)->accept(); // QFileDialog::accept, as the Save button does
    if (exported.isEmpty() && !exported.wait(kWaitMs)) return {};
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return {};
    const QList<QStringList> rows = parseCsv(QString::fromUtf8(file.readAll()));
    if (rows.isEmpty() || rows.constFirst() != kColumns) return {};
    QList<QMap<QString, QString>> named;
    for (qsizetype r = 1; r < rows.size(); ++r) {
        if (rows[r].size() != kColumns.size()) return {};
        QMap<QString, QString> fields;
        for (qsizetype c = 0; c < kColumns.size(); ++c)
            fields.insert(kColumns[c], rows[r][c]);
        named << fields;
    }
    return named;
}

qint64 number(const QMap<QString, QString>& row, const QString& column) {
    bool ok = false;
    const qint64 value = row.value(column).toLongLong(&ok);
    return ok ? value : -1;
}

} // namespace

class TestMainWindowTimeline : public QObject, public MainWindowFixture {
    Q_OBJECT

private slots:
    void initTestCase() { setUpFolders(); }
    void init() { saveSettings(); }

    void exportsEveryWriteAsTheEngineMadeIt() {
        WindowPtr window = openWindow();
        QVERIFY(window);
        QSignalSpy replies(window.get(), &MainWindow::replyFinished);
        typeMessage(*window, QStringLiteral("Hello there"));
        QCOMPARE(waitForReply(replies).reason, StopReason::MaxTokens);
        QVERIFY(window->latestSnapshot());
        const StepSnapshot last = *window->latestSnapshot();

        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(QStringLiteral("timeline.csv"));
        const QList<QMap<QString, QString>> rows = exportThroughTheMenu(*window, path);
        QVERIFY(!rows.isEmpty());
        QVERIFY2(
            window->statusBar()->currentMessage().contains(
                QStringLiteral("KV timeline saved to %1: %2 steps").arg(path).arg(rows.size())),
            qPrintable(window->statusBar()->currentMessage()));

        // One row per token written: the session's every position, in order.
        QCOMPARE(qint64(rows.size()), last.tokensSeen);
        std::map<qint64, QMap<QString, QString>> lastWriteAt; // slot -> its last write
        qint64 evictions = 0;
        for (qsizetype i = 0; i < rows.size(); ++i) {
            const QMap<QString, QString>& row = rows[i];
            QCOMPARE(number(row, "step"), qint64(i));
            QCOMPARE(number(row, "position"), qint64(i));
            const qint64 slot = number(row, "slot");
            QVERIFY(slot >= 0 && slot < qint64(last.cacheSlots.size()));
            QCOMPARE(row.value("sink") == QLatin1String("1"), slot < last.sinkSlots);
            const auto earlier = lastWriteAt.find(slot);
            if (row.value("evicted_position").isEmpty()) {
                QVERIFY(earlier == lastWriteAt.end()); // an empty slot
                QVERIFY(row.value("evicted_token_id").isEmpty());
            } else {
                // The evicted position was written earlier, at this slot, W ring writes back.
                QVERIFY(earlier != lastWriteAt.end());
                QCOMPARE(number(row, "evicted_position"), number(earlier->second, "position"));
                QCOMPARE(row.value("evicted_token_id"), earlier->second.value("token_id"));
                QCOMPARE(row.value("evicted_token_text"), earlier->second.value("token_text"));
                ++evictions;
            }
            QCOMPARE(number(row, "evictions"), evictions);
            QCOMPARE(number(row, "kv_bytes"), last.bytesAllocated);
            lastWriteAt[slot] = row;
        }
        QVERIFY(evictions > 0);

        // The slots' last writes are the KV view's slots; the last row's counters its counters.
        for (size_t slot = 0; slot < last.cacheSlots.size(); ++slot) {
            const SlotView& view = last.cacheSlots[slot];
            if (view.kind == SlotKind::Empty) continue;
            const QMap<QString, QString>& write = lastWriteAt.at(qint64(slot));
            QCOMPARE(number(write, "position"), view.position);
            QCOMPARE(number(write, "token_id"), qint64(view.token));
            QCOMPARE(write.value("token_text"), QString::fromStdString(view.piece));
        }
        const QMap<QString, QString>& end = rows.constLast();
        const qint64 ring =
            std::count_if(last.cacheSlots.begin(), last.cacheSlots.end(),
                          [](const SlotView& s) { return s.kind == SlotKind::Ring; });
        QCOMPARE(number(end, "window_tokens"), ring);
        QCOMPARE(number(end, "sinks"), qint64(last.sinksUsed));
        QCOMPARE(number(end, "evictions"), last.evictions);
        const QString counters = window->kvCacheView()->countersText();
        QVERIFY2(counters.contains(QStringLiteral("evictions %1 ").arg(last.evictions)),
                 qPrintable(counters));

        // A new chat is a new session: its timeline is its pinned block alone.
        QSignalSpy rebuilt(window.get(), &MainWindow::sessionRebuilt);
        QTest::mouseClick(window->chatPanel()->newChatButton(), Qt::LeftButton);
        QVERIFY(rebuilt.wait(kWaitMs));
        const SessionInfo fresh = rebuilt.constLast().at(0).value<SessionInfo>();
        const QList<QMap<QString, QString>> again =
            exportThroughTheMenu(*window, dir.filePath(QStringLiteral("new-chat.csv")));
        QCOMPARE(qint64(again.size()), fresh.layout.prefixLength);
        QCOMPARE(number(again.constLast(), "evictions"), 0);
    }

    void anUnwritableFileSaysWhy() {
        WindowPtr window = openWindow();
        QVERIFY(window);
        auto* timeline = window->findChild<KvTimelineExport*>();
        QVERIFY(timeline);
        QSignalSpy exported(window->engine(), &EngineClient::kvTimelineExported);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("missing/folder/timeline.csv"));
        timeline->exportTo(path);
        QVERIFY(exported.wait(kWaitMs));
        QVERIFY(!QFile::exists(path));
        QVERIFY(window->banner()->isError());
        QVERIFY2(window->banner()->message().startsWith(
                     QStringLiteral("Could not write the KV timeline to %1: ").arg(path)),
                 qPrintable(window->banner()->message()));
        QCOMPARE(window->statusBar()->currentMessage(), QStringLiteral("KV timeline not saved"));
    }
};

QTEST_MAIN(TestMainWindowTimeline)
#include "test_main_window_timeline.moc"
