// SentencePiece ("llama") tokenizer read from GGUF metadata, matching llama.cpp's SPM tokenizer:
// a space prefix, spaces as U+2581, greedy bigram merges by score, byte fallback (<0xXX>).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sinkscope {

class GgufFile;

// llama.cpp's token attribute ids (tokenizer.ggml.token_type).
enum class TokenType : int32_t {
    Undefined = 0,
    Normal = 1,
    Unknown = 2,
    Control = 3,
    UserDefined = 4,
    Unused = 5,
    Byte = 6,
};

struct Vocabulary {
    std::vector<std::string> pieces; // [n_vocab] as stored ("▁the", "<0x0A>", "<s>")
    std::vector<float> scores;       // [n_vocab]
    std::vector<TokenType> types;    // [n_vocab]
    int32_t bos = 1;
    int32_t eos = 2;
    int32_t unk = 0;
    bool addBos = true;
    bool addSpacePrefix = true;
};

class Tokenizer {
public:
    // Reads tokenizer.ggml.{model,tokens,scores,token_type,bos_token_id,...}; model must be
    // "llama".
    static std::optional<Tokenizer> fromGguf(const GgufFile& file, std::string& error);
    explicit Tokenizer(Vocabulary vocab);

    // Token ids of `text`; BOS first when addBos. Control-token text is not parsed as special
    // unless parseSpecial (then e.g. "<|im_start|>" becomes its single id).
    std::vector<int32_t> encode(std::string_view text, bool addBos,
                                bool parseSpecial = false) const;
    // The bytes of one token as it appears in text: "▁" -> " ", <0xXX> -> that byte,
    // control tokens -> "" (their stored text when showSpecial).
    std::string piece(int32_t id, bool showSpecial = false) const;
    // Concatenated pieces; drops the single leading space the prefix added when stripSpacePrefix.
    std::string decode(std::span<const int32_t> ids, bool stripSpacePrefix = false) const;

    std::optional<int32_t> findToken(std::string_view storedPiece) const;
    int32_t size() const { return static_cast<int32_t>(m_vocab.pieces.size()); }
    int32_t bos() const { return m_vocab.bos; }
    int32_t eos() const { return m_vocab.eos; }
    bool addBos() const { return m_vocab.addBos; }
    TokenType type(int32_t id) const;
    const Vocabulary& vocabulary() const { return m_vocab; }

private:
    // Lets m_index be searched with a string_view, without building a std::string per lookup.
    struct PieceHash {
        using is_transparent = void;
        size_t operator()(std::string_view piece) const {
            return std::hash<std::string_view>{}(piece);
        }
    };

    // The SPM merge over one text fragment whose spaces are already U+2581; appends its ids.
    void appendMergedTokens(std::string_view escapedText, std::vector<int32_t>& ids) const;
    // A symbol that is no token: one id per byte (byte fallback).
    void appendByteTokens(std::string_view symbol, std::vector<int32_t>& ids) const;
    int32_t byteFallbackToken(uint8_t byte) const;

    Vocabulary m_vocab;
    // stored piece -> id; on duplicate pieces the last id wins, as in llama.cpp
    std::unordered_map<std::string, int32_t, PieceHash, std::equal_to<>> m_index;
    int32_t m_byteTokens[256]; // byte -> id of <0xXX>, else of the one-byte piece, else unk
    // [n_special] control, user-defined and unknown ids with non-empty text, longest text first:
    // the order in which llama.cpp cuts them out of the text before the merge.
    std::vector<int32_t> m_specialTokens;
};

} // namespace sinkscope
