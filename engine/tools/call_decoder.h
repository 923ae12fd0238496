// Constrained decoding of one tool call, token by token: which tokens keep the call valid, and
// the wrap-up that finishes it the shortest way when its token budget runs out.
//
// The mask walks the token trie with a copy of the matcher per trie level, pruning every branch
// the grammar rejects, so a step costs what the grammar allows rather than the vocabulary size.
// Inside a string body (most of a call's bytes) the plain-text tokens are decided by their
// character count alone, and only the other tokens (quotes, backslashes, control and partial
// UTF-8 bytes) are run through the matcher.
//
// Marker tokens: where the format's close marker is one token, JsonList's grammar ends at ']' and
// the decoder then takes the close token; TaggedObjects' grammar asks for the close and open
// tokens between blocks (CallMatcher::awaits). Where the reply may stop after a block, the end
// tokens (the end-of-turn marker or end-of-text) are allowed too, and taking one ends the call.
#pragma once

#include "tools/call_matcher.h"
#include "tools/token_trie.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace sinkscope {

// The format's markers where each is one special (control or user-defined) token of the
// vocabulary; nullopt where it is written as text (or empty).
struct CallMarkerTokens {
    std::optional<int32_t> open;
    std::optional<int32_t> close;
};
CallMarkerTokens callMarkerTokens(const Tokenizer& tokenizer, const CallFormat& format);
// The marker's id where `text` is one special token of the vocabulary.
std::optional<int32_t> specialMarkerToken(const Tokenizer& tokenizer, std::string_view text);

// The grammar options for a format and its marker tokens: the markers that are text become part
// of the grammar (terminator, reopening).
CallGrammarOptions callGrammarOptions(const CallFormat& format, const CallMarkerTokens& markers);

class CallDecoder {
public:
    // `terminatorToken`: </tool_call> when it is one token; the grammar then ends at ']' (its
    // options' terminator empty). The grammar and trie must outlive the decoder.
    CallDecoder(const CallGrammar& grammar, const TokenTrie& trie,
                std::optional<int32_t> terminatorToken);
    // Any format: `markers` as callMarkerTokens() finds them (those the grammar was compiled
    // for); `endTokens` end the reply where it may stop after a TaggedObjects block (none: it
    // stops after the first block that may end it).
    CallDecoder(const CallGrammar& grammar, const TokenTrie& trie, const CallMarkerTokens& markers,
                std::vector<int32_t> endTokens);

    // Sets allowed[id] ([n_vocab]) to 1 for the tokens that may come next, 0 for the others;
    // returns how many are allowed (0 once complete, or at a dead end of the vocabulary).
    int allowedTokens(std::span<uint8_t> allowed);
    // Takes a token; false (and nothing changes) when it is not allowed.
    bool accept(int32_t token);
    // From now on allow only the shortest way to finish (see CallMatcher::completion()).
    void wrapUp();
    // String arguments (those without a minimum length) must be spans of `text`, as JSON writes
    // it (CallMatcher::restrictStringsToSpans): call before the call's first token.
    void restrictStringsToSpansOf(std::string_view text);
    bool wrappingUp() const { return m_wrappingUp; }
    // Tokens the call needs at most to finish the shortest way (every byte can be a token).
    int tokensToFinish() const;

    bool isComplete() const;
    // An end token ended the reply (the caller treats it as the turn's end).
    std::optional<int32_t> endToken() const { return m_endToken; }
    int callIndex() const { return m_matcher.callIndex(); }
    // The call's bytes so far; marker tokens the grammar reads (TaggedObjects) as their text,
    // JsonList's close token not.
    const std::string& text() const { return m_text; }

private:
    int allowInStringBody(int64_t room, std::span<uint8_t> allowed) const;
    int allowByTrieWalk(std::span<uint8_t> allowed);
    int allowPrefixesOf(std::string_view text, std::span<uint8_t> allowed) const;
    int allowNodeTokens(int32_t node, std::span<uint8_t> allowed) const;
    int allowMarkersAndEnds(std::span<uint8_t> allowed) const;
    bool closeTokenDue() const; // JsonList: the grammar is complete, the close token not taken
    bool isEndToken(int32_t token) const;

    const TokenTrie& m_trie;
    CallFormat m_format;
    std::optional<int32_t> m_terminatorToken; // JsonList's close token
    CallMarkerTokens m_markers;
    std::vector<int32_t> m_endTokens;
    std::optional<int32_t> m_endToken;
    CallMatcher m_matcher;
    std::vector<CallMatcher> m_levels; // [maxTokenBytes + 1] scratch: the matcher per trie depth
    std::string m_text;
    bool m_terminated = false; // the terminator token was taken
    bool m_wrappingUp = false;
    std::string m_wrapUpText; // the completion being written
    // The span source the matchers read (shared: its bytes must not move with the decoder)
    std::shared_ptr<const SpanSource> m_spanSource;
    size_t m_wrapUpDone = 0; // bytes of it written
};

} // namespace sinkscope
