// The fixed vocabulary the tokenizer fuzzer encodes with; the corpus writer turns its pieces into
// the fuzzer's dictionary, so the two cannot drift apart.
#pragma once

#include "tokenizer/tokenizer.h"

namespace sinkscope::fuzz {

// <unk>, <s>, </s> and <|im_start|> (special), the 256 byte tokens, then normal pieces: "▁",
// letters, word prefixes that chain merges, multi-byte characters, a duplicate piece, equal
// scores, and scores of NaN and -inf (a GGUF file may carry any float). No user-defined token:
// those are cut out even without parseSpecial, and the text after one gets its own space prefix,
// so they would break the round trip by design.
Vocabulary fuzzVocabulary(bool addSpacePrefix);

} // namespace sinkscope::fuzz
