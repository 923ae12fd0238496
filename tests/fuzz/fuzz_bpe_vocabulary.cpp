#include "fuzz_bpe_vocabulary.h"

#include <algorithm>
#include <string>

namespace sinkscope::fuzz {

namespace {

// In GPT-2's byte characters: Ġ is ' ', Ċ '\n', ĉ '\t'; "Ã ©" is é (C3 A9), "æĹ ¥" 日 and
// "æľ ¬" 本, "ð Ł Ļ Ĥ" 🙂 (F0 9F 99 82).
constexpr const char* kMerges[] = {
    "Ġ t",  "h e",   "Ġt he", "i n",    "r e",  "o n",   "Ġ a", "e r",   "Ġ s",     "a t",
    "Ġ w",  "o u",   "n d",   "Ġ c",    "i s",  "e n",   "Ġ Ġ", "ĠĠ ĠĠ", "ĠĠ Ġ",    "Ċ Ċ",
    "ĉ ĉ",  "1 1",   "1 2",   "12 3",   "Ġ 1",  "' s",   "' t", "' re",  "Ġa t",    "Ġc at",
    "Ã ©",  "c a",   "ca f",  "caf Ã©", "æ Ĺ",  "æĹ ¥",  "æ ľ", "æľ ¬",  "æĹ¥ æľ¬", "ð Ł",
    "ðŁ Ļ", "ðŁĻ Ĥ", "Ġ Ċ",   "a b",    "ab c", "Ġt he", // the last line repeats an earlier one
};

} // namespace

Vocabulary fuzzBpeVocabulary(std::string_view preTokenizer) {
    Vocabulary vocab;
    vocab.model = TokenizerModel::BytePairEncoding;
    vocab.preTokenizer = std::string(preTokenizer);
    for (int byte = 0; byte < 256; ++byte)
        vocab.pieces.emplace_back(gpt2CharacterOf(static_cast<uint8_t>(byte)));
    for (const char* merge : kMerges) {
        std::string joined = merge;
        joined.erase(joined.find(' ', 1), 1);
        if (std::find(vocab.pieces.begin(), vocab.pieces.end(), joined) == vocab.pieces.end())
            vocab.pieces.push_back(joined);
        vocab.merges.emplace_back(merge);
    }
    vocab.pieces.emplace_back("Ġhello"); // a token, but no merge makes it
    vocab.types.assign(vocab.pieces.size(), TokenType::Normal);
    const auto special = [&](const char* text, TokenType type) {
        vocab.pieces.emplace_back(text);
        vocab.types.push_back(type);
        return static_cast<int32_t>(vocab.pieces.size() - 1);
    };
    vocab.bos = vocab.eos = special("<|endoftext|>", TokenType::Control);
    special("<|im_start|>", TokenType::Control);
    special("<tool>", TokenType::UserDefined);
    vocab.unk = -1;
    vocab.addBos = true;
    vocab.addSpacePrefix = false;
    return vocab;
}

const std::vector<std::string_view>& fuzzPreTokenizers() {
    static const std::vector<std::string_view> names = {
        "default",      "gpt-2",          "llama-bpe", "dbrx",  "qwen2",  "smollm",
        "deepseek-llm", "deepseek-coder", "falcon",    "bloom", "viking",
    };
    return names;
}

} // namespace sinkscope::fuzz
