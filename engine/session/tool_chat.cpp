#include "session/tool_chat.h"

#include "memory/budget.h"

#include <algorithm>
#include <chrono>

namespace sinkscope {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

BudgetShape budgetShapeOf(const ModelConfig& c) {
    return BudgetShape{c.nLayer, c.nHeadKv, c.headDim, c.nEmbd, 0, c.nCtxTrain};
}

bool pinsToolBlock(const SessionOptions& options) {
    return options.sinks == SinkMode::ToolsAndBos;
}

// How many of the block's first tokens `previous` holds as pinned sinks, in rows a session under
// `options` would store the same; at most all but the block's last token.
int reusableSinks(const Session& previous, const Model& model, const SessionOptions& options,
                  std::span<const int32_t> tokens) {
    if (&previous.model() != &model || previous.options().kvBits != options.kvBits) return 0;
    const auto& slots = previous.cache().slotInfos();
    const size_t limit = std::min({static_cast<size_t>(previous.cache().sinksUsed()),
                                   tokens.empty() ? size_t{0} : tokens.size() - 1,
                                   static_cast<size_t>(1 + options.sinkCapacity)});
    size_t count = 0;
    while (count < limit && slots[count].kind == SlotKind::Sink &&
           slots[count].position == static_cast<int64_t>(count) &&
           slots[count].token == tokens[count])
        ++count;
    return static_cast<int>(count);
}

} // namespace

SinkBudget sinkBudget(const ModelConfig& config, const SessionOptions& options,
                      const ToolBlock& block) {
    const BudgetShape shape = budgetShapeOf(config);
    SinkBudget budget;
    switch (options.sinks) {
    case SinkMode::ToolsAndBos:
        budget.sinkSlots = 1 + block.sinkCapacity();
        break;
    case SinkMode::FirstN:
        budget.sinkSlots = options.firstN;
        break;
    case SinkMode::None:
        break;
    }
    budget.window = static_cast<int>(effectiveWindow(budgetWindow(shape), options.kvWindow));
    budget.bytesPerPosition = bytesPerPosition(shape);
    budget.kvBytes = budget.bytesPerPosition * (budget.sinkSlots + budget.window);
    budget.budgetBytes = kKvBudgetBytes;
    budget.overBudget = budget.kvBytes > budget.budgetBytes;
    return budget;
}

RebuiltSession rebuildSession(const Model& model, SessionOptions options, const ToolBlock& block,
                              std::span<const int32_t> transcript, const StepCallback& onStep,
                              const BuildProgressCallback& onProgress, const Session* previous) {
    const auto start = Clock::now();
    if (pinsToolBlock(options)) options.sinkCapacity = block.sinkCapacity();
    RebuiltSession rebuilt;
    rebuilt.session = std::make_unique<Session>(model, options);
    Session& session = *rebuilt.session;
    const auto prefillStage = [&](BuildStage stage, std::span<const int32_t> tokens, bool pin) {
        const int total = static_cast<int>(tokens.size());
        if (!onProgress || tokens.empty()) {
            session.prefill(tokens, onStep, pin);
            return;
        }
        if (!onProgress({stage, 0, total})) throw BuildCancelled();
        bool cancelled = false;
        session.prefill(tokens, onStep, pin, [&](size_t done) {
            cancelled = !onProgress({stage, static_cast<int>(done), total});
            return !cancelled;
        });
        if (cancelled) throw BuildCancelled();
    };
    int reused = 0;
    if (pinsToolBlock(options) && previous) {
        reused = reusableSinks(*previous, model, options, block.tokens);
        if (reused > 0) session.adoptSinks(*previous, reused);
    }
    prefillStage(BuildStage::Sinks, std::span(block.tokens).subspan(static_cast<size_t>(reused)),
                 pinsToolBlock(options));
    const size_t window = static_cast<size_t>(session.effectiveWindow());
    const std::span<const int32_t> tail = transcript.last(std::min(window, transcript.size()));
    prefillStage(BuildStage::Transcript, tail, false);
    rebuilt.report.seconds = secondsSince(start);
    rebuilt.report.sinkTokens = static_cast<int>(block.tokens.size());
    rebuilt.report.reusedSinkTokens = reused;
    rebuilt.report.replayedTokens = static_cast<int>(tail.size());
    rebuilt.report.transcriptTokens = static_cast<int>(transcript.size());
    return rebuilt;
}

ToolChat::ToolChat(const Model& model, const SessionOptions& options, ToolSet tools,
                   std::string facts, std::optional<ChatLayout> layout,
                   const ModelTemplateOptions& templateOptions)
    : ToolChat(model, options, std::move(tools), std::move(facts), {}, {}, layout,
               templateOptions) {}

ToolChat::ToolChat(const Model& model, const SessionOptions& options, ToolSet tools,
                   std::string facts, std::span<const Turn> earlier, const StepCallback& onStep,
                   std::optional<ChatLayout> layout, const ModelTemplateOptions& templateOptions,
                   const BuildProgressCallback& onProgress)
    : m_model(model), m_options(options), m_template(layout && *layout != ChatLayout::ModelTemplate
                                                         ? ChatTemplate(model.tokenizer(), *layout)
                                                         : ChatTemplate(model, templateOptions)),
      m_trie(model.tokenizer()), m_conversation(m_template) {
    m_conversation.addRetokenized(earlier);
    pin(options, std::move(tools), std::move(facts), onStep, onProgress);
}

void ToolChat::pin(const SessionOptions& options, ToolSet tools, std::string facts,
                   const StepCallback& onStep, const BuildProgressCallback& onProgress) {
    ToolBlock block = m_template.toolBlock(tools, facts);
    auto grammar = std::make_unique<CallGrammar>(
        tools, callGrammarOptions(m_template, m_template.callFormat()));
    m_conversation.setContext(tools, facts, block);
    if (m_conversation.lastChange().blockChanged)
        block = m_conversation.templateTranscript()->block();
    RebuiltSession rebuilt;
    try {
        rebuilt = rebuildSession(m_model, options, block, m_conversation.transcriptTokens(), onStep,
                                 onProgress, m_session.get());
    } catch (...) {
        m_conversation.setContext(m_tools, m_facts, m_block); // back to the chat as it was
        throw;
    }
    // Only now, with everything built, does the chat switch to the new tools.
    m_options = options;
    m_tools = std::move(tools);
    m_facts = std::move(facts);
    m_block = std::move(block);
    m_grammar = std::move(grammar);
    m_session = std::move(rebuilt.session);
    m_lastRebuild = rebuilt.report;
}

RebuildReport ToolChat::replaceTools(ToolSet tools, std::string facts, const StepCallback& onStep,
                                     const BuildProgressCallback& onProgress) {
    pin(m_options, std::move(tools), std::move(facts), onStep, onProgress);
    return m_lastRebuild;
}

RebuildReport ToolChat::rebuild(const SessionOptions& options, const StepCallback& onStep) {
    pin(options, m_tools, m_facts, onStep);
    return m_lastRebuild;
}

ToolResponse ToolChat::ask(std::string_view userText, const RespondOptions& options,
                           const StepCallback& onStep) {
    const Turn& turn = m_conversation.addUser(userText);
    followRender(onStep);
    return respond(turn.tokens, options, onStep);
}

ToolResponse ToolChat::sendToolResult(const nlohmann::ordered_json& result,
                                      const RespondOptions& options, const StepCallback& onStep) {
    const Turn& turn = m_conversation.addToolResult(result);
    followRender(onStep);
    return respond(turn.tokens, options, onStep);
}

void ToolChat::followRender(const StepCallback& onStep) {
    m_lastTurn = TurnTiming{};
    if (!m_conversation.templateTranscript()) return;
    const TranscriptChange& change = m_conversation.lastChange();
    if (!change.rerendered) return;
    if (change.blockChanged) m_block = m_conversation.templateTranscript()->block();
    const std::vector<int32_t> transcript = m_conversation.transcriptTokens();
    RebuiltSession rebuilt =
        rebuildSession(m_model, m_options, m_block, std::span(transcript).first(change.kept),
                       onStep, {}, m_session.get());
    m_session = std::move(rebuilt.session);
    m_lastRebuild = rebuilt.report;
    m_lastTurn.rerendered = true;
    m_lastTurn.rerenderReason = change.reason;
    m_lastTurn.replayedTokens = rebuilt.report.replayedTokens;
}

std::string_view ToolChat::latestUserText() const {
    const std::vector<Turn>& turns = m_conversation.turns();
    const auto user = std::find_if(turns.rbegin(), turns.rend(),
                                   [](const Turn& turn) { return turn.role == TurnRole::User; });
    return user == turns.rend() ? std::string_view() : std::string_view(user->text);
}

ToolResponse ToolChat::respond(std::span<const int32_t> prompt, const RespondOptions& options,
                               const StepCallback& onStep) {
    m_lastTurn.promptTokens = static_cast<int>(prompt.size());
    auto start = Clock::now();
    const std::span<const float> logits = m_session->prefill(prompt, onStep);
    m_lastTurn.prefillSeconds = secondsSince(start);
    start = Clock::now();
    const CallFormat format = m_template.callFormat();
    const TurnContext context{m_template, m_tools, *m_grammar,      m_trie,
                              m_block,    format,  latestUserText()};
    ToolResponse response = generateAssistantTurn(*m_session, logits, context, options, onStep);
    m_lastTurn.decodeSeconds = secondsSince(start);
    m_lastTurn.assistantTokens = static_cast<int>(response.tokens.size());
    response.prefillTokensPerSecond =
        m_lastTurn.prefillSeconds > 0 ? m_lastTurn.promptTokens / m_lastTurn.prefillSeconds : 0.0;
    m_conversation.addAssistant(response.text, response.functionCalls, response.tokens);
    return response;
}

} // namespace sinkscope
