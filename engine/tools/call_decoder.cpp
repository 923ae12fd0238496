#include "tools/call_decoder.h"

#include <algorithm>

namespace sinkscope {

CallDecoder::CallDecoder(const CallGrammar& grammar, const TokenTrie& trie,
                         std::optional<int32_t> terminatorToken)
    : m_trie(trie), m_terminatorToken(terminatorToken), m_matcher(grammar),
      m_levels(static_cast<size_t>(trie.maxTokenBytes()) + 1, m_matcher) {}

int CallDecoder::allowedTokens(std::span<uint8_t> allowed) {
    std::fill(allowed.begin(), allowed.end(), 0);
    if (isComplete()) return 0;
    if (m_matcher.isComplete()) { // only the terminator token is left
        allowed[static_cast<size_t>(*m_terminatorToken)] = 1;
        return 1;
    }
    if (m_wrappingUp)
        return allowPrefixesOf(std::string_view(m_wrapUpText).substr(m_wrapUpDone), allowed);
    const int64_t room = m_matcher.plainStringRoom();
    return room >= 0 ? allowInStringBody(room, allowed) : allowByTrieWalk(allowed);
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
    const std::string& bytes = m_trie.bytes(token);
    if (bytes.empty()) return false;
    if (m_wrappingUp && std::string_view(m_wrapUpText).substr(m_wrapUpDone, bytes.size()) != bytes)
        return false;
    if (!m_matcher.acceptBytes(bytes)) return false;
    m_text += bytes;
    if (m_wrappingUp) m_wrapUpDone += bytes.size();
    return true;
}

void CallDecoder::wrapUp() {
    if (m_wrappingUp) return;
    m_wrappingUp = true;
    m_wrapUpText = m_matcher.completion();
    m_wrapUpDone = 0;
}

int CallDecoder::tokensToFinish() const {
    const size_t bytes =
        m_wrappingUp ? m_wrapUpText.size() - m_wrapUpDone : m_matcher.completion().size();
    const bool terminatorDue = m_terminatorToken && !m_terminated;
    return static_cast<int>(bytes) + (terminatorDue ? 1 : 0);
}

bool CallDecoder::isComplete() const {
    return m_terminatorToken ? m_terminated : m_matcher.isComplete();
}

} // namespace sinkscope
