// Constrained decoding of one tool call, token by token: which tokens keep the call valid, and
// the wrap-up that finishes it the shortest way when its token budget runs out.
//
// The mask walks the token trie with a copy of the matcher per trie level, pruning every branch
// the grammar rejects, so a step costs what the grammar allows rather than the vocabulary size.
// Inside a string body (most of a call's bytes) the plain-text tokens are decided by their
// character count alone, and only the other tokens (quotes, backslashes, control and partial
// UTF-8 bytes) are run through the matcher.
#pragma once

#include "tools/call_matcher.h"
#include "tools/token_trie.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace sinkscope {

class CallDecoder {
public:
    // `terminatorToken`: </tool_call> when it is one token; the grammar then ends at ']' (its
    // options' terminator empty). The grammar and trie must outlive the decoder.
    CallDecoder(const CallGrammar& grammar, const TokenTrie& trie,
                std::optional<int32_t> terminatorToken);

    // Sets allowed[id] ([n_vocab]) to 1 for the tokens that may come next, 0 for the others;
    // returns how many are allowed (0 once complete, or at a dead end of the vocabulary).
    int allowedTokens(std::span<uint8_t> allowed);
    // Takes a token; false (and nothing changes) when it is not allowed.
    bool accept(int32_t token);
    // From now on allow only the shortest way to finish (see CallMatcher::completion()).
    void wrapUp();
    bool wrappingUp() const { return m_wrappingUp; }
    // Tokens the call needs at most to finish the shortest way (every byte can be a token).
    int tokensToFinish() const;

    bool isComplete() const;
    int callIndex() const { return m_matcher.callIndex(); }
    const std::string& text() const { return m_text; } // the call's bytes so far

private:
    int allowInStringBody(int64_t room, std::span<uint8_t> allowed) const;
    int allowByTrieWalk(std::span<uint8_t> allowed);
    int allowPrefixesOf(std::string_view text, std::span<uint8_t> allowed) const;
    int allowNodeTokens(int32_t node, std::span<uint8_t> allowed) const;

    const TokenTrie& m_trie;
    std::optional<int32_t> m_terminatorToken;
    CallMatcher m_matcher;
    std::vector<CallMatcher> m_levels; // [maxTokenBytes + 1] scratch: the matcher per trie depth
    std::string m_text;
    bool m_terminated = false; // the terminator token was taken
    bool m_wrappingUp = false;
    std::string m_wrapUpText; // the completion being written
    size_t m_wrapUpDone = 0;  // bytes of it written
};

} // namespace sinkscope
