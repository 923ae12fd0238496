// Value types that cross between the GUI thread and the engine worker. Plain copies: the GUI never
// holds a pointer into engine memory.
#pragma once

#include "sampler.h"
#include "session.h"
#include "snapshot.h"

#include <QList>
#include <QMetaType>
#include <QString>
#include <QStringList>

namespace sinkscope::ui {

// What the user sets about the engine. Cache fields rebuild the session when they change; sampler
// fields only replace the sampler.
struct EngineSettings {
    int kvWindow = 256; // 0 = the budget window
    int kvBits = 8;     // 8, 16 or 32
    PositionMode positions = PositionMode::Absolute;
    SinkMode sinks = SinkMode::ToolsAndBos;
    int firstN = 4;                     // for SinkMode::FirstN
    AttentionProbe probe{true, -1, -1}; // layer/head -1 = the mean
    SamplerOptions sampler;

    bool sameSession(const EngineSettings& other) const; // no rebuild needed between the two
    bool sameSampler(const EngineSettings& other) const;
};

// Per-reply limits, sent with each message.
struct GenerationLimits {
    int maxNewTokens = 128;
    bool stopAtNewline = true; // the plain-text chat ends a reply at the end of its line
    bool ignoreEos = false;    // keep sampling past end-of-text
};

struct ModelInfo {
    QString path;
    QString name;
    QString architecture;
    int nVocab = 0;
    int nEmbd = 0;
    int nLayer = 0;
    int nHead = 0;
    int nHeadKv = 0;
    int headDim = 0;
    int nCtxTrain = 0;
    qint64 parameters = 0;
    qint64 fileBytes = 0;

    QString displayName() const; // the GGUF name, or the file name when it has none
};

// Where the conversation sits in the session's token stream: positions [0, prefixLength) hold BOS
// and the sink block; position p >= prefixLength holds transcript token
// p - prefixLength + transcriptBase (after a rebuild only the transcript's tail is re-prefilled).
struct StreamLayout {
    qint64 prefixLength = 0;
    qint64 transcriptBase = 0;

    qint64 transcriptIndexOf(qint64 position) const; // -1 inside the prefix
    qint64 positionOf(qint64 transcriptIndex) const; // -1 when no longer in the stream
};

// A session as built by the worker, and why it was (re)built.
struct SessionInfo {
    QString reason;            // "Model loaded", "Tools applied", "Settings changed", "New chat"
    double seconds = 0;        // time taken to build and re-prefill
    int reprefilledTokens = 0; // transcript tokens fed again after the prefix
    StreamLayout layout;
    QStringList prefixPieces; // [prefixLength] the text of each prefix token (BOS shown as <s>)
    EngineSettings settings;
    qint64 effectiveWindow = 0;
    qint64 budgetWindow = 0;
    int sinkSlots = 0;
    int sinksUsed = 0;
    qint64 bytesAllocated = 0;
    qint64 budgetBytes = 0;
    int chatEpoch = 0;
};

enum class StopReason { EndOfText, Newline, MaxTokens, Stopped, Failed };

QString stopReasonText(StopReason reason);

struct GenerationReport {
    quint64 ticket = 0;
    StopReason reason = StopReason::Failed;
    int promptTokens = 0;
    int generatedTokens = 0;
    double prefillSeconds = 0;
    double decodeSeconds = 0;
    qint64 tokensSeen = 0;
    qint64 evictions = 0;

    double tokensPerSecond() const; // decode speed; 0 when nothing was generated
};

// The text of one token fed to the session as part of the conversation.
struct StreamPiece {
    qint64 transcriptIndex = 0;
    QString text;           // may be empty: a partial UTF-8 character completes in a later piece
    bool generated = false; // sampled (false: the user's turn)
    int chatEpoch = 0;
};

struct GenerationProgress {
    int generatedTokens = 0;
    double seconds = 0;
    double tokensPerSecond() const;
};

// What the GUI takes from the worker at each refresh: everything posted since the last one.
struct EngineBatch {
    bool sessionReset = false;     // a new session started: earlier snapshots belong to the old one
    StreamLayout layout;           // valid when sessionReset
    QList<StepSnapshot> snapshots; // the newest ones, oldest first (older ones may be dropped)
    QList<StreamPiece> pieces;     // every piece, in order
    bool hasProgress = false;
    GenerationProgress progress;

    bool isEmpty() const;
};

void registerEngineMetaTypes();

} // namespace sinkscope::ui

Q_DECLARE_METATYPE(sinkscope::StepSnapshot)
Q_DECLARE_METATYPE(sinkscope::ui::EngineSettings)
Q_DECLARE_METATYPE(sinkscope::ui::GenerationLimits)
Q_DECLARE_METATYPE(sinkscope::ui::ModelInfo)
Q_DECLARE_METATYPE(sinkscope::ui::SessionInfo)
Q_DECLARE_METATYPE(sinkscope::ui::GenerationReport)
Q_DECLARE_METATYPE(sinkscope::ui::EngineBatch)
