// The Settings tab: the model file, the KV cache (changes rebuild the session), sampling, reply
// limits and the attention probe. Emits the whole settings value on every committed edit.
#pragma once

#include "worker/engine_types.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSpinBox;

namespace sinkscope::ui {

class SettingsPanel : public QWidget {
    Q_OBJECT
public:
    explicit SettingsPanel(QWidget* parent = nullptr);

    // Shows these values without emitting anything.
    void setValues(const EngineSettings& engine, const GenerationLimits& limits);
    EngineSettings engineSettings() const;
    GenerationLimits generationLimits() const;
    // The loaded model: its name and file, and the probe's layer and head ranges.
    void setModel(const ModelInfo& model);
    void setBudgetWindow(qint64 budgetWindow);

signals:
    void engineSettingsChanged(const sinkscope::ui::EngineSettings& settings);
    void limitsChanged(const sinkscope::ui::GenerationLimits& limits);
    void openModelRequested();

private:
    QWidget* createModelGroup();
    QWidget* createCacheGroup();
    QWidget* createSamplingGroup();
    QWidget* createGenerationGroup();
    QWidget* createProbeGroup();
    void emitEngineSettings();
    void emitLimits();
    void refreshEnabled();
    void showModelHints(); // the check box names the loaded model's suggestions

    QLabel* m_modelName = nullptr;
    QLabel* m_modelFile = nullptr;
    QPushButton* m_openModel = nullptr;
    QSpinBox* m_kvWindow = nullptr;
    QComboBox* m_kvBits = nullptr;
    QComboBox* m_positions = nullptr;
    QCheckBox* m_useModelHints = nullptr;
    int m_modelKvWindow = 0; // the loaded model's suggestions (0 / "": none)
    QString m_modelPositions;
    QComboBox* m_sinks = nullptr;
    QSpinBox* m_firstN = nullptr;
    QDoubleSpinBox* m_temperature = nullptr;
    QSpinBox* m_topK = nullptr;
    QDoubleSpinBox* m_topP = nullptr;
    QSpinBox* m_seed = nullptr;
    QSpinBox* m_maxNewTokens = nullptr;
    QCheckBox* m_stopAtNewline = nullptr;
    QCheckBox* m_ignoreEos = nullptr;
    QCheckBox* m_argumentsFromMessage = nullptr;
    QComboBox* m_calls = nullptr;
    QSpinBox* m_threads = nullptr;
    QCheckBox* m_probeEnabled = nullptr;
    QSpinBox* m_probeLayer = nullptr;
    QSpinBox* m_probeHead = nullptr;
    bool m_updating = false; // setValues in progress: edits are not the user's
};

} // namespace sinkscope::ui
