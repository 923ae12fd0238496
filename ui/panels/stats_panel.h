// The Stats tab: live tokens/s, KV bytes against the budget, process RSS, tokens seen and
// evictions, with a chart of tokens/s and RSS over the last minute.
#pragma once

#include "views/live_label.h"
#include "worker/engine_types.h"

#include <QElapsedTimer>
#include <QTimer>
#include <QWidget>

class QChart;
class QChartView;
class QLineSeries;
class QProgressBar;
class QValueAxis;

namespace sinkscope::ui {

class StatsPanel : public QWidget {
    Q_OBJECT
public:
    static constexpr int kSampleIntervalMs = 500;
    static constexpr int kSamplesKept = 120; // one minute

    explicit StatsPanel(QWidget* parent = nullptr);

    void showSnapshot(const StepSnapshot& snapshot);
    void showSession(const SessionInfo& session);
    void showProgress(const GenerationProgress& progress);
    void setGenerating(bool generating);
    void clear();

    QString tokensSeenText() const;
    QString evictionsText() const;
    QString kvBytesText() const;

private:
    QWidget* createFigures();
    QWidget* createChart();
    void sample(); // one chart point: tokens/s and RSS now
    void showKvBytes(qint64 allocated, qint64 budget);

    views::LiveLabel* m_tokensPerSecond = nullptr;
    views::LiveLabel* m_tokensSeen = nullptr;
    views::LiveLabel* m_evictions = nullptr;
    views::LiveLabel* m_window = nullptr;
    views::LiveLabel* m_sinks = nullptr;
    views::LiveLabel* m_kvBytes = nullptr;
    QProgressBar* m_kvBar = nullptr;
    views::LiveLabel* m_rss = nullptr;
    QLineSeries* m_rateSeries = nullptr;
    QLineSeries* m_rssSeries = nullptr;
    QValueAxis* m_timeAxis = nullptr;
    QValueAxis* m_rateAxis = nullptr;
    QValueAxis* m_rssAxis = nullptr;
    QTimer m_sampleTimer;
    QElapsedTimer m_clock;
    double m_currentRate = 0; // tokens/s of the running reply, 0 when idle
    double m_peakRate = 0;    // the highest since the last chart point: short replies still show
};

} // namespace sinkscope::ui
