// The Policies tab: the attention-sink experiment run live. The user picks a text (a file, the
// built-in story or the chat transcript), the repeat count, the window W and the policies; Run
// asks the engine worker (runRequested), which streams NLLs back in batches. The chart shows the
// rolling perplexity of each policy vs position (log scale), the table the final figures, and a
// click on the chart the mask row and KV slots of every policy at that position.
#pragma once

#include "worker/policy_run.h"

#include <QWidget>

#include <functional>
#include <vector>

class QCheckBox;
class QLabel;
class QLineSeries;
class QChart;
class QChartView;
class QLogValueAxis;
class QProgressBar;
class QPushButton;
class QRadioButton;
class QSpinBox;
class QTableWidget;
class QValueAxis;

namespace sinkscope::ui {

class PolicySlotsView;

class PoliciesPanel : public QWidget {
    Q_OBJECT
public:
    enum class TextSource { BuiltInStory, File, Transcript };

    explicit PoliciesPanel(QWidget* parent = nullptr);
    ~PoliciesPanel() override;

    // The built-in evaluation text (a story of our own, in the resources).
    static QString builtInStory();

    // The chat transcript's text, asked for when a run starts from it.
    void setTranscriptSource(std::function<QString()> source);
    void setModelReady(bool ready);
    void setBudgetWindow(qint64 window); // the largest W the model allows

    // Reads `path` as the text (as if chosen with Open…); false and a message when unreadable.
    bool setTextFile(const QString& path);
    void setTextSource(TextSource source);
    void setPolicyChecked(const QString& name, bool checked); // "dense", "sink:4", …
    QList<Policy> checkedPolicies() const;
    PolicyRunRequest currentRequest() const; // what Run would ask for

    // The engine's side: the run id of the request just queued, its batches and its end.
    void beginRun(quint64 run);
    void addBatch(const PolicyRunBatch& batch);
    void finishRun(const PolicyRunReport& report);

    bool isRunning() const { return m_run != 0; }
    const std::vector<PolicyResult>& results() const { return m_results; }
    QString stateText() const;
    void selectPosition(qint64 position); // as if the chart were clicked there
    bool exportCsv(const QString& path) const;
    bool exportPng(const QString& path) const;

    QPushButton* runButton() const { return m_runButton; }
    QPushButton* stopButton() const { return m_stopButton; }
    QTableWidget* table() const { return m_table; }
    QChartView* chartView() const { return m_chartView; }
    QProgressBar* progressBar() const { return m_progress; }
    PolicySlotsView* slotsView() const { return m_slots; }

signals:
    void runRequested(const sinkscope::ui::PolicyRunRequest& request);
    void stopRequested();
    void runFinished(const sinkscope::ui::PolicyRunReport& report);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    QWidget* createTextControls();
    QWidget* createPolicyControls();
    QWidget* createRunControls();
    void createChart();
    void createTable();
    void chooseTextFile();
    void chooseCsvPath();
    void choosePngPath();
    void onRunClicked();
    void resetResults(const QList<Policy>& policies);
    void appendRollingPoints(int policy, qsizetype firstNew);
    void fillTable();
    void updateButtons();
    void setState(const QString& text);
    QString sourceText() const;

    std::function<QString()> m_transcriptSource;
    QString m_fileText;
    QString m_filePath;
    bool m_modelReady = false;
    quint64 m_run = 0;                   // the run in progress; 0 when none
    QList<Policy> m_runPolicies;         // the policies of the shown results
    int m_runWindow = 0;                 // W of the shown results
    std::vector<PolicyResult> m_results; // [policies] what has arrived so far
    qint64 m_maxPosition = 0;
    double m_minPpl = 0;
    double m_maxPpl = 0;

    QRadioButton* m_storySource = nullptr;
    QRadioButton* m_fileSource = nullptr;
    QRadioButton* m_transcriptSourceButton = nullptr;
    QLabel* m_fileLabel = nullptr;
    QSpinBox* m_repeat = nullptr;
    QSpinBox* m_window = nullptr;
    QSpinBox* m_recomputeEvery = nullptr;
    QList<QCheckBox*> m_policyBoxes; // defaultPolicies() order
    QPushButton* m_runButton = nullptr;
    QPushButton* m_stopButton = nullptr;
    QPushButton* m_csvButton = nullptr;
    QPushButton* m_pngButton = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_state = nullptr;
    QChart* m_chart = nullptr;
    QChartView* m_chartView = nullptr;
    QValueAxis* m_xAxis = nullptr;
    QLogValueAxis* m_yAxis = nullptr;
    QList<QLineSeries*> m_series; // [policies]
    QTableWidget* m_table = nullptr;
    PolicySlotsView* m_slots = nullptr;
};

} // namespace sinkscope::ui
