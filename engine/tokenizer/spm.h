// SentencePiece ("llama") encoding of one text fragment, matching llama.cpp's SPM tokenizer
// (src/llama-vocab.cpp at c392e5094): a space prefix, spaces as U+2581, greedy bigram merges by
// score, byte fallback (<0xXX>).
#pragma once

#include "tokenizer/vocabulary.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sinkscope {

class SpmEncoder {
public:
    SpmEncoder() = default;
    SpmEncoder(const Vocabulary& vocab, const TokenIndex& index);

    // Appends the ids of one fragment between special tokens; `spacePrefix` puts a space first.
    void encode(std::string_view fragment, bool spacePrefix, const Vocabulary& vocab,
                const TokenIndex& index, std::vector<int32_t>& ids) const;

    // The bytes of one token as it appears in text: "▁" -> " ", <0xXX> -> that byte, control
    // and unknown tokens -> "" (their stored text when showSpecial). `id` is inside the vocabulary.
    static std::string piece(const Vocabulary& vocab, int32_t id, bool showSpecial);

private:
    // The merge over text whose spaces are already U+2581.
    void appendMergedTokens(std::string_view escapedText, const Vocabulary& vocab,
                            const TokenIndex& index, std::vector<int32_t>& ids) const;

    std::array<int32_t, 256> m_byteTokens{}; // byte -> id of <0xXX>, else of the byte, else unk
};

} // namespace sinkscope
