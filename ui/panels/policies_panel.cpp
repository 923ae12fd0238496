#include "panels/policies_panel.h"

#include "panels/policy_slots_view.h"

#include <QButtonGroup>
#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineSeries>
#include <QLocale>
#include <QLogValueAxis>
#include <QMouseEvent>
#include <QProgressBar>
#include <QPushButton>
#include <QRadioButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QValueAxis>

#include <cmath>
#include <fstream>
#include <limits>

namespace sinkscope::ui {

namespace {

constexpr int kDefaultWindow = 128;
constexpr int kMaxRepeat = 1000;
constexpr int kMaxRecomputeEvery = 4096;
constexpr int kProgressScale = 1000; // the bar's range: steps are qint64, the bar's int
constexpr int kTableRowHeight = 22;
// Initial heights of the chart, the figures table (a header and six rows) and the slot strips.
constexpr int kChartHeight = 330;
constexpr int kTableHeight = 30 + 6 * kTableRowHeight;
constexpr int kSlotsHeight = 300;
const QString kStoryResource = QStringLiteral(":/texts/story.txt");

enum Column { NameColumn, PplColumn, TailColumn, RateColumn, KvColumn, ColumnCount };

QString figureText(double value) {
    if (!std::isfinite(value)) return QStringLiteral("—");
    return QLocale().toString(value, 'f', value < 100 ? 3 : 1);
}

// 1, 2 or 5 times a power of ten, giving about four to ten ticks over [0, span].
double niceTickInterval(double span) {
    const double rough = qMax(1.0, span / 5);
    const double power = std::pow(10.0, std::floor(std::log10(rough)));
    for (const double step : {1.0, 2.0, 5.0})
        if (step * power >= rough) return step * power;
    return 10 * power;
}

QString bytesText(qint64 bytes) {
    return QLocale().formattedDataSize(bytes, 1, QLocale::DataSizeTraditionalFormat);
}

} // namespace

PoliciesPanel::PoliciesPanel(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("policiesPanel"));
    auto* controls = new QHBoxLayout;
    controls->addWidget(createTextControls());
    controls->addWidget(createPolicyControls(), 1);

    createChart();
    createTable();
    m_slots = new PolicySlotsView(this);
    auto* slotsScroll = new QScrollArea(this);
    slotsScroll->setObjectName(QStringLiteral("policySlotsScroll"));
    slotsScroll->setWidget(m_slots);
    slotsScroll->setWidgetResizable(true);

    auto* splitter = new QSplitter(Qt::Vertical, this);
    splitter->setObjectName(QStringLiteral("policiesSplitter")); // named: its sizes are restored
    splitter->addWidget(m_chartView);
    splitter->addWidget(m_table);
    splitter->addWidget(slotsScroll);
    splitter->setStretchFactor(0, 1);
    splitter->setSizes({kChartHeight, kTableHeight, kSlotsHeight});
    splitter->setChildrenCollapsible(false);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(createRunControls());
    layout->addWidget(splitter, 1);
    // The run row is made after the views it is drawn above.
    setTabOrder(m_pngButton, m_chartView);
    setTabOrder(m_chartView, m_table);
    setTabOrder(m_table, slotsScroll);
    setState(tr("Pick a text and policies, then Run."));
    updateButtons();
}

PoliciesPanel::~PoliciesPanel() = default;

QString PoliciesPanel::builtInStory() {
    QFile file(kStoryResource);
    if (!file.open(QIODevice::ReadOnly)) return {};
    return QString::fromUtf8(file.readAll());
}

QWidget* PoliciesPanel::createTextControls() {
    auto* box = new QGroupBox(tr("Text"), this);
    m_storySource = new QRadioButton(tr("Built-in story"), box);
    m_storySource->setObjectName(QStringLiteral("policyStorySource"));
    m_fileSource = new QRadioButton(tr("File"), box);
    m_transcriptSourceButton = new QRadioButton(tr("Chat transcript"), box);
    m_storySource->setChecked(true);
    m_fileSource->setEnabled(false); // until a file is chosen
    auto* group = new QButtonGroup(box);
    for (QRadioButton* button : {m_storySource, m_fileSource, m_transcriptSourceButton})
        group->addButton(button);
    auto* open = new QPushButton(tr("Open…"), box);
    open->setObjectName(QStringLiteral("policyOpenButton"));
    connect(open, &QPushButton::clicked, this, &PoliciesPanel::chooseTextFile);
    m_fileLabel = new QLabel(box);
    m_fileLabel->setObjectName(QStringLiteral("policyFileLabel"));

    auto* fileRow = new QHBoxLayout;
    fileRow->addWidget(m_fileSource);
    fileRow->addWidget(open);
    fileRow->addWidget(m_fileLabel, 1);
    auto* layout = new QVBoxLayout(box);
    layout->addWidget(m_storySource);
    layout->addLayout(fileRow);
    layout->addWidget(m_transcriptSourceButton);
    return box;
}

QWidget* PoliciesPanel::createPolicyControls() {
    auto* box = new QGroupBox(tr("Policies"), this);
    auto* grid = new QGridLayout(box);
    const std::vector<Policy> policies = defaultPolicies();
    for (size_t i = 0; i < policies.size(); ++i) {
        auto* check = new QCheckBox(QString::fromStdString(policyName(policies[i])), box);
        check->setObjectName(QStringLiteral("policy %1").arg(i));
        check->setChecked(policies[i].kind != PolicyKind::Recompute); // the slow one is opt-in
        connect(check, &QCheckBox::toggled, this, &PoliciesPanel::updateButtons);
        m_policyBoxes << check;
        grid->addWidget(check, int(i) / 3, int(i) % 3);
    }
    m_repeat = new QSpinBox(box);
    m_repeat->setRange(1, kMaxRepeat);
    m_repeat->setObjectName(QStringLiteral("policyRepeat"));
    m_window = new QSpinBox(box);
    m_window->setObjectName(QStringLiteral("policyWindow"));
    m_window->setRange(1, kDefaultWindow);
    m_window->setValue(kDefaultWindow);
    m_recomputeEvery = new QSpinBox(box);
    m_recomputeEvery->setObjectName(QStringLiteral("policyRecomputeEvery"));
    m_recomputeEvery->setRange(1, kMaxRecomputeEvery);
    m_recomputeEvery->setToolTip(tr("recompute scores every k-th position only (it re-runs W "
                                    "tokens per position)"));
    auto* numbers = new QHBoxLayout;
    numbers->addWidget(new QLabel(tr("Repeat"), box));
    numbers->addWidget(m_repeat);
    numbers->addWidget(new QLabel(tr("Window W"), box));
    numbers->addWidget(m_window);
    numbers->addWidget(new QLabel(tr("Recompute every"), box));
    numbers->addWidget(m_recomputeEvery);
    numbers->addStretch(1);
    grid->addLayout(numbers, 2, 0, 1, 3);
    return box;
}

QWidget* PoliciesPanel::createRunControls() {
    auto* row = new QWidget(this);
    m_runButton = new QPushButton(tr("Run"), row);
    m_runButton->setObjectName(QStringLiteral("policyRunButton"));
    m_stopButton = new QPushButton(tr("Stop"), row);
    m_stopButton->setObjectName(QStringLiteral("policyStopButton"));
    m_progress = new QProgressBar(row);
    m_progress->setRange(0, kProgressScale);
    m_progress->setValue(0);
    m_state = new QLabel(row);
    m_state->setObjectName(QStringLiteral("policyRunState"));
    m_csvButton = new QPushButton(tr("Export CSV…"), row);
    m_csvButton->setObjectName(QStringLiteral("policyCsvButton"));
    m_pngButton = new QPushButton(tr("Export PNG…"), row);
    m_pngButton->setObjectName(QStringLiteral("policyPngButton"));
    connect(m_runButton, &QPushButton::clicked, this, &PoliciesPanel::onRunClicked);
    connect(m_stopButton, &QPushButton::clicked, this, &PoliciesPanel::stopRequested);
    connect(m_csvButton, &QPushButton::clicked, this, &PoliciesPanel::chooseCsvPath);
    connect(m_pngButton, &QPushButton::clicked, this, &PoliciesPanel::choosePngPath);

    auto* layout = new QHBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_runButton);
    layout->addWidget(m_stopButton);
    layout->addWidget(m_progress, 1);
    layout->addWidget(m_state, 2);
    layout->addWidget(m_csvButton);
    layout->addWidget(m_pngButton);
    return row;
}

void PoliciesPanel::createChart() {
    m_chart = new QChart;
    m_chart->setTitle(tr("Rolling perplexity (last %1 positions) vs position").arg(kRollingSpan));
    m_chart->legend()->setAlignment(Qt::AlignBottom);
    m_chart->setMargins(QMargins(4, 4, 4, 4));
    m_xAxis = new QValueAxis(m_chart);
    m_xAxis->setTitleText(tr("position"));
    m_xAxis->setLabelFormat(QStringLiteral("%d"));
    // Ticks at round positions; the range ends at the last position, not at a rounder one.
    m_xAxis->setTickType(QValueAxis::TicksDynamic);
    m_xAxis->setTickAnchor(0);
    m_yAxis = new QLogValueAxis(m_chart);
    m_yAxis->setTitleText(tr("ppl (log)"));
    m_yAxis->setBase(10);
    m_yAxis->setLabelFormat(QStringLiteral("%g"));
    m_yAxis->setMinorTickCount(-1);
    m_chart->addAxis(m_xAxis, Qt::AlignBottom);
    m_chart->addAxis(m_yAxis, Qt::AlignLeft);
    m_chartView = new QChartView(m_chart, this);
    m_chartView->setObjectName(QStringLiteral("policyChart"));
    m_chartView->setRenderHint(QPainter::Antialiasing);
    m_chartView->setMinimumHeight(220);
    m_chartView->viewport()->installEventFilter(this);
}

void PoliciesPanel::createTable() {
    m_table = new QTableWidget(0, ColumnCount, this);
    m_table->setObjectName(QStringLiteral("policyFigures"));
    m_table->setTabKeyNavigation(false); // Tab leaves the table; the arrows move within it
    m_table->setHorizontalHeaderLabels({tr("Policy"), tr("Perplexity"),
                                        tr("Last %1").arg(kTailPositions), tr("Tokens/s"),
                                        tr("KV bytes")});
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(kTableRowHeight);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionMode(QAbstractItemView::NoSelection);
    m_table->setMinimumHeight(kTableRowHeight * 3);
}

void PoliciesPanel::setTranscriptSource(std::function<QString()> source) {
    m_transcriptSource = std::move(source);
}

void PoliciesPanel::setModelReady(bool ready) {
    m_modelReady = ready;
    updateButtons();
}

void PoliciesPanel::setBudgetWindow(qint64 window) {
    m_window->setMaximum(int(qMax<qint64>(1, window)));
}

bool PoliciesPanel::setTextFile(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        setState(tr("Could not read %1: %2").arg(path, file.errorString()));
        return false;
    }
    m_fileText = QString::fromUtf8(file.readAll());
    m_filePath = path;
    m_fileLabel->setText(QFileInfo(path).fileName());
    m_fileLabel->setToolTip(path);
    m_fileSource->setEnabled(true);
    m_fileSource->setChecked(true);
    return true;
}

void PoliciesPanel::setTextSource(TextSource source) {
    switch (source) {
    case TextSource::BuiltInStory:
        m_storySource->setChecked(true);
        return;
    case TextSource::File:
        m_fileSource->setChecked(true);
        return;
    case TextSource::Transcript:
        m_transcriptSourceButton->setChecked(true);
        return;
    }
}

void PoliciesPanel::setPolicyChecked(const QString& name, bool checked) {
    for (QCheckBox* box : m_policyBoxes)
        if (box->text() == name) box->setChecked(checked);
}

QList<Policy> PoliciesPanel::checkedPolicies() const {
    QList<Policy> checked;
    const std::vector<Policy> policies = defaultPolicies();
    for (qsizetype i = 0; i < m_policyBoxes.size(); ++i)
        if (m_policyBoxes.at(i)->isChecked()) checked << policies[size_t(i)];
    return checked;
}

QString PoliciesPanel::sourceText() const {
    if (m_fileSource->isChecked()) return m_fileText;
    if (m_transcriptSourceButton->isChecked())
        return m_transcriptSource ? m_transcriptSource() : QString();
    return builtInStory();
}

PolicyRunRequest PoliciesPanel::currentRequest() const {
    PolicyRunRequest request;
    request.text = sourceText();
    request.repeat = m_repeat->value();
    request.window = m_window->value();
    request.recomputeEvery = m_recomputeEvery->value();
    request.policies = checkedPolicies();
    return request;
}

void PoliciesPanel::onRunClicked() {
    const PolicyRunRequest request = currentRequest();
    if (request.text.trimmed().isEmpty()) {
        setState(tr("The chosen text is empty."));
        return;
    }
    resetResults(request.policies);
    m_runWindow = request.window;
    m_slots->setPolicies(request.policies, request.window);
    setState(tr("Queued…"));
    emit runRequested(request);
}

void PoliciesPanel::beginRun(quint64 run) {
    m_run = run;
    m_progress->setValue(0);
    updateButtons();
}

void PoliciesPanel::resetResults(const QList<Policy>& policies) {
    m_chart->removeAllSeries(); // deletes them
    m_series.clear();
    m_results.clear();
    m_runPolicies = policies;
    m_maxPosition = 0;
    m_minPpl = std::numeric_limits<double>::infinity();
    m_maxPpl = 0;
    for (const Policy& policy : policies) {
        m_results.push_back(PolicyResult{policy, {}, {}, 0, 0, false});
        auto* series = new QLineSeries(m_chart);
        series->setName(QString::fromStdString(policyName(policy)));
        m_chart->addSeries(series);
        series->attachAxis(m_xAxis);
        series->attachAxis(m_yAxis);
        m_series << series;
    }
    m_table->setRowCount(0);
}

void PoliciesPanel::addBatch(const PolicyRunBatch& batch) {
    if (batch.run != m_run || m_run == 0) return;
    std::vector<qsizetype> firstNew(m_results.size());
    for (size_t i = 0; i < m_results.size(); ++i)
        firstNew[i] = qsizetype(m_results[i].nll.size());
    for (const PolicyPoint& point : batch.points) {
        if (point.policy < 0 || size_t(point.policy) >= m_results.size()) continue;
        PolicyResult& result = m_results[size_t(point.policy)];
        result.positions.push_back(point.position);
        result.nll.push_back(point.nll);
    }
    for (size_t i = 0; i < m_results.size(); ++i)
        appendRollingPoints(int(i), firstNew[i]);
    if (batch.stepsTotal > 0)
        m_progress->setValue(int(kProgressScale * batch.stepsDone / batch.stepsTotal));
    setState(tr("Running: %1 of %2 steps").arg(batch.stepsDone).arg(batch.stepsTotal));
}

// The rolling perplexity is recomputed over the whole policy (linear, at most ~30 times a second)
// and only the points past `firstNew` are appended to the series.
void PoliciesPanel::appendRollingPoints(int policy, qsizetype firstNew) {
    const PolicyResult& result = m_results[size_t(policy)];
    if (qsizetype(result.nll.size()) <= firstNew) return;
    const std::vector<double> rolling = rollingPerplexity(result, kRollingSpan);
    QList<QPointF> points;
    for (size_t i = size_t(firstNew); i < rolling.size(); ++i) {
        points << QPointF(double(result.positions[i]), rolling[i]);
        m_minPpl = qMin(m_minPpl, rolling[i]);
        m_maxPpl = qMax(m_maxPpl, rolling[i]);
    }
    // One replace, not append: Qt Charts lays the whole line out again for every point appended,
    // so a fast run's batches cost the GUI thread time quadratic in the points drawn (a run of a
    // small model stopped mid-way kept it busy for minutes).
    QLineSeries* series = m_series.at(policy);
    series->replace(series->points() + points);
    m_maxPosition = qMax<qint64>(m_maxPosition, result.positions.back());
    m_xAxis->setRange(0, double(qMax<qint64>(1, m_maxPosition)));
    m_xAxis->setTickInterval(niceTickInterval(double(m_maxPosition)));
    if (std::isfinite(m_minPpl) && m_maxPpl > 0)
        m_yAxis->setRange(qMax(1.0, m_minPpl * 0.8), qMax(m_minPpl * 1.25, m_maxPpl * 1.25));
}

void PoliciesPanel::finishRun(const PolicyRunReport& report) {
    if (report.run != m_run) return;
    m_run = 0;
    if (report.state != PolicyRunState::Failed) {
        // The report's results are the worker's own record: timings and KV bytes included.
        m_results = report.results;
        m_progress->setValue(report.state == PolicyRunState::Finished ? kProgressScale
                                                                      : m_progress->value());
        fillTable();
        setState(tr("%1 · %2 stream tokens, W = %3")
                     .arg(policyRunStateText(report.state))
                     .arg(report.streamTokens)
                     .arg(m_runWindow));
    } else {
        setState(tr("failed: %1").arg(report.error));
    }
    updateButtons();
    emit runFinished(report);
}

void PoliciesPanel::fillTable() {
    m_table->setRowCount(int(m_results.size()));
    for (size_t row = 0; row < m_results.size(); ++row) {
        const PolicySummary summary = summarizePolicy(m_results[row]);
        const QStringList cells = {summary.name, figureText(summary.perplexity),
                                   figureText(summary.tailPerplexity),
                                   figureText(summary.tokensPerSecond), bytesText(summary.kvBytes)};
        for (int column = 0; column < ColumnCount; ++column) {
            auto* item = new QTableWidgetItem(cells.at(column));
            if (column != NameColumn) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            m_table->setItem(int(row), column, item);
        }
        m_table->item(int(row), KvColumn)->setData(Qt::UserRole, summary.kvBytes);
    }
}

QString PoliciesPanel::stateText() const {
    return m_state->text();
}

void PoliciesPanel::setState(const QString& text) {
    m_state->setText(text);
}

void PoliciesPanel::updateButtons() {
    const bool running = isRunning();
    m_runButton->setEnabled(m_modelReady && !running && !checkedPolicies().isEmpty());
    m_stopButton->setEnabled(running);
    const bool hasResults = !running && !m_results.empty();
    m_csvButton->setEnabled(hasResults);
    m_pngButton->setEnabled(hasResults);
}

void PoliciesPanel::selectPosition(qint64 position) {
    if (m_runPolicies.isEmpty()) return;
    m_slots->setQuery(qBound<qint64>(0, position, m_maxPosition));
}

bool PoliciesPanel::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_chartView->viewport() && event->type() == QEvent::MouseButtonPress) {
        const auto* mouse = static_cast<QMouseEvent*>(event);
        const QPointF scenePoint = m_chartView->mapToScene(mouse->position().toPoint());
        const QPointF chartPoint = m_chart->mapFromScene(scenePoint);
        if (m_chart->plotArea().contains(chartPoint) && !m_series.isEmpty()) {
            const QPointF value = m_chart->mapToValue(chartPoint, m_series.constFirst());
            selectPosition(qRound64(value.x()));
        }
    }
    return QWidget::eventFilter(watched, event);
}

bool PoliciesPanel::exportCsv(const QString& path) const {
    std::ofstream out(QFile::encodeName(path).toStdString());
    if (!out) return false;
    writeStreamCsv(out, m_results);
    return bool(out.flush());
}

bool PoliciesPanel::exportPng(const QString& path) const {
    return m_chartView->grab().save(path, "PNG");
}

void PoliciesPanel::chooseTextFile() {
    auto* dialog =
        new QFileDialog(this, tr("Open Text"), QString(), tr("Text files (*.txt);;All files (*)"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setFileMode(QFileDialog::ExistingFile);
    connect(dialog, &QFileDialog::fileSelected, this, &PoliciesPanel::setTextFile);
    dialog->open();
}

void PoliciesPanel::chooseCsvPath() {
    auto* dialog = new QFileDialog(this, tr("Export CSV"), QStringLiteral("stream-ppl.csv"),
                                   tr("CSV files (*.csv)"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setAcceptMode(QFileDialog::AcceptSave);
    dialog->setDefaultSuffix(QStringLiteral("csv"));
    connect(dialog, &QFileDialog::fileSelected, this, [this](const QString& path) {
        setState(exportCsv(path) ? tr("Saved %1").arg(path) : tr("Could not write %1").arg(path));
    });
    dialog->open();
}

void PoliciesPanel::choosePngPath() {
    auto* dialog = new QFileDialog(this, tr("Export PNG"), QStringLiteral("stream-ppl.png"),
                                   tr("PNG images (*.png)"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setAcceptMode(QFileDialog::AcceptSave);
    dialog->setDefaultSuffix(QStringLiteral("png"));
    connect(dialog, &QFileDialog::fileSelected, this, [this](const QString& path) {
        setState(exportPng(path) ? tr("Saved %1").arg(path) : tr("Could not write %1").arg(path));
    });
    dialog->open();
}

} // namespace sinkscope::ui
