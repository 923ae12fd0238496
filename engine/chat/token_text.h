// Text rendered by a chat template, as tokens that know where they are in it. Rendered text is
// tokenised as llama.cpp tokenises a prompt with special tokens parsed (control-token text
// becomes its single id, what lies between is encoded fragment by fragment), except inside the
// protected spans: the text users wrote (their messages, tool results, facts), where typing
// "<|im_end|>" must not forge a marker.
#pragma once

#include "tokenizer/tokenizer.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sinkscope {

struct TextSpan {
    size_t begin = 0;
    size_t end = 0; // exclusive
};

struct TokenizedText {
    std::vector<int32_t> tokens; // [n_tokens]
    std::vector<size_t> starts;  // [n_tokens] the byte offset of each token's first byte (BOS: 0)
    // The first token whose first byte is at or after `offset` (tokens.size() when none).
    size_t tokenAtOrAfter(size_t offset) const;
};

// Byte offsets in `text` of the first byte of each of `ids` (the tokens `text` was encoded to
// with no BOS): pieces are laid along the text, a SentencePiece space prefix maps to the byte it
// precedes, and a piece that is not the text's next bytes (<unk>) takes its length, clamped.
std::vector<size_t> tokenByteStarts(const Tokenizer& tokenizer, std::string_view text,
                                    std::span<const int32_t> ids);

// `text` with special tokens parsed outside `protectedSpans` (sorted, not overlapping); BOS
// first when `addBos` and the text does not already start with it.
TokenizedText tokenizeRendered(const Tokenizer& tokenizer, std::string_view text,
                               std::span<const TextSpan> protectedSpans, bool addBos);

// Where each of `pieces` lies in `text`, searched in order, each after the one before; a piece
// the text does not hold verbatim is looked for trimmed of white space (templates trim
// messages), and skipped when absent. Empty pieces are skipped.
std::vector<TextSpan> findInOrder(std::string_view text, std::span<const std::string> pieces);

} // namespace sinkscope
