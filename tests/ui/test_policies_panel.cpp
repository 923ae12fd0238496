// The Policies tab driven like a user: a text and policies picked, Run and Stop clicked, the
// window closed, a chat started and the model switched mid-run; the figures, the CSV and the
// mask/slot strips checked against the engine's rules. A synthetic model in a temporary folder.
#include <QtTest>

#include "chat_panel/chat_panel.h"
#include "chat_panel/message_input.h"
#include "chat_panel/token_text_view.h"
#include "memory/mask.h"
#include "model/synthetic.h"
#include "panels/policies_panel.h"
#include "panels/policy_slots_view.h"
#include "window/app_settings.h"
#include "window/main_window.h"
#include "window_test_support.h"
#include "worker/engine_client.h"

#include <QChart>
#include <QChartView>
#include <QElapsedTimer>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>

#include <cmath>
#include <memory>
#include <set>

using namespace sinkscope;
using namespace sinkscope::ui;

namespace {

using test::useTemporaryAppFolders;

constexpr int kWaitMs = 120000;
constexpr int kCloseLimitMs = 5000; // a run stops within one position: far below this
using WindowPtr = std::unique_ptr<MainWindow>;

// Types into a spin box like a user and commits with Enter.
void typeValue(QAbstractSpinBox* spin, const QString& text) {
    spin->setFocus();
    QTest::keyClick(spin, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClicks(spin, text);
    QTest::keyClick(spin, Qt::Key_Return);
}

PolicyRunReport waitForRun(QSignalSpy& finished) {
    if (finished.isEmpty() && !finished.wait(kWaitMs)) return {};
    return finished.takeFirst().at(0).value<PolicyRunReport>();
}

// Clicks Run and waits until the worker has posted its first positions.
bool startRunAndWaitForPoints(MainWindow& window) {
    QSignalSpy batches(window.engine(), &EngineClient::policyBatchReady);
    QTest::mouseClick(window.policiesPanel()->runButton(), Qt::LeftButton);
    return batches.wait(kWaitMs);
}

// The story repeated 50 times (tens of thousands of tokens): a run that one fast policy on a small
// model cannot finish between its first points and the test's next click, however loaded the
// machine (otherwise "the run stopped" would race with "the run finished").
void makeRunLong(PoliciesPanel& panel) {
    auto* repeat = panel.findChild<QSpinBox*>(QStringLiteral("policyRepeat"));
    QVERIFY(repeat);
    repeat->setValue(50);
}

void choosePolicies(PoliciesPanel& panel, const QStringList& names) {
    for (const Policy& policy : defaultPolicies()) {
        const QString name = QString::fromStdString(policyName(policy));
        panel.setPolicyChecked(name, names.contains(name));
    }
}

QSet<qint64> attendedKeys(qint64 query, const PolicyMaskShape& shape) {
    QSet<qint64> keys;
    for (qint64 key = 0; key <= query; ++key)
        if (keep(query, key, shape.window, key < shape.sinks)) keys.insert(key);
    return keys;
}

} // namespace

class TestPoliciesPanel : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void maskRowSegmentsFollowKeep_data();
    void maskRowSegmentsFollowKeep();
    void ringSlotsHoldExactlyTheAttendedKeys_data();
    void ringSlotsHoldExactlyTheAttendedKeys();
    void windowCoveringTheStreamEqualsDense();
    void transcriptIsATextSource();
    void stopMidRunEndsStopped();
    void closingMidRunDoesNotHang();
    void startingAChatStopsTheRun();
    void switchingModelsStopsTheRun();
    void csvHasOneRowPerPolicyPerPosition();
    void chartClickShowsEveryPolicysSlots();

private:
    WindowPtr openWindow();
    // A finished run of `names` over the small text file with window W.
    PolicyRunReport runSmallText(MainWindow& window, const QStringList& names, int windowSize);

    QTemporaryDir m_dir;
    QString m_modelPath;
    QString m_smallText;
};

void TestPoliciesPanel::initTestCase() {
    QVERIFY(m_dir.isValid());
    useTemporaryAppFolders(m_dir);

    m_modelPath = m_dir.filePath(QStringLiteral("synthetic.gguf"));
    std::string error;
    QVERIFY2(
        writeSyntheticModel(SyntheticSpec{}, QFile::encodeName(m_modelPath).toStdString(), error),
        error.c_str());
    AppSettings settings;
    settings.modelPath = m_modelPath;
    settings.engine.kvWindow = 16;
    settings.limits.maxNewTokens = 20;
    settings.limits.stopAtNewline = false;
    settings.limits.ignoreEos = true;
    settings.save();

    m_smallText = m_dir.filePath(QStringLiteral("small.txt"));
    QFile small(m_smallText);
    QVERIFY(small.open(QIODevice::WriteOnly));
    small.write("The cat sat on the mat. The dog ran to the park and back.");
}

WindowPtr TestPoliciesPanel::openWindow() {
    WindowPtr window = test::openLoadedWindow(kWaitMs);
    if (!window) return nullptr;
    window->tabs()->setCurrentWidget(window->policiesPanel());
    return window;
}

PolicyRunReport TestPoliciesPanel::runSmallText(MainWindow& window, const QStringList& names,
                                                int windowSize) {
    PoliciesPanel* panel = window.policiesPanel();
    if (!panel->setTextFile(m_smallText)) return {};
    choosePolicies(*panel, names);
    auto* windowSpin = panel->findChild<QSpinBox*>(QStringLiteral("policyWindow"));
    if (!windowSpin) return {};
    typeValue(windowSpin, QString::number(windowSize));
    QSignalSpy finished(panel, &PoliciesPanel::runFinished);
    QTest::mouseClick(panel->runButton(), Qt::LeftButton);
    return waitForRun(finished);
}

void TestPoliciesPanel::maskRowSegmentsFollowKeep_data() {
    QTest::addColumn<QString>("policy");
    QTest::addColumn<int>("window");
    QTest::addColumn<int>("query");
    QTest::addColumn<QString>("expected"); // cell letters per run: r recent, s sink, e evicted
    QTest::newRow("dense") << "dense" << 8 << 20 << "r0-20";
    QTest::newRow("window") << "window" << 8 << 20 << "e0-12 r13-20";
    QTest::newRow("sink:4") << "sink:4" << 8 << 20 << "s0-3 e4-12 r13-20";
    QTest::newRow("sink:4 inside W") << "sink:4" << 8 << 7 << "r0-7";
    QTest::newRow("sink:4 sinks only") << "sink:4" << 8 << 9 << "s0-1 r2-9";
    QTest::newRow("sink:4 first eviction") << "sink:4" << 8 << 12 << "s0-3 e4 r5-12";
    QTest::newRow("recompute") << "recompute" << 8 << 20 << "e0-12 r13-20";
}

void TestPoliciesPanel::maskRowSegmentsFollowKeep() {
    QFETCH(QString, policy);
    QFETCH(int, window);
    QFETCH(int, query);
    QFETCH(QString, expected);
    std::string error;
    const std::optional<Policy> parsed = parsePolicy(policy.toStdString(), error);
    QVERIFY(parsed);
    QStringList runs;
    for (const KeySegment& segment : maskRowSegments(query, maskShapeOf(*parsed, window, query))) {
        const QChar letter = segment.cell == MaskCell::AttendedRecent ? u'r'
                             : segment.cell == MaskCell::AttendedSink ? u's'
                                                                      : u'e';
        runs << (segment.first == segment.last
                     ? QStringLiteral("%1%2").arg(letter).arg(segment.first)
                     : QStringLiteral("%1%2-%3").arg(letter).arg(segment.first).arg(segment.last));
    }
    QCOMPARE(runs.join(u' '), expected);
}

void TestPoliciesPanel::ringSlotsHoldExactlyTheAttendedKeys_data() {
    QTest::addColumn<QString>("policy");
    QTest::addColumn<int>("window");
    const QStringList policies = {QStringLiteral("window"), QStringLiteral("sink:1"),
                                  QStringLiteral("sink:4"), QStringLiteral("sink:4:streaming")};
    for (const QString& policy : policies)
        for (const int window : {1, 5, 8})
            QTest::newRow(qPrintable(QStringLiteral("%1 W=%2").arg(policy).arg(window)))
                << policy << window;
}

// At every query, the slot runs hold exactly the keys keep() attends, each in the slot the ring
// rule gives it, no slot twice, and never more than S + W slots.
void TestPoliciesPanel::ringSlotsHoldExactlyTheAttendedKeys() {
    QFETCH(QString, policy);
    QFETCH(int, window);
    std::string error;
    const std::optional<Policy> parsed = parsePolicy(policy.toStdString(), error);
    QVERIFY(parsed);
    const qint64 sinks = parsed->kind == PolicyKind::Sinks ? parsed->sinks : 0;
    for (qint64 query = 0; query < 40; ++query) {
        QSet<qint64> held;
        std::set<qint64> slotsUsed;
        for (const SlotRun& run : slotRuns(*parsed, window, query)) {
            QCOMPARE(run.lastSlot - run.firstSlot, run.lastPosition - run.firstPosition);
            for (qint64 i = 0; i <= run.lastSlot - run.firstSlot; ++i) {
                const qint64 position = run.firstPosition + i;
                QCOMPARE(ringSlotOf(position, sinks, window), run.firstSlot + i);
                QVERIFY(slotsUsed.insert(run.firstSlot + i).second);
                held.insert(position);
            }
        }
        QVERIFY(qint64(slotsUsed.size()) <= sinks + window);
        QCOMPARE(held, attendedKeys(query, maskShapeOf(*parsed, window, query)));
    }
}

// W covers the whole stream: nothing is evicted, so window and sinks compute what dense computes,
// bit for bit, and the table shows the same figures; KV bytes differ (dense spans the stream).
void TestPoliciesPanel::windowCoveringTheStreamEqualsDense() {
    WindowPtr window = openWindow();
    QVERIFY(window);
    const PolicyRunReport report = runSmallText(
        *window, {QStringLiteral("dense"), QStringLiteral("window"), QStringLiteral("sink:4")},
        128);
    QCOMPARE(report.state, PolicyRunState::Finished);
    QVERIFY(report.streamTokens > 10 && report.streamTokens <= 128);

    PoliciesPanel* panel = window->policiesPanel();
    QCOMPARE(panel->stateText().left(8), QStringLiteral("finished"));
    QCOMPARE(panel->table()->rowCount(), 3);
    QCOMPARE(panel->results().size(), size_t(3));
    for (int row = 0; row < 3; ++row) {
        const PolicySummary summary = summarizePolicy(panel->results()[size_t(row)]);
        QCOMPARE(panel->table()->item(row, 0)->text(), summary.name);
        QCOMPARE(summary.evaluated, report.streamTokens - 1);
        QVERIFY(std::isfinite(summary.perplexity) && summary.perplexity > 1);
        QVERIFY(std::isfinite(summary.tailPerplexity));
        QVERIFY(summary.tokensPerSecond > 0);
        QVERIFY(summary.kvBytes > 0);
        for (int column = 1; column <= 2; ++column)
            QCOMPARE(panel->table()->item(row, column)->text(),
                     panel->table()->item(0, column)->text());
    }
    const std::vector<PolicyResult>& results = panel->results();
    QCOMPARE(results[1].nll, results[0].nll);
    QCOMPARE(results[2].nll, results[0].nll);
    QCOMPARE(panel->progressBar()->value(), panel->progressBar()->maximum());
    QVERIFY(panel->runButton()->isEnabled());
    QVERIFY(!panel->stopButton()->isEnabled());
}

void TestPoliciesPanel::transcriptIsATextSource() {
    WindowPtr window = openWindow();
    QVERIFY(window);
    QSignalSpy replies(window.get(), &MainWindow::replyFinished);
    QTest::keyClicks(window->chatPanel()->input(), QStringLiteral("Tell me a story"));
    QTest::keyClick(window->chatPanel()->input(), Qt::Key_Return);
    QVERIFY(replies.wait(kWaitMs));

    PoliciesPanel* panel = window->policiesPanel();
    panel->setTextSource(PoliciesPanel::TextSource::Transcript);
    choosePolicies(*panel, {QStringLiteral("window")});
    QCOMPARE(panel->currentRequest().text, window->chatPanel()->transcript()->toPlainText());
    QSignalSpy finished(panel, &PoliciesPanel::runFinished);
    QTest::mouseClick(panel->runButton(), Qt::LeftButton);
    const PolicyRunReport report = waitForRun(finished);
    QCOMPARE(report.state, PolicyRunState::Finished);
    QVERIFY(report.streamTokens > 20); // the user's turn and a 20-token reply
    QCOMPARE(panel->table()->rowCount(), 1);
}

void TestPoliciesPanel::stopMidRunEndsStopped() {
    WindowPtr window = openWindow();
    QVERIFY(window);
    PoliciesPanel* panel = window->policiesPanel();
    choosePolicies(*panel, {QStringLiteral("dense"), QStringLiteral("sink:4")});
    QSignalSpy finished(panel, &PoliciesPanel::runFinished);
    QVERIFY(startRunAndWaitForPoints(*window)); // the built-in story
    QVERIFY(panel->isRunning());
    QVERIFY(panel->stopButton()->isEnabled());
    QTest::mouseClick(panel->stopButton(), Qt::LeftButton);
    const PolicyRunReport report = waitForRun(finished);
    QCOMPARE(report.state, PolicyRunState::Stopped);
    QVERIFY(panel->stateText().startsWith(QStringLiteral("stopped")));
    QVERIFY(report.streamTokens > 1000); // the story is thousands of tokens: it did stop early
    QCOMPARE(panel->table()->rowCount(), 2);
    for (const PolicyResult& result : panel->results()) {
        QVERIFY(result.stopped);
        QVERIFY(!result.nll.empty());
        QVERIFY(qint64(result.nll.size()) < report.streamTokens - 1);
    }
    QVERIFY(!panel->isRunning());
    QVERIFY(panel->runButton()->isEnabled());
}

void TestPoliciesPanel::closingMidRunDoesNotHang() {
    WindowPtr window = openWindow();
    QVERIFY(window);
    choosePolicies(*window->policiesPanel(), {QStringLiteral("dense")});
    QVERIFY(startRunAndWaitForPoints(*window));
    QElapsedTimer clock;
    clock.start();
    window->close();
    window.reset(); // joins the engine thread
    QVERIFY2(clock.elapsed() < kCloseLimitMs, qPrintable(QString::number(clock.elapsed())));
}

void TestPoliciesPanel::startingAChatStopsTheRun() {
    WindowPtr window = openWindow();
    QVERIFY(window);
    PoliciesPanel* panel = window->policiesPanel();
    choosePolicies(*panel, {QStringLiteral("window")});
    makeRunLong(*panel);
    QSignalSpy finished(panel, &PoliciesPanel::runFinished);
    QSignalSpy replies(window.get(), &MainWindow::replyFinished);
    QVERIFY(startRunAndWaitForPoints(*window));
    QTest::keyClicks(window->chatPanel()->input(), QStringLiteral("Hello"));
    QTest::keyClick(window->chatPanel()->input(), Qt::Key_Return);
    QCOMPARE(waitForRun(finished).state, PolicyRunState::Stopped);
    QVERIFY(!replies.isEmpty() || replies.wait(kWaitMs));
    QCOMPARE(replies.constFirst().at(0).value<GenerationReport>().reason, StopReason::MaxTokens);
}

void TestPoliciesPanel::switchingModelsStopsTheRun() {
    WindowPtr window = openWindow();
    QVERIFY(window);
    PoliciesPanel* panel = window->policiesPanel();
    choosePolicies(*panel, {QStringLiteral("sink:4:streaming")});
    makeRunLong(*panel);
    QSignalSpy finished(panel, &PoliciesPanel::runFinished);
    QSignalSpy loaded(window.get(), &MainWindow::modelReady);
    QVERIFY(startRunAndWaitForPoints(*window));
    window->openModelFile(m_modelPath);
    QCOMPARE(waitForRun(finished).state, PolicyRunState::Stopped);
    QVERIFY(!loaded.isEmpty() || loaded.wait(kWaitMs));
    QVERIFY(panel->runButton()->isEnabled());
}

// "position,policy,nll,rolling_ppl", then every position of every policy, policy by policy.
void TestPoliciesPanel::csvHasOneRowPerPolicyPerPosition() {
    WindowPtr window = openWindow();
    QVERIFY(window);
    const PolicyRunReport report =
        runSmallText(*window, {QStringLiteral("window"), QStringLiteral("sink:1")}, 8);
    QCOMPARE(report.state, PolicyRunState::Finished);
    const QString path = m_dir.filePath(QStringLiteral("out.csv"));
    QVERIFY(window->policiesPanel()->exportCsv(path));
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly | QIODevice::Text));
    const QStringList lines = QString::fromUtf8(file.readAll()).split(u'\n', Qt::SkipEmptyParts);
    const qint64 positions = report.streamTokens - 1;
    QCOMPARE(lines.constFirst(), QStringLiteral("position,policy,nll,rolling_ppl"));
    QCOMPARE(qint64(lines.size()), 1 + 2 * positions);
    const QStringList names = {QStringLiteral("window"), QStringLiteral("sink:1")};
    for (qint64 row = 0; row < 2 * positions; ++row) {
        const QStringList fields = lines.at(row + 1).split(u',');
        QCOMPARE(fields.size(), 4);
        QCOMPARE(fields.at(0).toLongLong(), row % positions);
        QCOMPARE(fields.at(1), names.at(row / positions));
        bool ok = false;
        QVERIFY(std::isfinite(fields.at(2).toDouble(&ok)) && ok);
    }
    const QString png = m_dir.filePath(QStringLiteral("chart.png"));
    QVERIFY(window->policiesPanel()->exportPng(png));
    QVERIFY(!QImage(png).isNull());
}

// A click in the plot area picks the position under it; the strips show every policy there.
void TestPoliciesPanel::chartClickShowsEveryPolicysSlots() {
    WindowPtr window = openWindow();
    QVERIFY(window);
    const PolicyRunReport report =
        runSmallText(*window, {QStringLiteral("dense"), QStringLiteral("sink:4")}, 8);
    QCOMPARE(report.state, PolicyRunState::Finished);
    PoliciesPanel* panel = window->policiesPanel();
    QCOMPARE(panel->slotsView()->query(), qint64(-1));

    QChartView* view = panel->chartView();
    const QRectF plot = view->chart()->plotArea();
    const QPoint centre = view->mapFromScene(view->chart()->mapToScene(plot.center()));
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, centre);
    const qint64 picked = panel->slotsView()->query();
    const qint64 last = report.streamTokens - 2;
    QVERIFY2(qAbs(picked - last / 2) <= 1, qPrintable(QString::number(picked)));
    const QStringList lines = panel->slotsView()->summaryLines();
    QCOMPARE(lines.size(), 2);
    QVERIFY2(lines.at(0).contains(QStringLiteral("slots 0–%1 ← 0–%1").arg(picked)),
             qPrintable(lines.at(0)));
    QVERIFY2(lines.at(1).contains(QStringLiteral("sink 0–3")), qPrintable(lines.at(1)));
}

QTEST_MAIN(TestPoliciesPanel)
#include "test_policies_panel.moc"
