// The pre-tokenizer of a byte-level BPE vocabulary: the regex split that cuts text into words
// before the merges, chosen by tokenizer.ggml.pre exactly as llama.cpp chooses it
// (src/llama-vocab.cpp at c392e5094). pre_tokenizer.cpp says how each split is computed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sinkscope {

struct PreTokenizerFamily; // pre_tokenizer.cpp: the names, split steps and defaults of a family

class PreTokenizer {
public:
    // The split for tokenizer.ggml.pre = `name`. The empty name (no key in the file), names
    // llama.cpp does not know and families not implemented here give "default", and `warning`
    // says so; otherwise `warning` is cleared.
    static PreTokenizer forName(std::string_view name, std::string& warning);

    // The family as llama.cpp's enum names it: "default", "gpt2", "llama3", "qwen2", ...
    std::string_view family() const;
    // llama3-style vocabularies: a word that is a token as a whole skips the merges.
    bool ignoresMerges() const;
    // tokenizer.ggml.add_bos_token's value when the file does not set it.
    bool addsBosByDefault() const;

    // `text` cut into words, in order and without gaps: together they are `text`.
    std::vector<std::string_view> split(std::string_view text) const;

private:
    explicit PreTokenizer(const PreTokenizerFamily& family) : m_family(&family) {}
    const PreTokenizerFamily* m_family;
};

} // namespace sinkscope
