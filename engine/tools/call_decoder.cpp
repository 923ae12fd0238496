#include "tools/call_decoder.h"

#include <algorithm>

namespace sinkscope {

std::optional<int32_t> specialMarkerToken(const Tokenizer& tokenizer, std::string_view text) {
    if (text.empty()) return std::nullopt;
    const std::optional<int32_t> id = tokenizer.findToken(text);
    if (!id) return std::nullopt;
    const TokenType type = tokenizer.type(*id);
    if (type != TokenType::Control && type != TokenType::UserDefined) return std::nullopt;
    return id;
}

CallMarkerTokens callMarkerTokens(const Tokenizer& tokenizer, const CallFormat& format) {
    return {specialMarkerToken(tokenizer, format.open),
            specialMarkerToken(tokenizer, format.close)};
}

CallGrammarOptions callGrammarOptions(const CallFormat& format, const CallMarkerTokens& markers) {
    CallGrammarOptions options;
    options.format = format;
    options.leadingSpace = format.syntax == CallSyntax::JsonList;
    if (format.syntax == CallSyntax::BareObject) return options;
    if (!markers.close) options.terminator = format.close;
    if (format.syntax == CallSyntax::TaggedObjects && !markers.open)
        options.reopening = format.open;
    return options;
}

CallDecoder::CallDecoder(const CallGrammar& grammar, const TokenTrie& trie,
                         std::optional<int32_t> terminatorToken)
    : CallDecoder(grammar, trie, CallMarkerTokens{std::nullopt, terminatorToken}, {}) {}

CallDecoder::CallDecoder(const CallGrammar& grammar, const TokenTrie& trie,
                         const CallMarkerTokens& markers, std::vector<int32_t> endTokens)
    : m_trie(trie), m_format(grammar.format()),
      m_terminatorToken(grammar.format().syntax == CallSyntax::JsonList ? markers.close
                                                                        : std::nullopt),
      m_markers(markers), m_endTokens(std::move(endTokens)), m_matcher(grammar),
      m_levels(static_cast<size_t>(trie.maxTokenBytes()) + 1, m_matcher) {}

int CallDecoder::allowedTokens(std::span<uint8_t> allowed) {
    std::fill(allowed.begin(), allowed.end(), 0);
    if (isComplete()) return 0;
    if (closeTokenDue()) { // only the terminator token is left
        allowed[static_cast<size_t>(*m_terminatorToken)] = 1;
        return 1;
    }
    if (m_wrappingUp) {
        const std::string_view rest = std::string_view(m_wrapUpText).substr(m_wrapUpDone);
        // the completion written, what is left is a marker token (a stop is complete)
        return rest.empty() ? allowMarkersAndEnds(allowed) : allowPrefixesOf(rest, allowed);
    }
    const int64_t room = m_matcher.plainStringRoom();
    const int count = room >= 0 ? allowInStringBody(room, allowed) : allowByTrieWalk(allowed);
    return count + allowMarkersAndEnds(allowed);
}

int CallDecoder::allowMarkersAndEnds(std::span<uint8_t> allowed) const {
    int count = 0;
    const auto allow = [&](int32_t id) {
        if (id < 0 || id >= m_trie.vocabularySize() || allowed[static_cast<size_t>(id)]) return;
        allowed[static_cast<size_t>(id)] = 1;
        ++count;
    };
    if (m_markers.open && m_matcher.awaits(CallMarker::Open)) allow(*m_markers.open);
    if (m_markers.close && m_matcher.awaits(CallMarker::Close)) allow(*m_markers.close);
    if (m_matcher.mayStop() && !m_matcher.isComplete())
        for (const int32_t id : m_endTokens)
            allow(id);
    return count;
}

bool CallDecoder::closeTokenDue() const {
    return m_terminatorToken && !m_terminated && m_matcher.isComplete();
}

bool CallDecoder::isEndToken(int32_t token) const {
    return std::ranges::find(m_endTokens, token) != m_endTokens.end();
}

int CallDecoder::allowInStringBody(int64_t room, std::span<uint8_t> allowed) const {
    int count = 0;
    for (int32_t id = 0; id < m_trie.vocabularySize(); ++id) {
        const int32_t characters = m_trie.plainCharacters(id);
        if (characters > 0 && characters <= room) {
            allowed[static_cast<size_t>(id)] = 1;
            ++count;
        }
    }
    for (const int32_t id : m_trie.otherTokens()) {
        CallMatcher trial = m_matcher;
        if (trial.acceptBytes(m_trie.bytes(id))) {
            allowed[static_cast<size_t>(id)] = 1;
            ++count;
        }
    }
    return count;
}

int CallDecoder::allowByTrieWalk(std::span<uint8_t> allowed) {
    struct Visit {
        int32_t node;
        int32_t nextEdge;
    };
    std::vector<Visit> path{{0, 0}}; // path[d]: the node at depth d, matched by m_levels[d]
    m_levels[0] = m_matcher;
    int count = 0;
    while (!path.empty()) {
        const size_t depth = path.size() - 1;
        const TokenTrie::Node& node = m_trie.node(path[depth].node);
        if (path[depth].nextEdge == node.edgeCount) {
            path.pop_back();
            continue;
        }
        const TokenTrie::Edge& edge = m_trie.edge(node.firstEdge + path[depth].nextEdge++);
        CallMatcher& next = m_levels[depth + 1];
        next = m_levels[depth];
        if (!next.accept(edge.byte)) continue;
        count += allowNodeTokens(edge.child, allowed);
        path.push_back({edge.child, 0});
    }
    return count;
}

int CallDecoder::allowPrefixesOf(std::string_view text, std::span<uint8_t> allowed) const {
    int count = 0;
    int32_t node = 0;
    for (const char c : text) {
        const TokenTrie::Node& current = m_trie.node(node);
        const auto byte = static_cast<uint8_t>(c);
        const TokenTrie::Edge* found = nullptr;
        for (int32_t e = 0; e < current.edgeCount && !found; ++e)
            if (m_trie.edge(current.firstEdge + e).byte == byte)
                found = &m_trie.edge(current.firstEdge + e);
        if (!found) break;
        node = found->child;
        count += allowNodeTokens(node, allowed);
    }
    return count;
}

int CallDecoder::allowNodeTokens(int32_t node, std::span<uint8_t> allowed) const {
    const TokenTrie::Node& n = m_trie.node(node);
    for (int32_t t = 0; t < n.tokenCount; ++t)
        allowed[static_cast<size_t>(m_trie.tokenAt(n.firstToken + t))] = 1;
    return n.tokenCount;
}

bool CallDecoder::accept(int32_t token) {
    if (isComplete() || token < 0 || token >= m_trie.vocabularySize()) return false;
    if (m_terminatorToken && token == *m_terminatorToken) {
        if (!m_matcher.isComplete()) return false;
        m_terminated = true;
        return true;
    }
    const bool completionWritten = !m_wrappingUp || m_wrapUpDone == m_wrapUpText.size();
    for (const CallMarker marker : {CallMarker::Open, CallMarker::Close}) {
        const std::optional<int32_t> id =
            marker == CallMarker::Open ? m_markers.open : m_markers.close;
        if (!id || token != *id) continue;
        if (!completionWritten || !m_matcher.acceptMarker(marker)) return false;
        m_text += marker == CallMarker::Open ? m_format.open : m_format.close;
        if (m_wrappingUp) {
            m_wrapUpText = m_matcher.completion();
            m_wrapUpDone = 0;
        }
        return true;
    }
    if (isEndToken(token)) {
        if (!m_matcher.mayStop() || m_matcher.isComplete()) return false;
        m_endToken = token;
        return true;
    }
    const std::string& bytes = m_trie.bytes(token);
    if (bytes.empty()) return false;
    if (m_wrappingUp && std::string_view(m_wrapUpText).substr(m_wrapUpDone, bytes.size()) != bytes)
        return false;
    if (!m_matcher.acceptBytes(bytes)) return false;
    m_text += bytes;
    if (m_wrappingUp) m_wrapUpDone += bytes.size();
    return true;
}

void CallDecoder::restrictStringsToSpansOf(std::string_view text) {
    m_spanSource = std::make_shared<const SpanSource>(text);
    m_matcher.restrictStringsToSpans(m_spanSource->view());
}

void CallDecoder::wrapUp() {
    if (m_wrappingUp) return;
    m_wrappingUp = true;
    m_wrapUpText = m_matcher.completion();
    m_wrapUpDone = 0;
}

int CallDecoder::tokensToFinish() const {
    CallMatcher matcher = m_matcher;
    std::string bytes = m_wrappingUp ? m_wrapUpText.substr(m_wrapUpDone) : matcher.completion();
    size_t tokens = 0;
    for (;;) { // at most a close and an open marker on the way (TaggedObjects)
        tokens += bytes.size();
        matcher.acceptBytes(bytes);
        const CallMarker due =
            matcher.awaits(CallMarker::Open) ? CallMarker::Open : CallMarker::Close;
        if (!matcher.acceptMarker(due)) break;
        ++tokens;
        bytes = matcher.completion();
    }
    const bool terminatorDue = m_terminatorToken && !m_terminated;
    return static_cast<int>(tokens) + (terminatorDue ? 1 : 0);
}

bool CallDecoder::isComplete() const {
    if (m_endToken) return true;
    if (m_terminatorToken) return m_terminated;
    if (m_matcher.isComplete()) return true;
    return m_matcher.mayStop() && (m_wrappingUp || m_endTokens.empty());
}

} // namespace sinkscope
