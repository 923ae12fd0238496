#include "worker/engine_types.h"

#include <QFileInfo>
#include <QStringList>
#include <QThread>

namespace sinkscope::ui {

int defaultThreadCount() {
    return qBound(1, QThread::idealThreadCount(), kMaxThreads);
}

bool EngineSettings::sameSession(const EngineSettings& other) const {
    return kvWindow == other.kvWindow && kvBits == other.kvBits && positions == other.positions &&
           sinks == other.sinks && firstN == other.firstN && useModelHints == other.useModelHints &&
           probe.enabled == other.probe.enabled && probe.layer == other.probe.layer &&
           probe.head == other.probe.head;
}

bool EngineSettings::sameSampler(const EngineSettings& other) const {
    return sampler.greedy == other.sampler.greedy &&
           sampler.temperature == other.sampler.temperature && sampler.topK == other.sampler.topK &&
           sampler.topP == other.sampler.topP && sampler.seed == other.sampler.seed;
}

QString ModelInfo::displayName() const {
    return name.isEmpty() ? QFileInfo(path).fileName() : name;
}

qint64 StreamLayout::transcriptIndexOf(qint64 position) const {
    return position < prefixLength ? -1 : position - prefixLength + transcriptBase;
}

qint64 StreamLayout::positionOf(qint64 transcriptIndex) const {
    return transcriptIndex < transcriptBase ? -1 : transcriptIndex - transcriptBase + prefixLength;
}

QString stopReasonText(StopReason reason) {
    switch (reason) {
    case StopReason::EndOfText:
        return QStringLiteral("end of text");
    case StopReason::Newline:
        return QStringLiteral("end of line");
    case StopReason::MaxTokens:
        return QStringLiteral("max tokens");
    case StopReason::ToolCall:
        return QStringLiteral("tool call");
    case StopReason::Stopped:
        return QStringLiteral("stopped");
    case StopReason::Failed:
        break;
    }
    return QStringLiteral("failed");
}

QString callFormatText(const CallFormat& format) {
    QStringList parts;
    QString syntax = QString::fromLatin1(callSyntaxName(format.syntax)).replace(u'-', u' ');
    if (syntax.endsWith(QLatin1String("object"))) syntax += QLatin1String(" (the whole reply)");
    if (!format.open.empty() || !format.close.empty())
        syntax += QStringLiteral(" %1 … %2")
                      .arg(QString::fromStdString(format.open).trimmed(),
                           QString::fromStdString(format.close).trimmed());
    parts << syntax << QString::fromStdString(format.argumentsKey);
    if (format.maxCalls == 1) parts << QStringLiteral("one call");
    return parts.join(QStringLiteral(", "));
}

double GenerationReport::tokensPerSecond() const {
    return decodeSeconds > 0 ? generatedTokens / decodeSeconds : 0.0;
}

double GenerationProgress::tokensPerSecond() const {
    return seconds > 0 ? generatedTokens / seconds : 0.0;
}

bool EngineBatch::isEmpty() const {
    return !sessionReset && rewrittenFrom < 0 && snapshots.isEmpty() && pieces.isEmpty() &&
           !hasProgress;
}

QString loadStageText(LoadStage stage) {
    switch (stage) {
    case LoadStage::Installing:
        return QStringLiteral("Installing the built-in model");
    case LoadStage::Mapping:
        return QStringLiteral("Mapping the file");
    case LoadStage::Checking:
        return QStringLiteral("Checking tensors and metadata");
    case LoadStage::Building:
        return QStringLiteral("Building the session");
    case LoadStage::PrefillingSinks:
        return QStringLiteral("Prefilling the sinks");
    case LoadStage::Replaying:
        return QStringLiteral("Re-prefilling the chat");
    case LoadStage::Finished:
        return QStringLiteral("Loaded");
    case LoadStage::Cancelled:
        break;
    }
    return QStringLiteral("Cancelled");
}

void registerEngineMetaTypes() {
    qRegisterMetaType<StepSnapshot>();
    qRegisterMetaType<EngineSettings>();
    qRegisterMetaType<GenerationLimits>();
    qRegisterMetaType<ModelInfo>();
    qRegisterMetaType<SessionInfo>();
    qRegisterMetaType<ToolsPreview>();
    qRegisterMetaType<GenerationReport>();
    qRegisterMetaType<EngineBatch>();
    qRegisterMetaType<SessionRestore>();
    qRegisterMetaType<RestoreFailure>();
    qRegisterMetaType<LoadProgress>();
    qRegisterMetaType<KvTimelineExported>();
}

} // namespace sinkscope::ui
