#include "session/assistant_turn.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <stdexcept>

namespace sinkscope {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// p(token) under softmax(logits) at temperature 1, over the allowed tokens (all when empty).
double maskedProbability(std::span<const float> logits, std::span<const uint8_t> allowed,
                         int32_t token) {
    const auto isAllowed = [&](size_t id) { return allowed.empty() || allowed[id] != 0; };
    float highest = -INFINITY;
    for (size_t id = 0; id < logits.size(); ++id)
        if (isAllowed(id)) highest = std::max(highest, logits[id]);
    double total = 0;
    for (size_t id = 0; id < logits.size(); ++id)
        if (isAllowed(id)) total += std::exp(static_cast<double>(logits[id] - highest));
    return std::exp(static_cast<double>(logits[static_cast<size_t>(token)] - highest)) / total;
}

// exp(mean(log p)) of the probabilities added.
class GeometricMean {
public:
    void add(double probability) {
        m_logSum += std::log(std::max(probability, 1e-300));
        ++m_count;
    }
    double value() const { return m_count == 0 ? 0.0 : std::exp(m_logSum / m_count); }

private:
    double m_logSum = 0;
    int m_count = 0;
};

// Per call, the attention that fell on each tool's tokens, summed over the steps that wrote it.
class AttentionTally {
public:
    explicit AttentionTally(const ToolBlock& block)
        : m_block(block), m_toolAt(block.tokens.size(), -1) {
        for (size_t tool = 0; tool < block.tools.size(); ++tool)
            for (int position = block.tools[tool].begin; position < block.tools[tool].end;
                 ++position)
                m_toolAt[static_cast<size_t>(position)] = static_cast<int>(tool);
    }
    void add(int call, const StepSnapshot& step) {
        if (call >= static_cast<int>(m_sums.size())) {
            m_sums.resize(static_cast<size_t>(call) + 1,
                          std::vector<double>(m_block.tools.size(), 0.0));
            m_steps.resize(static_cast<size_t>(call) + 1, 0);
        }
        std::vector<double>& sums = m_sums[static_cast<size_t>(call)];
        for (const SlotView& slot : step.cacheSlots) {
            if (slot.position < 0 || slot.position >= static_cast<int64_t>(m_toolAt.size()))
                continue;
            const int tool = m_toolAt[static_cast<size_t>(slot.position)];
            if (tool >= 0) sums[static_cast<size_t>(tool)] += slot.attention;
        }
        ++m_steps[static_cast<size_t>(call)];
    }
    // The mean shares of call `call`; an unmeasured call gets the last measured one's.
    CallAttribution result(int call) const {
        CallAttribution attribution;
        if (m_sums.empty()) return attribution;
        const auto index = static_cast<size_t>(std::min(call, static_cast<int>(m_sums.size()) - 1));
        attribution.steps = m_steps[index];
        double total = 0;
        for (size_t tool = 0; tool < m_block.tools.size(); ++tool) {
            const double share =
                attribution.steps > 0 ? m_sums[index][tool] / attribution.steps : 0.0;
            attribution.tools.push_back({m_block.tools[tool].name, share});
            total += share;
        }
        attribution.other = std::max(0.0, 1.0 - total);
        return attribution;
    }

private:
    const ToolBlock& m_block;
    std::vector<int> m_toolAt;               // [block tokens] position -> tool, -1 for the framing
    std::vector<std::vector<double>> m_sums; // [calls][tools]
    std::vector<int> m_steps;                // [calls]
};

class TurnGenerator {
public:
    TurnGenerator(Session& session, std::span<const float> logits, const TurnContext& context,
                  const RespondOptions& options, const StepCallback& onStep)
        : m_session(session), m_logits(logits), m_context(context), m_options(options),
          m_onStep(onStep), m_sampler(options.sampler),
          m_allowed(static_cast<size_t>(context.trie.vocabularySize()), 1),
          m_attention(context.block) {
        const ChatTemplate& chat = context.chat;
        const CallFormat& format = context.format;
        m_markers = callMarkerTokens(chat.tokenizer(), format);
        m_endOfTurnToken = chat.endOfTurnToken();
        m_callsAllowed = options.calls != CallPolicy::None && !context.tools.tools.empty();
        if (!options.ignoreEndOfText)
            m_endTokens.push_back(m_endOfTurnToken.value_or(chat.tokenizer().eos()));
        std::vector<int32_t> markers{chat.tokenizer().bos()};
        for (const ChatMarker marker :
             {ChatMarker::ImStart, ChatMarker::ImEnd, ChatMarker::Tools, ChatMarker::ToolsEnd,
              ChatMarker::ToolCall, ChatMarker::ToolCallEnd, ChatMarker::ToolResult,
              ChatMarker::ToolResultEnd})
            if (const std::optional<int32_t> id = chat.markerToken(marker)) markers.push_back(*id);
        for (const std::optional<int32_t> id : {m_markers.open, m_markers.close})
            if (id) markers.push_back(*id);
        for (const int32_t id : markers) {
            const bool mayWrite = (id == m_markers.open && m_callsAllowed) ||
                                  (id == m_endOfTurnToken && !options.ignoreEndOfText);
            if (!mayWrite) m_blockedInText.push_back(id);
        }
        if (options.ignoreEndOfText) m_blockedInText.push_back(chat.tokenizer().eos());
        if (!m_markers.open && !format.open.empty())
            for (int32_t id = 0; id < context.trie.vocabularySize(); ++id)
                if (context.trie.bytes(id).find(format.open.back()) != std::string::npos)
                    m_markerEnders.push_back(id);
    }

    ToolResponse run() {
        const auto start = Clock::now();
        if (m_options.calls == CallPolicy::Required && m_callsAllowed) {
            for (const int32_t token : callOpening())
                if (!feed(token)) break;
            openCall();
        }
        while (m_phase != Phase::Done && !m_stopped) {
            const bool constrainedCall = m_phase == Phase::Call && m_options.constrained;
            if (m_written >= m_options.maxTokens && !constrainedCall)
                break; // calls under the grammar always finish
            if (m_phase == Phase::Text)
                writeText();
            else if (m_options.constrained)
                writeConstrainedCall();
            else
                writeFreeCall();
        }
        if (!m_stopped) closeTurn();
        finish(secondsSince(start));
        return std::move(m_response);
    }

private:
    enum class Phase { Text, Call, Done };

    bool feed(int32_t token) {
        m_logits = m_session.feed(token);
        m_response.tokens.push_back(token);
        m_snapshot.reset();
        if (m_onStep) {
            m_snapshot = m_session.snapshot();
            m_snapshot->generated = true; // forced tokens too: the turn is the assistant's
            m_stopped = !m_onStep(*m_snapshot);
        }
        return !m_stopped;
    }

    // What opens a call as the assistant writes it: the open marker's token, or its text.
    std::vector<int32_t> callOpening() const {
        if (m_markers.open) return {*m_markers.open};
        if (m_context.format.open.empty()) return {};
        return m_context.chat.tokenizer().encode(m_context.format.open, false, false);
    }

    // A token from the allowed ones; `probability` its share of them (for the confidence).
    int32_t sample(std::span<const uint8_t> allowed, double& probability) {
        const int32_t token = m_sampler.sample(m_logits, allowed);
        if (token < 0) throw std::logic_error("the sampler found no allowed token");
        probability = maskedProbability(m_logits, allowed, token);
        ++m_written;
        return token;
    }
    int32_t sample(std::span<const uint8_t> allowed, GeometricMean& confidence) {
        double probability = 0;
        const int32_t token = sample(allowed, probability);
        confidence.add(probability);
        return token;
    }

    bool opensBareCall(int32_t token) const {
        return m_context.format.syntax == CallSyntax::BareObject && m_response.tokens.empty() &&
               m_context.trie.bytes(token).starts_with('{');
    }

    // BareObject, first token: one that begins with '{' opens the call, so it must begin a valid
    // call (constrained) or is masked out (calls not allowed).
    void maskBareOpening() {
        std::vector<uint8_t> callStart;
        if (m_callsAllowed && m_options.constrained) {
            callStart.resize(m_allowed.size());
            CallDecoder(m_context.grammar, m_context.trie, m_markers, m_endTokens)
                .allowedTokens(callStart);
        }
        for (int32_t id = 0; id < m_context.trie.vocabularySize(); ++id)
            if (opensBareCall(id))
                m_allowed[static_cast<size_t>(id)] =
                    m_callsAllowed && (callStart.empty() || callStart[static_cast<size_t>(id)]);
    }

    // Free text: everything but BOS, the template's markers, and an open marker written inside a
    // token (or at all, when calls are not allowed).
    void writeText() {
        std::fill(m_allowed.begin(), m_allowed.end(), 1);
        for (const int32_t id : m_blockedInText)
            m_allowed[static_cast<size_t>(id)] = 0;
        const std::string_view marker = m_context.format.open;
        if (!marker.empty()) {
            const std::string tail =
                m_text.substr(m_text.size() - std::min(m_text.size(), marker.size() - 1));
            for (const int32_t id : m_markerEnders) {
                const std::string joined = tail + m_context.trie.bytes(id);
                const size_t found = joined.find(marker);
                if (found != std::string::npos &&
                    (!m_callsAllowed || found + marker.size() != joined.size()))
                    m_allowed[static_cast<size_t>(id)] = 0;
            }
        }
        if (m_context.format.syntax == CallSyntax::BareObject && m_response.tokens.empty())
            maskBareOpening();
        double probability = 0;
        const int32_t token = sample(m_allowed, probability);
        if (opensBareCall(token)) {
            writeBareOpening(token, probability);
            return;
        }
        m_textConfidence.add(probability);
        if (token == m_context.chat.tokenizer().eos()) {
            m_phase = Phase::Done;
            return;
        }
        if (!feed(token)) return;
        if (token == m_endOfTurnToken) {
            m_endOfTurnWritten = true;
            m_phase = Phase::Done;
            return;
        }
        m_text += m_context.chat.tokenizer().piece(token);
        if (token == m_markers.open) {
            openCall();
        } else if (!m_markers.open && !marker.empty() && m_text.ends_with(marker)) {
            m_text.resize(m_text.size() - marker.size());
            openCall();
        }
    }

    // The first token of a BareObject call, sampled among the text's tokens.
    void writeBareOpening(int32_t token, double probability) {
        openCall();
        m_callConfidence.add(probability);
        tallyAttention(0);
        ++m_response.callTokens;
        if (m_options.constrained) {
            if (!m_decoder->accept(token))
                throw std::logic_error("the call decoder refused a token it allowed");
        } else {
            m_callText += m_context.chat.tokenizer().piece(token);
        }
        feed(token);
    }

    void openCall() {
        m_phase = Phase::Call;
        m_callOpened = true;
        m_decoder.emplace(m_context.grammar, m_context.trie, m_markers, m_endTokens);
        if (m_options.argumentsFromMessage)
            m_decoder->restrictStringsToSpansOf(m_context.userMessage);
    }

    void tallyAttention(int call) {
        if (!m_session.options().probe.enabled) return;
        if (!m_snapshot) m_snapshot = m_session.snapshot();
        m_attention.add(call, *m_snapshot);
    }

    void writeConstrainedCall() {
        CallDecoder& decoder = *m_decoder;
        const int budgetLeft = std::min(m_options.maxCallTokens - m_response.callTokens,
                                        m_options.maxTokens - m_written);
        if (!decoder.wrappingUp() && budgetLeft <= decoder.tokensToFinish()) decoder.wrapUp();
        if (decoder.isComplete()) { // wrapped up where the reply may stop: after a block
            m_callClosed = true;
            m_phase = Phase::Done;
            return;
        }
        const auto maskStart = Clock::now();
        const int allowedCount = decoder.allowedTokens(m_allowed);
        m_maskSeconds += secondsSince(maskStart);
        ++m_masks;
        if (allowedCount == 0) {
            m_response.error = "constrained decoding reached a dead end: no token of the "
                               "vocabulary continues the call";
            m_phase = Phase::Done;
            return;
        }
        tallyAttention(decoder.callIndex());
        const int32_t token = sample(m_allowed, m_callConfidence);
        if (!decoder.accept(token))
            throw std::logic_error("the call decoder refused a token it allowed");
        m_response.callWrappedUp = decoder.wrappingUp();
        if (decoder.isComplete()) {
            m_callClosed = true;
            m_phase = Phase::Done;
        }
        if (decoder.endToken()) { // the turn ended after a block
            if (token == m_context.chat.tokenizer().eos()) return;
            m_endOfTurnWritten = token == m_endOfTurnToken;
        } else {
            ++m_response.callTokens;
        }
        feed(token);
    }

    // Unconstrained: whatever comes until the close marker (BareObject: the end of the turn);
    // parsed afterwards.
    void writeFreeCall() {
        tallyAttention(0);
        const int32_t token = sample({}, m_callConfidence);
        if (token == m_context.chat.tokenizer().eos()) {
            m_callClosed = m_context.format.close.empty();
            m_phase = Phase::Done;
            return;
        }
        ++m_response.callTokens;
        if (!feed(token)) return;
        const std::string_view closing = m_context.format.close;
        if (token == m_endOfTurnToken) {
            m_endOfTurnWritten = true;
            m_callClosed = closing.empty();
            m_phase = Phase::Done;
        } else if (token == m_markers.close) {
            m_callClosed = true;
            m_phase = Phase::Done;
        } else {
            m_callText += m_context.chat.tokenizer().piece(token);
            if (!m_markers.close && !closing.empty() && m_callText.ends_with(closing)) {
                m_callText.resize(m_callText.size() - closing.size());
                m_callClosed = true;
                m_phase = Phase::Done;
            }
        }
    }

    void closeTurn() {
        for (const int32_t token : m_context.chat.assistantClosing(m_endOfTurnWritten).tokens)
            if (!feed(token)) return;
    }

    void finish(double seconds) {
        ToolResponse& r = m_response;
        r.constrained = m_options.constrained;
        r.text = m_text;
        r.decodeTokensPerSecond =
            seconds > 0 ? static_cast<double>(r.tokens.size()) / seconds : 0.0;
        r.maskMicrosPerToken = m_masks > 0 ? m_maskSeconds * 1e6 / m_masks : 0.0;
        if (!m_callOpened) {
            r.type = ResponseType::Text;
            r.confidence = m_textConfidence.value();
            return;
        }
        r.type = ResponseType::Call;
        r.confidence = m_callConfidence.value();
        r.callText = m_options.constrained ? m_decoder->text() : m_callText;
        const std::string& closing = m_context.format.close;
        if (m_options.constrained && !closing.empty() && r.callText.ends_with(closing))
            r.callText.resize(r.callText.size() - closing.size()); // the grammar read it too
        if (!m_callClosed) {
            if (r.error.empty())
                r.error = m_stopped ? "stopped before the call was closed"
                                    : "the call was not closed within " +
                                          std::to_string(m_options.maxTokens) + " tokens";
            return;
        }
        CallsParseResult parsed = parseCalls(r.callText, m_context.tools, m_context.format);
        r.functionCalls = std::move(parsed.calls);
        for (const std::string& problem : parsed.errors)
            r.error += (r.error.empty() ? "" : "; ") + problem;
        if (m_session.options().probe.enabled)
            for (size_t call = 0; call < r.functionCalls.size(); ++call)
                r.attribution.push_back(
                    m_attention.result(m_options.constrained ? static_cast<int>(call) : 0));
    }

    Session& m_session;
    std::span<const float> m_logits; // [n_vocab] the next token's
    const TurnContext& m_context;
    const RespondOptions& m_options;
    const StepCallback& m_onStep;
    Sampler m_sampler;
    std::vector<uint8_t> m_allowed; // [n_vocab]
    CallMarkerTokens m_markers;     // the format's markers that are tokens
    std::optional<int32_t> m_endOfTurnToken;
    std::vector<int32_t> m_endTokens; // what ends the turn after a TaggedObjects block
    bool m_callsAllowed = false;
    std::vector<int32_t> m_blockedInText; // BOS and the markers free text may not write
    std::vector<int32_t> m_markerEnders;  // tokens with the open marker's last byte: the only
                                          // ones that can finish it where it is text
    Phase m_phase = Phase::Text;
    ToolResponse m_response;
    std::optional<StepSnapshot> m_snapshot; // after the last token fed, when taken
    std::optional<CallDecoder> m_decoder;
    AttentionTally m_attention;
    GeometricMean m_textConfidence;
    GeometricMean m_callConfidence;
    std::string m_text;     // the assistant's text outside the call
    std::string m_callText; // unconstrained: the call as written
    int m_written = 0;      // tokens sampled
    bool m_stopped = false;
    bool m_endOfTurnWritten = false;
    bool m_callOpened = false;
    bool m_callClosed = false;
    double m_maskSeconds = 0;
    int m_masks = 0;
};

} // namespace

const char* callPolicyName(CallPolicy policy) {
    switch (policy) {
    case CallPolicy::Auto:
        return "auto";
    case CallPolicy::Required:
        return "required";
    case CallPolicy::None:
        break;
    }
    return "none";
}

CallGrammarOptions callGrammarOptions(const ChatTemplate& chat, const CallFormat& format) {
    return callGrammarOptions(format, callMarkerTokens(chat.tokenizer(), format));
}

ToolResponse generateAssistantTurn(Session& session, std::span<const float> logits,
                                   const TurnContext& context, const RespondOptions& options,
                                   const StepCallback& onStep) {
    return TurnGenerator(session, logits, context, options, onStep).run();
}

} // namespace sinkscope
