// What both tokenizer models share: the token list as GGUF stores it (tokenizer.ggml.*), the
// token attribute ids, and the piece -> id index the encoders look tokens up in.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sinkscope {

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

// tokenizer.ggml.model: "llama" (SentencePiece) or "gpt2" (byte-level BPE).
enum class TokenizerModel {
    SentencePiece,
    BytePairEncoding,
};

struct Vocabulary {
    TokenizerModel model = TokenizerModel::SentencePiece;
    std::vector<std::string> pieces; // [n_vocab] as stored ("▁the", "<0x0A>", "Ġthe", "<s>")
    std::vector<float> scores;       // [n_vocab] SentencePiece merge scores; unused by BPE
    std::vector<TokenType> types;    // [n_vocab]
    int32_t bos = 1;
    int32_t eos = 2;
    int32_t unk = 0; // -1: none (BPE vocabularies without tokenizer.ggml.unknown_token_id)
    bool addBos = true;
    bool addSpacePrefix = true; // SentencePiece only; always false for BPE
    // Byte-level BPE only:
    std::vector<std::string> merges; // [n_merges] "left right"; earlier merges apply first
    std::string preTokenizer;        // tokenizer.ggml.pre ("" when the file has none)
};

// stored piece -> id; on duplicate pieces the last id wins, as in llama.cpp.
class TokenIndex {
public:
    TokenIndex() = default;
    explicit TokenIndex(const std::vector<std::string>& pieces) {
        m_ids.reserve(pieces.size());
        for (size_t id = 0; id < pieces.size(); ++id)
            m_ids.insert_or_assign(pieces[id], static_cast<int32_t>(id));
    }

    std::optional<int32_t> find(std::string_view piece) const {
        const auto found = m_ids.find(piece);
        if (found == m_ids.end()) return std::nullopt;
        return found->second;
    }

private:
    // Lets the index be searched with a string_view, without building a std::string per lookup.
    struct PieceHash {
        using is_transparent = void;
        size_t operator()(std::string_view piece) const {
            return std::hash<std::string_view>{}(piece);
        }
    };
    std::unordered_map<std::string, int32_t, PieceHash, std::equal_to<>> m_ids;
};

} // namespace sinkscope
