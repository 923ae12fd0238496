// The tokenizer of a GGUF vocabulary, matching llama.cpp's: SentencePiece ("llama",
// tokenizer/spm.h) or byte-level BPE ("gpt2", tokenizer/bpe.h). Both share the vocabulary, the
// special-token split and the BOS rule; this facade dispatches the rest.
#pragma once

#include "tokenizer/bpe.h"
#include "tokenizer/spm.h"
#include "tokenizer/vocabulary.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace sinkscope {

class GgufFile;

class Tokenizer {
public:
    // Reads tokenizer.ggml.* (tokenizer/gguf_vocabulary.h): nullopt and `error` for a file
    // whose vocabulary is missing, malformed or inconsistent. Needs no tensors.
    static std::optional<Tokenizer> fromGguf(const GgufFile& file, std::string& error);
    // nullopt and `error` for a BPE vocabulary whose merges name or make texts that are no
    // tokens. Scores and types shorter than the pieces are filled with 0 and Normal.
    static std::optional<Tokenizer> fromVocabulary(Vocabulary vocab, std::string& error);
    // As fromVocabulary; throws std::invalid_argument where it fails (a vocabulary built in code).
    explicit Tokenizer(Vocabulary vocab);

    // Token ids of `text`; BOS first when addBos. Control-token text is not parsed as special
    // unless parseSpecial (then e.g. "<|im_start|>" becomes its single id); user-defined tokens
    // are always cut out, as llama.cpp does.
    std::vector<int32_t> encode(std::string_view text, bool addBos,
                                bool parseSpecial = false) const;
    // The bytes of one token as it appears in text (SpmEncoder::piece, BpeEncoder::piece):
    // control tokens "" (their stored text when showSpecial); "" for ids outside the vocabulary.
    std::string piece(int32_t id, bool showSpecial = false) const;
    // Concatenated pieces; drops the single leading space the prefix added when stripSpacePrefix.
    std::string decode(std::span<const int32_t> ids, bool stripSpacePrefix = false) const;

    std::optional<int32_t> findToken(std::string_view storedPiece) const;
    int32_t size() const { return static_cast<int32_t>(m_vocab.pieces.size()); }
    int32_t bos() const { return m_vocab.bos; }
    int32_t eos() const { return m_vocab.eos; }
    bool addBos() const { return m_vocab.addBos; }
    TokenType type(int32_t id) const;
    TokenizerModel model() const { return m_vocab.model; }
    const Vocabulary& vocabulary() const { return m_vocab; }
    // What loading noticed without failing, e.g. an unknown pre-tokenizer replaced by the default.
    const std::vector<std::string>& warnings() const { return m_warnings; }
    // The BPE pre-tokenizer; nullptr for SentencePiece.
    const PreTokenizer* preTokenizer() const;

private:
    Tokenizer() = default;
    bool build(Vocabulary vocab, std::string& error);

    Vocabulary m_vocab;
    TokenIndex m_index;
    // [n_special] control, user-defined and unknown ids with non-empty text, longest text first:
    // the order in which llama.cpp cuts them out of the text before the merge.
    std::vector<int32_t> m_specialTokens;
    std::variant<SpmEncoder, BpeEncoder> m_encoder;
    std::vector<std::string> m_warnings;
};

} // namespace sinkscope
