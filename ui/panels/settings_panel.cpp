#include "panels/settings_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include <limits>
#include <utility>

namespace sinkscope::ui {

namespace {

// Spin boxes commit on Enter, focus loss or arrows, not on every typed digit: each commit may
// rebuild the session.
template <typename Spin> Spin* committingSpin(QWidget* parent, const char* objectName) {
    auto* spin = new Spin(parent);
    spin->setObjectName(QLatin1String(objectName));
    spin->setKeyboardTracking(false);
    return spin;
}

QComboBox* comboWith(QWidget* parent, const char* objectName,
                     const QList<std::pair<QString, QVariant>>& items) {
    auto* combo = new QComboBox(parent);
    combo->setObjectName(QLatin1String(objectName));
    for (const auto& [text, data] : items)
        combo->addItem(text, data);
    return combo;
}

void selectData(QComboBox* combo, const QVariant& data) {
    const int index = combo->findData(data);
    combo->setCurrentIndex(index >= 0 ? index : 0);
}

// Value fields keep their natural width instead of stretching across the tab.
QFormLayout* valueForm(QWidget* group) {
    auto* form = new QFormLayout(group);
    form->setFieldGrowthPolicy(QFormLayout::FieldsStayAtSizeHint);
    return form;
}

QLabel* hint(const QString& text, QWidget* parent) {
    auto* label = new QLabel(text, parent);
    label->setWordWrap(true);
    label->setForegroundRole(QPalette::PlaceholderText);
    return label;
}

} // namespace

SettingsPanel::SettingsPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(createModelGroup());
    layout->addWidget(createCacheGroup());
    layout->addWidget(createSamplingGroup());
    layout->addWidget(createGenerationGroup());
    layout->addWidget(createProbeGroup());
    layout->addStretch();
    setValues(EngineSettings{}, GenerationLimits{});
}

QWidget* SettingsPanel::createModelGroup() {
    auto* group = new QGroupBox(tr("Model"), this);
    m_modelName = new QLabel(tr("No model loaded"), group);
    m_modelName->setObjectName(QStringLiteral("modelName"));
    m_modelName->setWordWrap(true);
    m_modelFile = new QLabel(group);
    m_modelFile->setObjectName(QStringLiteral("modelFile"));
    m_modelFile->setWordWrap(true);
    m_modelFile->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_modelFile->setForegroundRole(QPalette::PlaceholderText);
    m_openModel = new QPushButton(tr("Open GGUF…"), group);
    m_openModel->setObjectName(QStringLiteral("openModelButton"));
    connect(m_openModel, &QPushButton::clicked, this, &SettingsPanel::openModelRequested);

    m_threads = committingSpin<QSpinBox>(group, "threads");
    m_threads->setRange(1, kMaxThreads);
    m_threads->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed); // not the row's width
    m_threads->setToolTip(tr("Threads that split each matrix product (%1 cores here). Every "
                             "count gives the same tokens; changing it keeps the session.")
                              .arg(defaultThreadCount()));
    connect(m_threads, &QSpinBox::valueChanged, this, &SettingsPanel::emitEngineSettings);

    auto* form = new QFormLayout(group);
    form->addRow(m_modelName);
    form->addRow(m_modelFile);
    form->addRow(m_openModel);
    form->setAlignment(m_openModel, Qt::AlignLeft);
    form->addRow(tr("Threads"), m_threads);
    return group;
}

QWidget* SettingsPanel::createCacheGroup() {
    auto* group = new QGroupBox(tr("KV cache (changes rebuild the session)"), this);
    // Made in the order drawn, which is the tab order.
    m_useModelHints = new QCheckBox(group);
    m_useModelHints->setObjectName(QStringLiteral("useModelHints"));
    m_useModelHints->setToolTip(
        tr("A model may carry the window and positions it was trained with in its metadata."));
    m_kvWindow = committingSpin<QSpinBox>(group, "kvWindow");
    m_kvWindow->setRange(0, 1 << 20);
    m_kvWindow->setSpecialValueText(tr("budget"));
    m_kvWindow->setSuffix(tr(" tokens"));
    m_kvWindow->setToolTip(tr("Most recent positions a query attends to; 0 = the budget window."));

    m_kvBits = comboWith(group, "kvBits",
                         {{tr("8-bit (int8 + scales, the budget's unit)"), 8},
                          {tr("16-bit (f16)"), 16},
                          {tr("32-bit (f32, reference)"), 32}});
    m_positions =
        comboWith(group, "positionMode",
                  {{tr("Absolute (true positions)"), int(PositionMode::Absolute)},
                   {tr("Streaming (positions within the cache)"), int(PositionMode::Streaming)}});
    m_sinks = comboWith(group, "sinkMode",
                        {{tr("Tools + BOS"), int(SinkMode::ToolsAndBos)},
                         {tr("First N tokens"), int(SinkMode::FirstN)},
                         {tr("None"), int(SinkMode::None)}});
    m_firstN = committingSpin<QSpinBox>(group, "firstN");
    m_firstN->setRange(0, 4096);
    showModelHints();

    QFormLayout* form = valueForm(group);
    form->addRow(m_useModelHints);
    form->addRow(tr("Window"), m_kvWindow);
    form->addRow(tr("KV precision"), m_kvBits);
    form->addRow(tr("Positions"), m_positions);
    form->addRow(tr("Sinks"), m_sinks);
    form->addRow(tr("First N"), m_firstN);
    form->addRow(
        hint(tr("The conversation is re-prefilled (its last W tokens) after a change."), group));

    connect(m_kvWindow, &QSpinBox::valueChanged, this, &SettingsPanel::emitEngineSettings);
    connect(m_firstN, &QSpinBox::valueChanged, this, &SettingsPanel::emitEngineSettings);
    connect(m_useModelHints, &QCheckBox::toggled, this, &SettingsPanel::emitEngineSettings);
    for (QComboBox* combo : {m_kvBits, m_positions, m_sinks})
        connect(combo, &QComboBox::currentIndexChanged, this, &SettingsPanel::emitEngineSettings);
    return group;
}

QWidget* SettingsPanel::createSamplingGroup() {
    auto* group = new QGroupBox(tr("Sampling"), this);
    m_temperature = committingSpin<QDoubleSpinBox>(group, "temperature");
    m_temperature->setRange(0.0, 2.0);
    m_temperature->setSingleStep(0.05);
    m_temperature->setSpecialValueText(tr("0 (greedy)"));
    m_topK = committingSpin<QSpinBox>(group, "topK");
    m_topK->setRange(0, 1 << 20);
    m_topK->setSpecialValueText(tr("off"));
    m_topP = committingSpin<QDoubleSpinBox>(group, "topP");
    m_topP->setRange(0.0, 1.0);
    m_topP->setSingleStep(0.05);
    m_seed = committingSpin<QSpinBox>(group, "seed");
    m_seed->setRange(0, std::numeric_limits<int>::max());

    QFormLayout* form = valueForm(group);
    form->addRow(tr("Temperature"), m_temperature);
    form->addRow(tr("Top-k"), m_topK);
    form->addRow(tr("Top-p"), m_topP);
    form->addRow(tr("Seed"), m_seed);

    connect(m_temperature, &QDoubleSpinBox::valueChanged, this, &SettingsPanel::emitEngineSettings);
    connect(m_topK, &QSpinBox::valueChanged, this, &SettingsPanel::emitEngineSettings);
    connect(m_topP, &QDoubleSpinBox::valueChanged, this, &SettingsPanel::emitEngineSettings);
    connect(m_seed, &QSpinBox::valueChanged, this, &SettingsPanel::emitEngineSettings);
    return group;
}

QWidget* SettingsPanel::createGenerationGroup() {
    auto* group = new QGroupBox(tr("Replies"), this);
    m_maxNewTokens = committingSpin<QSpinBox>(group, "maxNewTokens");
    m_maxNewTokens->setRange(1, 1 << 20);
    m_calls = comboWith(group, "callPolicy",
                        {{tr("The model decides"), int(CallPolicy::Auto)},
                         {tr("Always call a tool"), int(CallPolicy::Required)},
                         {tr("Never call (text only)"), int(CallPolicy::None)}});
    m_calls->setToolTip(
        tr("Calls are decoded under the pinned tools' grammar: always well-formed."));
    m_stopAtNewline = new QCheckBox(tr("End a reply at the end of its line"), group);
    m_stopAtNewline->setObjectName(QStringLiteral("stopAtNewline"));
    m_ignoreEos = new QCheckBox(
        tr("Keep going past end-of-text, no tool calls (watch the window slide)"), group);
    m_ignoreEos->setObjectName(QStringLiteral("ignoreEos"));
    m_argumentsFromMessage =
        new QCheckBox(tr("Text arguments only copy words of your message"), group);
    m_argumentsFromMessage->setObjectName(QStringLiteral("argumentsFromMessage"));
    m_argumentsFromMessage->setToolTip(
        tr("A call's free-text string arguments must be spans of your latest message"));

    QFormLayout* form = valueForm(group);
    form->addRow(tr("Max new tokens"), m_maxNewTokens);
    form->addRow(tr("Tool calls"), m_calls);
    form->addRow(m_stopAtNewline);
    form->addRow(m_ignoreEos);
    form->addRow(m_argumentsFromMessage);

    connect(m_maxNewTokens, &QSpinBox::valueChanged, this, &SettingsPanel::emitLimits);
    connect(m_stopAtNewline, &QCheckBox::toggled, this, &SettingsPanel::emitLimits);
    connect(m_ignoreEos, &QCheckBox::toggled, this, &SettingsPanel::emitLimits);
    connect(m_argumentsFromMessage, &QCheckBox::toggled, this, &SettingsPanel::emitLimits);
    connect(m_calls, &QComboBox::activated, this, &SettingsPanel::emitLimits);
    return group;
}

QWidget* SettingsPanel::createProbeGroup() {
    auto* group = new QGroupBox(tr("Attention probe"), this);
    m_probeEnabled = new QCheckBox(tr("Record attention weights"), group);
    m_probeEnabled->setObjectName(QStringLiteral("probeEnabled"));
    m_probeLayer = committingSpin<QSpinBox>(group, "probeLayer");
    m_probeLayer->setRange(-1, 0);
    m_probeLayer->setSpecialValueText(tr("mean of all layers"));
    m_probeHead = committingSpin<QSpinBox>(group, "probeHead");
    m_probeHead->setRange(-1, 0);
    m_probeHead->setSpecialValueText(tr("mean of all heads"));

    QFormLayout* form = valueForm(group);
    form->addRow(m_probeEnabled);
    form->addRow(tr("Layer"), m_probeLayer);
    form->addRow(tr("Head"), m_probeHead);

    connect(m_probeEnabled, &QCheckBox::toggled, this, &SettingsPanel::emitEngineSettings);
    connect(m_probeLayer, &QSpinBox::valueChanged, this, &SettingsPanel::emitEngineSettings);
    connect(m_probeHead, &QSpinBox::valueChanged, this, &SettingsPanel::emitEngineSettings);
    return group;
}

void SettingsPanel::setValues(const EngineSettings& engine, const GenerationLimits& limits) {
    m_updating = true;
    m_kvWindow->setValue(engine.kvWindow);
    selectData(m_kvBits, engine.kvBits);
    selectData(m_positions, int(engine.positions));
    m_useModelHints->setChecked(engine.useModelHints);
    selectData(m_sinks, int(engine.sinks));
    m_firstN->setValue(engine.firstN);
    m_threads->setValue(engine.threads);
    m_temperature->setValue(engine.sampler.greedy ? 0.0 : engine.sampler.temperature);
    m_topK->setValue(engine.sampler.topK);
    m_topP->setValue(engine.sampler.topP);
    m_seed->setValue(int(qMin<quint64>(engine.sampler.seed, std::numeric_limits<int>::max())));
    m_maxNewTokens->setValue(limits.maxNewTokens);
    m_stopAtNewline->setChecked(limits.stopAtNewline);
    m_ignoreEos->setChecked(limits.ignoreEos);
    m_argumentsFromMessage->setChecked(limits.argumentsFromMessage);
    selectData(m_calls, int(limits.calls));
    m_probeEnabled->setChecked(engine.probe.enabled);
    // The ranges grow when a model is loaded; keep the stored values until then.
    m_probeLayer->setMaximum(qMax(m_probeLayer->maximum(), engine.probe.layer));
    m_probeHead->setMaximum(qMax(m_probeHead->maximum(), engine.probe.head));
    m_probeLayer->setValue(engine.probe.layer);
    m_probeHead->setValue(engine.probe.head);
    m_updating = false;
    refreshEnabled();
}

EngineSettings SettingsPanel::engineSettings() const {
    EngineSettings settings;
    settings.kvWindow = m_kvWindow->value();
    settings.kvBits = m_kvBits->currentData().toInt();
    settings.positions = PositionMode(m_positions->currentData().toInt());
    settings.useModelHints = m_useModelHints->isChecked();
    settings.sinks = SinkMode(m_sinks->currentData().toInt());
    settings.firstN = m_firstN->value();
    settings.threads = m_threads->value();
    settings.sampler.temperature = float(m_temperature->value());
    settings.sampler.greedy = m_temperature->value() == 0.0;
    settings.sampler.topK = m_topK->value();
    settings.sampler.topP = float(m_topP->value());
    settings.sampler.seed = quint64(m_seed->value());
    settings.probe.enabled = m_probeEnabled->isChecked();
    settings.probe.layer = m_probeLayer->value();
    settings.probe.head = m_probeHead->value();
    return settings;
}

GenerationLimits SettingsPanel::generationLimits() const {
    GenerationLimits limits;
    limits.maxNewTokens = m_maxNewTokens->value();
    limits.stopAtNewline = m_stopAtNewline->isChecked();
    limits.ignoreEos = m_ignoreEos->isChecked();
    limits.argumentsFromMessage = m_argumentsFromMessage->isChecked();
    limits.calls = CallPolicy(m_calls->currentData().toInt());
    return limits;
}

void SettingsPanel::setModel(const ModelInfo& model) {
    m_modelName->setText(tr("<b>%1</b><br>%2 · %3 layers · %4 heads (%5 KV) × %6 · vocab %7 · "
                            "context %8")
                             .arg(model.displayName().toHtmlEscaped(), model.architecture)
                             .arg(model.nLayer)
                             .arg(model.nHead)
                             .arg(model.nHeadKv)
                             .arg(model.headDim)
                             .arg(model.nVocab)
                             .arg(model.nCtxTrain));
    m_modelFile->setText(model.path);
    // A probe beyond this model falls back to the mean, as the worker does.
    m_updating = true;
    if (m_probeLayer->value() >= model.nLayer) m_probeLayer->setValue(-1);
    if (m_probeHead->value() >= model.nHead) m_probeHead->setValue(-1);
    m_probeLayer->setMaximum(qMax(0, model.nLayer - 1));
    m_probeHead->setMaximum(qMax(0, model.nHead - 1));
    m_updating = false;
    m_modelKvWindow = model.suggestedKvWindow;
    m_modelPositions = model.suggestedPositions;
    showModelHints();
    refreshEnabled();
}

void SettingsPanel::showModelHints() {
    QStringList hints;
    if (m_modelKvWindow > 0) hints << tr("window %1").arg(m_modelKvWindow);
    if (!m_modelPositions.isEmpty()) hints << tr("%1 positions").arg(m_modelPositions);
    m_useModelHints->setText(
        hints.isEmpty() ? tr("Use the model's own window and positions (this model has none)")
                        : tr("Use the model's own window and positions (%1)")
                              .arg(hints.join(QStringLiteral(", "))));
}

void SettingsPanel::setBudgetWindow(qint64 budgetWindow) {
    m_kvWindow->setSpecialValueText(tr("budget (%1 tokens)").arg(budgetWindow));
}

void SettingsPanel::emitEngineSettings() {
    refreshEnabled();
    if (!m_updating) emit engineSettingsChanged(engineSettings());
}

void SettingsPanel::emitLimits() {
    if (!m_updating) emit limitsChanged(generationLimits());
}

void SettingsPanel::refreshEnabled() {
    m_firstN->setEnabled(SinkMode(m_sinks->currentData().toInt()) == SinkMode::FirstN);
    // The model's suggestion is in force where it has one: its widget is not the user's to set.
    const bool hinted = m_useModelHints->isChecked();
    m_kvWindow->setEnabled(!(hinted && m_modelKvWindow > 0));
    m_positions->setEnabled(!(hinted && !m_modelPositions.isEmpty()));
    m_probeLayer->setEnabled(m_probeEnabled->isChecked());
    m_probeHead->setEnabled(m_probeEnabled->isChecked());
}

} // namespace sinkscope::ui
