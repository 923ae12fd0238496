#include "tools/token_trie.h"

#include "text/utf8.h"

#include <algorithm>
#include <numeric>

namespace sinkscope {

namespace {

// Only ordinary text and byte tokens may appear inside a call: control and user-defined tokens
// (chat markers among them) never do.
std::string tokenBytes(const Tokenizer& tokenizer, int32_t id) {
    const TokenType type = tokenizer.type(id);
    if (type != TokenType::Normal && type != TokenType::Byte) return {};
    return tokenizer.piece(id);
}

// Characters when every byte belongs to a whole, valid UTF-8 character that a JSON string may
// hold unescaped; -1 otherwise.
int32_t plainCharacterCount(const std::string& bytes) {
    if (bytes.empty()) return -1;
    int32_t characters = 0;
    for (size_t i = 0; i < bytes.size(); ++characters) {
        const auto lead = static_cast<uint8_t>(bytes[i]);
        const std::optional<Utf8Lead> rule = utf8Lead(lead);
        if (!rule || lead < 0x20 || lead == '"' || lead == '\\') return -1;
        if (i + 1 + static_cast<size_t>(rule->continuationBytes) > bytes.size()) return -1;
        for (int k = 1; k <= rule->continuationBytes; ++k) {
            const auto next = static_cast<uint8_t>(bytes[i + static_cast<size_t>(k)]);
            const uint8_t low = k == 1 ? rule->firstLow : 0x80;
            const uint8_t high = k == 1 ? rule->firstHigh : 0xBF;
            if (next < low || next > high) return -1;
        }
        i += 1 + static_cast<size_t>(rule->continuationBytes);
    }
    return characters;
}

} // namespace

TokenTrie::TokenTrie(const Tokenizer& tokenizer) {
    const int32_t vocabularySize = tokenizer.size();
    m_bytes.resize(static_cast<size_t>(vocabularySize));
    m_plainCharacters.resize(static_cast<size_t>(vocabularySize));
    std::vector<int32_t> sorted;
    for (int32_t id = 0; id < vocabularySize; ++id) {
        std::string& bytes = m_bytes[static_cast<size_t>(id)] = tokenBytes(tokenizer, id);
        m_plainCharacters[static_cast<size_t>(id)] = plainCharacterCount(bytes);
        if (bytes.empty()) continue;
        sorted.push_back(id);
        if (m_plainCharacters[static_cast<size_t>(id)] < 0) m_otherTokens.push_back(id);
        m_maxTokenBytes = std::max(m_maxTokenBytes, static_cast<int>(bytes.size()));
    }
    std::stable_sort(sorted.begin(), sorted.end(), [&](int32_t a, int32_t b) {
        return m_bytes[static_cast<size_t>(a)] < m_bytes[static_cast<size_t>(b)];
    });

    // Breadth first over ranges of `sorted` that share a prefix, so that each node's edges and
    // tokens are contiguous. In a range at depth d, the tokens of exactly d bytes sort first.
    struct Pending {
        int32_t node;
        size_t begin;
        size_t end;
        size_t depth;
    };
    std::vector<Pending> queue{{0, 0, sorted.size(), 0}};
    m_nodes.emplace_back();
    for (size_t q = 0; q < queue.size(); ++q) {
        const Pending pending = queue[q];
        const auto byteAt = [&](size_t i) {
            return static_cast<uint8_t>(m_bytes[static_cast<size_t>(sorted[i])][pending.depth]);
        };
        // m_nodes grows in this loop: reach the node by index, never by a held reference.
        const auto node = static_cast<size_t>(pending.node);
        size_t i = pending.begin;
        m_nodes[node].firstToken = static_cast<int32_t>(m_nodeTokens.size());
        for (; i < pending.end && m_bytes[static_cast<size_t>(sorted[i])].size() == pending.depth;
             ++i)
            m_nodeTokens.push_back(sorted[i]);
        m_nodes[node].tokenCount =
            static_cast<int32_t>(m_nodeTokens.size()) - m_nodes[node].firstToken;
        m_nodes[node].firstEdge = static_cast<int32_t>(m_edges.size());
        while (i < pending.end) {
            const uint8_t byte = byteAt(i);
            size_t groupEnd = i;
            while (groupEnd < pending.end && byteAt(groupEnd) == byte)
                ++groupEnd;
            const auto child = static_cast<int32_t>(m_nodes.size());
            m_nodes.emplace_back();
            m_edges.push_back({byte, child});
            queue.push_back({child, i, groupEnd, pending.depth + 1});
            i = groupEnd;
        }
        m_nodes[node].edgeCount = static_cast<int32_t>(m_edges.size()) - m_nodes[node].firstEdge;
    }
}

} // namespace sinkscope
