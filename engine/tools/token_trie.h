// The vocabulary as bytes, arranged for computing allowed-token masks cheaply: every token's
// bytes (its piece as it appears in text), a trie over them, and the tokens that are plain JSON
// string content (no quote, backslash or control byte; whole, valid UTF-8 characters) with
// their character counts. Built once per tokenizer; read-only afterwards.
#pragma once

#include "tokenizer/tokenizer.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sinkscope {

class TokenTrie {
public:
    struct Edge {
        uint8_t byte = 0;
        int32_t child = 0;
    };
    struct Node {
        int32_t firstEdge = 0; // edges [firstEdge, firstEdge + edgeCount), sorted by byte
        int32_t edgeCount = 0;
        int32_t firstToken = 0; // tokens whose bytes end here: [firstToken, + tokenCount)
        int32_t tokenCount = 0;
    };

    explicit TokenTrie(const Tokenizer& tokenizer);

    int vocabularySize() const { return static_cast<int>(m_bytes.size()); }
    // The token's bytes in text; empty for control, unused and undefined tokens, which the trie
    // leaves out.
    const std::string& bytes(int32_t id) const { return m_bytes[static_cast<size_t>(id)]; }
    // Characters when the token is plain string content, -1 when not (or empty).
    int32_t plainCharacters(int32_t id) const { return m_plainCharacters[static_cast<size_t>(id)]; }
    // Non-empty tokens that are not plain string content: those a string body cannot judge by
    // their character count alone.
    const std::vector<int32_t>& otherTokens() const { return m_otherTokens; }

    const Node& root() const { return m_nodes.front(); }
    const Node& node(int32_t index) const { return m_nodes[static_cast<size_t>(index)]; }
    const Edge& edge(int32_t index) const { return m_edges[static_cast<size_t>(index)]; }
    int32_t tokenAt(int32_t index) const { return m_nodeTokens[static_cast<size_t>(index)]; }
    int maxTokenBytes() const { return m_maxTokenBytes; }

private:
    std::vector<std::string> m_bytes;       // [n_vocab]
    std::vector<int32_t> m_plainCharacters; // [n_vocab]
    std::vector<int32_t> m_otherTokens;     // [n_other]
    std::vector<Node> m_nodes;              // [n_nodes], the root first
    std::vector<Edge> m_edges;              // [n_nodes - 1]
    std::vector<int32_t> m_nodeTokens;      // [n_tokens in the trie], grouped by node
    int m_maxTokenBytes = 0;
};

} // namespace sinkscope
