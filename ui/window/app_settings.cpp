#include "window/app_settings.h"

#include "model_files/recent_models.h"

#include <QSettings>

namespace sinkscope::ui {

namespace {

QSettings openSettings() {
    return QSettings(QStringLiteral("Sinkscope"), QStringLiteral("sinkscope"));
}

int validKvBits(int bits) {
    return bits == 16 || bits == 32 ? bits : 8;
}

WindowState loadWindowState(QSettings& settings) {
    WindowState state;
    state.geometry = settings.value("window/geometry").toByteArray();
    settings.beginGroup("window/splitters");
    for (const QString& name : settings.childKeys())
        state.splitters.insert(name, settings.value(name).toByteArray());
    settings.endGroup();
    state.tab = settings.value("window/tab", -1).toInt();
    return state;
}

void saveWindowState(QSettings& settings, const WindowState& state) {
    settings.setValue("window/geometry", state.geometry);
    settings.remove("window/splitters");
    for (auto splitter = state.splitters.cbegin(); splitter != state.splitters.cend(); ++splitter)
        settings.setValue("window/splitters/" + splitter.key(), splitter.value());
    settings.setValue("window/tab", state.tab);
}

} // namespace

std::optional<PositionMode> positionModeNamed(const QString& name) {
    for (const PositionMode mode : {PositionMode::Absolute, PositionMode::Streaming})
        if (name == QLatin1String(positionModeName(mode))) return mode;
    return std::nullopt;
}

std::optional<SinkMode> sinkModeNamed(const QString& name) {
    for (const SinkMode mode : {SinkMode::ToolsAndBos, SinkMode::FirstN, SinkMode::None})
        if (name == QLatin1String(sinkModeName(mode))) return mode;
    return std::nullopt;
}

std::optional<CallPolicy> callPolicyNamed(const QString& name) {
    for (const CallPolicy policy : {CallPolicy::Auto, CallPolicy::Required, CallPolicy::None})
        if (name == QLatin1String(callPolicyName(policy))) return policy;
    return std::nullopt;
}

AppSettings AppSettings::load() {
    QSettings settings = openSettings();
    const AppSettings defaults;
    AppSettings loaded;
    loaded.modelPath = settings.value("model/path").toString();
    loaded.recentModels = cleanRecentModels(settings.value("model/recent").toStringList());
    loaded.window = loadWindowState(settings);
    loaded.toolsText = settings.value("tools/text").toString();
    loaded.toolsInSystemTurn = settings.value("tools/inSystemTurn", false).toBool();
    loaded.restoreLastSession =
        settings.value("session/restoreAtStart", defaults.restoreLastSession).toBool();
    loaded.sendWithCtrlEnter =
        settings.value("chat/sendWithCtrlEnter", defaults.sendWithCtrlEnter).toBool();

    EngineSettings& engine = loaded.engine;
    engine.kvWindow = qMax(0, settings.value("cache/kvWindow", defaults.engine.kvWindow).toInt());
    engine.kvBits = validKvBits(settings.value("cache/kvBits", defaults.engine.kvBits).toInt());
    engine.positions = positionModeNamed(settings.value("cache/positions").toString())
                           .value_or(PositionMode::Absolute);
    engine.useModelHints =
        settings.value("cache/useModelHints", defaults.engine.useModelHints).toBool();
    engine.sinks =
        sinkModeNamed(settings.value("cache/sinks").toString()).value_or(SinkMode::ToolsAndBos);
    engine.firstN = qMax(0, settings.value("cache/firstN", defaults.engine.firstN).toInt());
    engine.probe.enabled = settings.value("probe/enabled", defaults.engine.probe.enabled).toBool();
    engine.probe.layer =
        qMax(-1, settings.value("probe/layer", defaults.engine.probe.layer).toInt());
    engine.probe.head = qMax(-1, settings.value("probe/head", defaults.engine.probe.head).toInt());
    engine.threads =
        qBound(1, settings.value("engine/threads", defaults.engine.threads).toInt(), kMaxThreads);

    SamplerOptions& sampler = engine.sampler;
    sampler.temperature = qMax(
        0.0f, settings.value("sampler/temperature", defaults.engine.sampler.temperature).toFloat());
    sampler.greedy = sampler.temperature == 0.0f;
    sampler.topK = qMax(0, settings.value("sampler/topK", defaults.engine.sampler.topK).toInt());
    sampler.topP =
        qBound(0.0f, settings.value("sampler/topP", defaults.engine.sampler.topP).toFloat(), 1.0f);
    sampler.seed =
        settings.value("sampler/seed", quint64(defaults.engine.sampler.seed)).toULongLong();

    loaded.limits.maxNewTokens =
        qMax(1, settings.value("generation/maxNewTokens", defaults.limits.maxNewTokens).toInt());
    loaded.limits.stopAtNewline =
        settings.value("generation/stopAtNewline", defaults.limits.stopAtNewline).toBool();
    loaded.limits.ignoreEos =
        settings.value("generation/ignoreEos", defaults.limits.ignoreEos).toBool();
    loaded.limits.calls = callPolicyNamed(settings.value("generation/calls").toString())
                              .value_or(defaults.limits.calls);
    loaded.limits.argumentsFromMessage =
        settings.value("generation/argumentsFromMessage", defaults.limits.argumentsFromMessage)
            .toBool();
    return loaded;
}

void AppSettings::save() const {
    QSettings settings = openSettings();
    settings.setValue("model/path", modelPath);
    settings.setValue("model/recent", recentModels);
    saveWindowState(settings, window);
    settings.setValue("tools/text", toolsText);
    settings.setValue("tools/inSystemTurn", toolsInSystemTurn);
    settings.setValue("session/restoreAtStart", restoreLastSession);
    settings.setValue("chat/sendWithCtrlEnter", sendWithCtrlEnter);
    settings.setValue("cache/kvWindow", engine.kvWindow);
    settings.setValue("cache/kvBits", engine.kvBits);
    settings.setValue("cache/positions", QString::fromLatin1(positionModeName(engine.positions)));
    settings.setValue("cache/useModelHints", engine.useModelHints);
    settings.setValue("cache/sinks", QString::fromLatin1(sinkModeName(engine.sinks)));
    settings.setValue("cache/firstN", engine.firstN);
    settings.setValue("probe/enabled", engine.probe.enabled);
    settings.setValue("probe/layer", engine.probe.layer);
    settings.setValue("probe/head", engine.probe.head);
    settings.setValue("engine/threads", engine.threads);
    settings.setValue("sampler/temperature", engine.sampler.temperature);
    settings.setValue("sampler/topK", engine.sampler.topK);
    settings.setValue("sampler/topP", engine.sampler.topP);
    settings.setValue("sampler/seed", quint64(engine.sampler.seed));
    settings.setValue("generation/maxNewTokens", limits.maxNewTokens);
    settings.setValue("generation/stopAtNewline", limits.stopAtNewline);
    settings.setValue("generation/ignoreEos", limits.ignoreEos);
    settings.setValue("generation/calls", QString::fromLatin1(callPolicyName(limits.calls)));
    settings.setValue("generation/argumentsFromMessage", limits.argumentsFromMessage);
}

} // namespace sinkscope::ui
