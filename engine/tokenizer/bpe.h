// Byte-level BPE (tokenizer.ggml.model = "gpt2"), computing what llama.cpp's BPE session
// computes (src/llama-vocab.cpp at c392e5094): the pre-tokenizer cuts a fragment into words;
// each word's bytes become GPT-2's byte characters, one symbol per byte; the adjacent pair with
// the lowest merge rank (ties: the leftmost) is merged until no pair has a merge; each final
// symbol is its token. Decoding maps the characters back to the bytes, so any bytes round-trip.
#pragma once

#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/vocabulary.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sinkscope {

// GPT-2's byte -> character mapping (bytes_to_unicode): the printable bytes ! to ~, ¡ to ¬ and
// ® to ÿ stand for themselves; the others, in byte order, for U+0100, U+0101, ... (space is Ġ).
// The UTF-8 of `byte`'s character.
std::string_view gpt2CharacterOf(uint8_t byte);
// The bytes a stored piece stands for: each GPT-2 byte character becomes its byte; other text,
// which no encoding produces, is kept as it is.
std::string gpt2BytesOf(std::string_view piece);

class BpeEncoder {
public:
    // Checks every merge ("left right", both tokens, their concatenation a token) and picks the
    // pre-tokenizer from vocab.preTokenizer. nullopt and `error` for a bad merge; `warning` when
    // the pre-tokenizer falls back to the default (else it is cleared).
    static std::optional<BpeEncoder> create(const Vocabulary& vocab, const TokenIndex& index,
                                            std::string& error, std::string& warning);

    // Appends the ids of one fragment between special tokens.
    void encode(std::string_view fragment, const TokenIndex& index,
                std::vector<int32_t>& ids) const;

    // The bytes of one token: normal tokens through gpt2BytesOf, user-defined ones as stored,
    // control and unknown ones "" (as stored when showSpecial), others "" (llama.cpp prints
    // nothing for byte, unused and undefined tokens in a BPE vocabulary). `id` is inside it.
    static std::string piece(const Vocabulary& vocab, int32_t id, bool showSpecial);

    const PreTokenizer& preTokenizer() const { return m_preTokenizer; }

private:
    struct Merge {
        int32_t rank = 0;   // index in tokenizer.ggml.merges: lower merges first
        int32_t merged = 0; // id of the concatenation
    };

    explicit BpeEncoder(PreTokenizer preTokenizer) : m_preTokenizer(preTokenizer) {}
    void encodeWord(std::string_view word, const TokenIndex& index,
                    std::vector<int32_t>& ids) const;
    const Merge* findMerge(int32_t left, int32_t right) const;

    PreTokenizer m_preTokenizer;
    // (left id << 32 | right id) -> the merge of that pair; the first of duplicate lines wins.
    std::unordered_map<uint64_t, Merge> m_merges;
    std::array<int32_t, 256> m_byteTokens{}; // byte -> id of its character; -1 when no token
    // byte -> ids for a byte whose character is no token: llama.cpp then looks up each byte of
    // the character's UTF-8 as a one-byte token and drops those that are none. -1 = nothing.
    std::array<std::array<int32_t, 2>, 256> m_byteFallback{};
};

} // namespace sinkscope
