// Value types that cross between the GUI thread and the engine worker. Plain copies: the GUI never
// holds a pointer into engine memory.
#pragma once

#include "chat/conversation.h"
#include "chat/template_family.h"
#include "memory/snapshot.h"
#include "session/assistant_turn.h"
#include "session/sampler.h"
#include "session/session.h"
#include "tools/call_format.h"

#include <QList>
#include <QMetaType>
#include <QPair>
#include <QString>
#include <QStringList>

namespace sinkscope::ui {

// The number of cores, within [1, kMaxThreads].
int defaultThreadCount();

// What the user sets about the engine. Cache fields rebuild the session when they change; sampler
// fields only replace the sampler.
struct EngineSettings {
    int kvWindow = 256; // 0 = the budget window
    int kvBits = 8;     // 8, 16 or 32
    PositionMode positions = PositionMode::Absolute;
    SinkMode sinks = SinkMode::ToolsAndBos;
    int firstN = 4; // for SinkMode::FirstN
    // A model's own suggested window and positions (its sinkscope.* metadata) replace kvWindow and
    // positions, each where the model has one.
    bool useModelHints = true;
    AttentionProbe probe{true, -1, -1}; // layer/head -1 = the mean
    SamplerOptions sampler;
    // Threads that split the forward pass (1 to kMaxThreads); a change keeps the session.
    int threads = defaultThreadCount();

    bool sameSession(const EngineSettings& other) const; // no rebuild needed between the two
    bool sameSampler(const EngineSettings& other) const;
};

// Per-reply limits, sent with each message.
struct GenerationLimits {
    int maxNewTokens = 128;
    bool stopAtNewline = true;           // a reply in the plain layout ends at the end of its line
    bool ignoreEos = false;              // free-running text past end-of-text, no tool calls
    CallPolicy calls = CallPolicy::Auto; // whether the assistant may, must or must not call
    // String arguments are spans of the user's message (RespondOptions::argumentsFromMessage)
    bool argumentsFromMessage = false;
};

// How the chat frames the tools and the calls (chat/chat_template.h), for the tools tab, the
// banner and the model information.
struct TemplateInfo {
    TemplateFamily family = TemplateFamily::None; // the layout's (ChatTemplate::family())
    bool toolsPinned = true;          // false: the template writes the tools in the user turn
    bool hasSystemTurnOption = false; // the template can write them in the system turn instead
    bool toolsInSystemTurn = false;   // that option is in force
    QString notice;                   // one line, "" when there is nothing to tell
    CallFormat callFormat;            // how the model writes its calls
};

// "tagged objects <tool_call> … </tool_call>, arguments", "bare object, parameters, one call".
QString callFormatText(const CallFormat& format);

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
    int suggestedKvWindow = 0;              // from the model's metadata; 0 = none
    QString suggestedPositions;             // "absolute", "streaming" or "" (none)
    QList<QPair<QString, int>> weightTypes; // ggml type name and tensor count, most tensors first
    QString vocabularyModel;                // tokenizer.ggml.model: "llama" (SentencePiece), "gpt2"
    QString preTokenizer;                   // tokenizer.ggml.pre, "" when absent
    QString chatLayout;           // the layout the chat writes: "needle", "template", "plain"
    qint64 chatTemplateBytes = 0; // tokenizer.chat_template's size; 0 when absent
    TemplateInfo chatTemplate;    // as the first session's chat uses it

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

// One pinned tool's tokens: positions [begin, end) of the tool block, which with tools+BOS sinks
// are also its sink slots.
struct ToolSpan {
    QString name;
    qint64 begin = 0;
    qint64 end = 0;
    qint64 count() const { return end - begin; }
};

// The KV bytes of the tool block's sinks and the window, against the budget (engine SinkBudget).
struct SinkBudgetInfo {
    int sinkSlots = 0;
    qint64 window = 0;
    qint64 bytesPerPosition = 0;
    qint64 kvBytes = 0;
    qint64 budgetBytes = 0;
    bool overBudget = false;
};

// What edited tools would pin, measured before Apply (the tools tab's preview).
struct ToolsPreview {
    quint64 ticket = 0;
    QString compactJson; // the tools measured
    int sinksUsed = 0;   // BOS and the block's tokens
    QList<ToolSpan> toolSpans;
    SinkBudgetInfo sinkBudget;
};

// One call of a reply, for its card: arguments as compact JSON, and how the attention of its
// tokens spread over the pinned tools (tool_calls.h: CallAttribution).
struct ToolCallView {
    QString name;
    QString argumentsJson;
    QList<QPair<QString, double>> toolShares; // [declared tools] (tool, share)
    double otherShare = 0;
    bool attributed = false; // measured (the attention probe was on)
};

// One turn of the conversation as the engine keeps it (chat/conversation.h Turn), without its
// tokens: what a saved session holds and what rebuilds it.
struct TurnView {
    TurnRole role = TurnRole::User;
    QString text; // the user's text, the assistant's text outside calls, or the result's JSON
    QList<ToolCallView> calls; // an assistant turn's calls (name and arguments only)
    int tokenCount = 0;        // its tokens in the transcript; 0 when the template renders it
};

// A session as built by the worker, and why it was (re)built.
struct SessionInfo {
    QString reason;            // "Model loaded", "Tools applied", "Settings changed", "New chat",
                               // "Template option changed", "Session restored"
    double seconds = 0;        // time taken to build and re-prefill
    int reprefilledTokens = 0; // transcript tokens fed again after the prefix
    int reusedSinkTokens = 0;  // tool-block tokens taken over from the replaced session's cache
    StreamLayout layout;
    QStringList prefixPieces; // [prefixLength] the text of each prefix token (BOS shown as <s>)
    QList<qint32> prefixIds;  // [prefixLength] their token ids
    EngineSettings settings;
    qint64 effectiveWindow = 0;
    PositionMode positions = PositionMode::Absolute; // in force (the model's or the settings')
    qint64 budgetWindow = 0;
    int sinkSlots = 0;
    int sinksUsed = 0;
    qint64 bytesAllocated = 0;
    qint64 budgetBytes = 0;
    int chatEpoch = 0;
    QString chatLayout; // "needle", "template" or "plain"
    TemplateInfo chatTemplate;
    QList<ToolSpan> toolSpans; // in declaration order
    SinkBudgetInfo sinkBudget;
    qint64 transcriptTokens = 0;  // the whole conversation, kept
    bool retokenized = false;     // another model: the transcript's tokens were made anew
    QList<TurnView> conversation; // every turn, in order
    // A saved session restored (SessionRestore): the transcript's pieces, token by token, to be
    // shown in place of the chat; each turn's tokenCount of them in turn order. Also listed
    // after a retokenisation, for the readable chat to place the turns' text on the new tokens.
    bool restored = false;
    QStringList transcriptPieces;
    QList<qint32> transcriptIds; // [transcriptPieces] their token ids
};

enum class StopReason { EndOfText, Newline, MaxTokens, ToolCall, Stopped, Failed };

QString stopReasonText(StopReason reason);

struct GenerationReport {
    quint64 ticket = 0;
    bool toolResultTurn = false; // the turn answered a tool result instead of a user message
    StopReason reason = StopReason::Failed;
    int promptTokens = 0;
    int generatedTokens = 0;
    double prefillSeconds = 0;
    double decodeSeconds = 0;
    qint64 tokensSeen = 0;
    qint64 evictions = 0;
    QList<ToolCallView> calls;
    double confidence = 0; // of the call (or of the text), tool_calls.h
    QString callError;     // a call that did not parse or validate
    // The template rendered earlier turns differently (tool_chat.h TurnTiming): the window was
    // re-prefilled from the new render before the prompt.
    bool rerendered = false;
    QString rerenderReason;
    int replayedTokens = 0;
    QList<TurnView> conversation; // every turn after this one, in order

    double tokensPerSecond() const; // decode speed; 0 when nothing was generated
};

// The text of one token fed to the session as part of the conversation.
struct StreamPiece {
    qint64 transcriptIndex = 0;
    QString text;           // may be empty: a partial UTF-8 character completes in a later piece
    bool generated = false; // sampled (false: the user's turn)
    // A control token of the vocabulary (template markers, end of turn): the readable chat hides
    // it, the token view shows it.
    bool control = false;
    qint32 tokenId = -1;
    qint64 position = -1; // in the session's stream, where its key is written
    int chatEpoch = 0;
};

struct GenerationProgress {
    int generatedTokens = 0;
    double seconds = 0;
    double tokensPerSecond() const;
};

// What the GUI takes from the worker at each refresh: everything posted since the last one.
struct EngineBatch {
    bool sessionReset = false; // a new session started: earlier snapshots belong to the old one
    StreamLayout layout;       // valid when sessionReset
    // A turn's render rewrote the transcript from this index on (-1: it did not): the tokens
    // shown from there belong to the old render, and the pieces that follow start there.
    qint64 rewrittenFrom = -1;
    QList<StepSnapshot> snapshots; // the newest ones, oldest first (older ones may be dropped)
    QList<StreamPiece> pieces;     // every piece, in order
    bool hasProgress = false;
    GenerationProgress progress;

    bool isEmpty() const;
};

// A saved session to rebuild (session_file.h): the model, the settings and tools, the turns. The
// worker builds it whole or changes nothing.
struct SessionRestore {
    QString modelPath;
    QString modelSha256; // lowercase hex; "" = take the file as it is (the user chose it)
    EngineSettings settings;
    QString toolsJson; // compact JSON array, as the tools editor applies it
    bool toolsInSystemTurn = false;
    QList<TurnView> turns;
};

// Why a SessionRestore changed nothing.
struct RestoreFailure {
    enum class Problem { ModelMissing, ModelChanged, Failed, Cancelled };
    Problem problem = Problem::Failed;
    QString modelPath; // the model the session names
    QString message;   // one or two sentences for the user
};

// What File > Export KV Timeline's write reported (EngineWorker::exportKvTimeline).
struct KvTimelineExported {
    QString path;
    qint64 rows = 0;    // the writes in the file
    qint64 dropped = 0; // the session's first writes left out (the timeline's cap)
    QString error;      // "" when written
};

// A load's stages in order; a load skips those it does not need (only the built-in model is
// installed, a tools change maps no file). Each load ends with Finished or Cancelled.
enum class LoadStage {
    Installing,      // writing the built-in model to its data folder
    Mapping,         // mapping the model file and reading its header
    Checking,        // its metadata, tokenizer and tensors
    Building,        // the chat: the template, the tool block, the cache
    PrefillingSinks, // the tool block prefilled and pinned (done / total tokens)
    Replaying,       // the conversation's last W tokens re-prefilled (done / total tokens)
    Finished,        // loaded, or failed (reported on its own)
    Cancelled,       // stopped by Cancel (or by the window closing): nothing was changed
};

// What a load does: open a model, restore a saved session, or pin edited tools.
enum class LoadKind { Model, Session, Tools };

struct LoadProgress {
    quint64 ticket = 0; // EngineClient's load ticket
    LoadKind kind = LoadKind::Model;
    QString name; // the model's or the session's file name; "" for tools
    LoadStage stage = LoadStage::Mapping;
    int done = 0;  // tokens, for PrefillingSinks and Replaying
    int total = 0; // 0: the stage has no measure

    bool ended() const { return stage == LoadStage::Finished || stage == LoadStage::Cancelled; }
};

// "Prefilling the sinks", "Mapping the file", …
QString loadStageText(LoadStage stage);

void registerEngineMetaTypes();

} // namespace sinkscope::ui

Q_DECLARE_METATYPE(sinkscope::StepSnapshot)
Q_DECLARE_METATYPE(sinkscope::ui::EngineSettings)
Q_DECLARE_METATYPE(sinkscope::ui::GenerationLimits)
Q_DECLARE_METATYPE(sinkscope::ui::ModelInfo)
Q_DECLARE_METATYPE(sinkscope::ui::SessionInfo)
Q_DECLARE_METATYPE(sinkscope::ui::ToolsPreview)
Q_DECLARE_METATYPE(sinkscope::ui::GenerationReport)
Q_DECLARE_METATYPE(sinkscope::ui::EngineBatch)
Q_DECLARE_METATYPE(sinkscope::ui::SessionRestore)
Q_DECLARE_METATYPE(sinkscope::ui::RestoreFailure)
Q_DECLARE_METATYPE(sinkscope::ui::LoadProgress)
Q_DECLARE_METATYPE(sinkscope::ui::KvTimelineExported)
