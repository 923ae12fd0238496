#include "panels/stats_panel.h"

#include "panels/process_memory.h"
#include "worker/display_text.h"

#include <QChart>
#include <QChartView>
#include <QFormLayout>
#include <QLabel>
#include <QLineSeries>
#include <QLocale>
#include <QProgressBar>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>

namespace sinkscope::ui {

namespace {

QString formatBytes(qint64 bytes) {
    return bytes < 0 ? QObject::tr("n/a") : QLocale().formattedDataSize(bytes);
}

views::LiveLabel* figureLabel(QWidget* parent, const char* objectName) {
    auto* label =
        new views::LiveLabel(QObject::tr("1.5 MiB allocated of 2.0 MiB budget (75.0 %)"), parent);
    label->setObjectName(QLatin1String(objectName));
    label->setText(QObject::tr("–"));
    return label;
}

// The axis upper bound: the largest value shown, with headroom, never below `floor`.
double axisTop(const QLineSeries* series, double floor) {
    double top = floor;
    for (const QPointF& point : series->points())
        top = std::max(top, point.y() * 1.15);
    return top;
}

} // namespace

StatsPanel::StatsPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(createFigures());
    layout->addWidget(createChart(), 1);
    m_clock.start();
    m_sampleTimer.setInterval(kSampleIntervalMs);
    connect(&m_sampleTimer, &QTimer::timeout, this, &StatsPanel::sample);
    m_sampleTimer.start();
    sample();
}

QWidget* StatsPanel::createFigures() {
    auto* figures = new QWidget(this);
    m_tokensPerSecond = figureLabel(figures, "tokensPerSecond");
    m_tokensSeen = figureLabel(figures, "tokensSeen");
    m_evictions = figureLabel(figures, "evictions");
    m_window = figureLabel(figures, "window");
    m_sinks = figureLabel(figures, "sinks");
    m_kvBytes = figureLabel(figures, "kvBytes");
    m_kvBar = new QProgressBar(figures);
    m_kvBar->setObjectName(QStringLiteral("kvBudgetBar"));
    m_kvBar->setRange(0, 1000);
    m_kvBar->setTextVisible(false);
    m_rss = figureLabel(figures, "rss");

    auto* form = new QFormLayout(figures);
    form->addRow(tr("Tokens/s"), m_tokensPerSecond);
    form->addRow(tr("Tokens seen"), m_tokensSeen);
    form->addRow(tr("Evictions"), m_evictions);
    form->addRow(tr("Window"), m_window);
    form->addRow(tr("Sinks"), m_sinks);
    form->addRow(tr("KV memory"), m_kvBytes);
    form->addRow(QString(), m_kvBar);
    form->addRow(tr("Process RSS"), m_rss);
    return figures;
}

QWidget* StatsPanel::createChart() {
    m_rateSeries = new QLineSeries;
    m_rateSeries->setName(tr("tokens/s"));
    m_rssSeries = new QLineSeries;
    m_rssSeries->setName(tr("RSS (MiB)"));

    auto* chart = new QChart;
    chart->addSeries(m_rateSeries);
    chart->addSeries(m_rssSeries);
    chart->legend()->setAlignment(Qt::AlignBottom);
    chart->setMargins(QMargins(4, 4, 4, 4));
    chart->setBackgroundRoundness(0);

    m_timeAxis = new QValueAxis;
    m_timeAxis->setTitleText(tr("seconds"));
    m_timeAxis->setLabelFormat(QStringLiteral("%.0f"));
    m_timeAxis->setTickCount(6);
    m_rateAxis = new QValueAxis;
    m_rateAxis->setTitleText(tr("tokens/s"));
    m_rateAxis->setLabelFormat(QStringLiteral("%.0f"));
    m_rssAxis = new QValueAxis;
    m_rssAxis->setTitleText(tr("RSS (MiB)"));
    m_rssAxis->setLabelFormat(QStringLiteral("%.0f"));
    chart->addAxis(m_timeAxis, Qt::AlignBottom);
    chart->addAxis(m_rateAxis, Qt::AlignLeft);
    chart->addAxis(m_rssAxis, Qt::AlignRight);
    m_rateSeries->attachAxis(m_timeAxis);
    m_rateSeries->attachAxis(m_rateAxis);
    m_rssSeries->attachAxis(m_timeAxis);
    m_rssSeries->attachAxis(m_rssAxis);

    auto* view = new QChartView(chart, this);
    view->setObjectName(QStringLiteral("statsChart"));
    view->setRenderHint(QPainter::Antialiasing);
    view->setMinimumHeight(180);
    return view;
}

void StatsPanel::sample() {
    const double now = m_clock.elapsed() / 1000.0;
    const qint64 rss = residentSetBytes();
    m_rss->setText(formatBytes(rss));
    m_rateSeries->append(now, std::max(m_peakRate, m_currentRate));
    m_peakRate = 0;
    m_rssSeries->append(now, rss < 0 ? 0.0 : rss / (1024.0 * 1024.0));
    for (QLineSeries* series : {m_rateSeries, m_rssSeries})
        if (series->count() > kSamplesKept) series->removePoints(0, series->count() - kSamplesKept);
    // At least ten seconds wide, so that the whole-second labels stay distinct.
    const double start = m_rateSeries->at(0).x();
    m_timeAxis->setRange(start, std::max(now, start + 10));
    m_rateAxis->setRange(0, axisTop(m_rateSeries, 10));
    m_rateAxis->applyNiceNumbers();
    m_rssAxis->setRange(0, axisTop(m_rssSeries, 10));
    m_rssAxis->applyNiceNumbers();
}

void StatsPanel::showSnapshot(const StepSnapshot& snapshot) {
    const QLocale locale;
    m_tokensSeen->setText(locale.toString(snapshot.tokensSeen));
    m_evictions->setText(locale.toString(snapshot.evictions));
    m_window->setText(tr("%1 of budget %2 (kv_bits %3)")
                          .arg(snapshot.effectiveWindow)
                          .arg(snapshot.budgetWindow)
                          .arg(snapshot.kvBits));
    m_sinks->setText(tr("%1 of %2 slots used").arg(snapshot.sinksUsed).arg(snapshot.sinkSlots));
    showKvBytes(snapshot.bytesAllocated, snapshot.budgetBytes);
}

void StatsPanel::showSession(const SessionInfo& session) {
    m_window->setText(tr("%1 of budget %2 (kv_bits %3)")
                          .arg(session.effectiveWindow)
                          .arg(session.budgetWindow)
                          .arg(session.settings.kvBits));
    m_sinks->setText(tr("%1 of %2 slots used").arg(session.sinksUsed).arg(session.sinkSlots));
    showKvBytes(session.bytesAllocated, session.budgetBytes);
}

void StatsPanel::showKvBytes(qint64 allocated, qint64 budget) {
    m_kvBytes->setText(tr("%1 allocated of %2 budget (%3 %)")
                           .arg(formatBytes(allocated), formatBytes(budget))
                           .arg(budget > 0 ? 100.0 * allocated / budget : 0.0, 0, 'f', 1));
    m_kvBar->setValue(budget > 0 ? int(std::min<qint64>(1000, allocated * 1000 / budget)) : 0);
}

void StatsPanel::showProgress(const GenerationProgress& progress) {
    m_currentRate = progress.tokensPerSecond();
    m_peakRate = std::max(m_peakRate, m_currentRate);
    m_tokensPerSecond->setText(
        tr("%1 (%2 this reply)")
            .arg(formatRate(m_currentRate), tokenCount(progress.generatedTokens)));
}

void StatsPanel::setGenerating(bool generating) {
    if (!generating) m_currentRate = 0;
}

void StatsPanel::clear() {
    for (views::LiveLabel* label : {m_tokensPerSecond, m_tokensSeen, m_evictions})
        label->setText(tr("–"));
}

QString StatsPanel::tokensSeenText() const {
    return m_tokensSeen->text();
}
QString StatsPanel::evictionsText() const {
    return m_evictions->text();
}
QString StatsPanel::kvBytesText() const {
    return m_kvBytes->text();
}

} // namespace sinkscope::ui
