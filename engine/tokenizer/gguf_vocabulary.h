// Reads a Vocabulary from GGUF metadata, with llama.cpp's defaults for what a file leaves out.
//
//   tokenizer.ggml.model         "llama" (SentencePiece) or "gpt2" (byte-level BPE); required
//   tokenizer.ggml.tokens        [n_vocab] strings; required, non-empty
//   tokenizer.ggml.scores        [n_vocab] floats; default 0
//   tokenizer.ggml.token_type    [n_vocab] integers (TokenType); default Normal
//   tokenizer.ggml.merges        [n_merges] "left right" strings; required for gpt2
//   tokenizer.ggml.pre           the gpt2 pre-tokenizer's name; default "" (see PreTokenizer)
//   tokenizer.ggml.bos_token_id, eos_token_id, unknown_token_id
//                                defaults 1, 2, 0 (llama) and 11, 11, none (gpt2); inside the
//                                vocabulary when given
//   tokenizer.ggml.add_bos_token default true (llama), the pre-tokenizer's default (gpt2)
//   tokenizer.ggml.add_space_prefix  llama only; default true
#pragma once

#include "tokenizer/vocabulary.h"

#include <optional>
#include <string>

namespace sinkscope {

class GgufFile;

// nullopt and a message naming the key when a value is missing, of the wrong kind, of the wrong
// length or outside the vocabulary. Merges are checked against the tokens by the tokenizer.
std::optional<Vocabulary> readVocabulary(const GgufFile& file, std::string& error);

} // namespace sinkscope
