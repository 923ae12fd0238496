// The fixed byte-level BPE vocabulary the BPE tokenizer fuzzer encodes with, and the
// pre-tokenizers it runs through; the corpus writer turns the pieces into the dictionary.
#pragma once

#include "tokenizer/tokenizer.h"

#include <string_view>
#include <vector>

namespace sinkscope::fuzz {

// Every byte's GPT-2 character (ids 0-255, so that any bytes round-trip), merges that chain
// (English words, runs of spaces and digits, é, 日本, 🙂), a duplicate merge line, a
// whole-word token no merge makes (llama3's ignore-merges path), the control tokens <|endoftext|>
// (BOS and EOS) and <|im_start|>, and the user-defined <tool>, which BPE prints as stored, so that
// it round-trips even though it is cut out without parseSpecial.
Vocabulary fuzzBpeVocabulary(std::string_view preTokenizer);

// One tokenizer.ggml.pre name per implemented pre-tokenizer family.
const std::vector<std::string_view>& fuzzPreTokenizers();

} // namespace sinkscope::fuzz
