// encode(text), for both models, as llama.cpp's llama_vocab::impl::tokenize does it:
//   1. Cut the special tokens out of the text, longest text first (user-defined always; control
//      and unknown only with parseSpecial). What lies between them are text fragments.
//   2. SentencePiece: every fragment that follows a special token, or starts the text, gets the
//      space prefix; BPE: no prefix. Each fragment is encoded on its own (spm.h, bpe.h).
#include "tokenizer/tokenizer.h"

#include "gguf/gguf.h"
#include "tokenizer/gguf_vocabulary.h"

#include <algorithm>
#include <stdexcept>

namespace sinkscope {

namespace {

bool isSpecialType(TokenType type) {
    return type == TokenType::Control || type == TokenType::UserDefined ||
           type == TokenType::Unknown;
}

// A piece of the text to encode: raw text [offset, offset + length), or one special token.
struct TextFragment {
    size_t offset = 0;
    size_t length = 0;
    std::optional<int32_t> specialToken;
};

// Splits every text fragment at each occurrence of `special` (leftmost first, no overlaps).
std::vector<TextFragment> cutOut(std::string_view text, const std::vector<TextFragment>& fragments,
                                 std::string_view special, int32_t specialId) {
    std::vector<TextFragment> result;
    for (const TextFragment& fragment : fragments) {
        if (fragment.specialToken) {
            result.push_back(fragment);
            continue;
        }
        const std::string_view rest = text.substr(fragment.offset, fragment.length);
        size_t start = 0;
        for (size_t found = rest.find(special); found != std::string_view::npos;
             found = rest.find(special, start)) {
            if (found > start) result.push_back({fragment.offset + start, found - start, {}});
            result.push_back({fragment.offset + found, special.size(), specialId});
            start = found + special.size();
        }
        if (start < rest.size())
            result.push_back({fragment.offset + start, rest.size() - start, {}});
    }
    return result;
}

std::vector<TextFragment> splitAtSpecialTokens(std::string_view text, const Vocabulary& vocab,
                                               std::span<const int32_t> specialTokens,
                                               bool parseSpecial) {
    std::vector<TextFragment> fragments;
    if (text.empty()) return fragments;
    fragments.push_back({0, text.size(), {}});
    for (const int32_t id : specialTokens) {
        const auto index = static_cast<size_t>(id);
        // Like llama.cpp, user-defined tokens are cut out even when parseSpecial is off.
        if (!parseSpecial && vocab.types[index] != TokenType::UserDefined) continue;
        fragments = cutOut(text, fragments, vocab.pieces[index], id);
    }
    return fragments;
}

} // namespace

std::optional<Tokenizer> Tokenizer::fromGguf(const GgufFile& file, std::string& error) {
    std::optional<Vocabulary> vocab = readVocabulary(file, error);
    if (!vocab) return std::nullopt;
    return fromVocabulary(std::move(*vocab), error);
}

std::optional<Tokenizer> Tokenizer::fromVocabulary(Vocabulary vocab, std::string& error) {
    Tokenizer tokenizer;
    if (!tokenizer.build(std::move(vocab), error)) return std::nullopt;
    return tokenizer;
}

Tokenizer::Tokenizer(Vocabulary vocab) {
    std::string error;
    if (!build(std::move(vocab), error)) throw std::invalid_argument(error);
}

bool Tokenizer::build(Vocabulary vocab, std::string& error) {
    m_vocab = std::move(vocab);
    const size_t count = m_vocab.pieces.size();
    m_vocab.scores.resize(count, 0.0f);
    m_vocab.types.resize(count, TokenType::Normal);
    m_index = TokenIndex(m_vocab.pieces);

    for (size_t id = 0; id < count; ++id) {
        if (isSpecialType(m_vocab.types[id]) && !m_vocab.pieces[id].empty())
            m_specialTokens.push_back(static_cast<int32_t>(id));
    }
    std::stable_sort(m_specialTokens.begin(), m_specialTokens.end(), [this](int32_t a, int32_t b) {
        return m_vocab.pieces[static_cast<size_t>(a)].size() >
               m_vocab.pieces[static_cast<size_t>(b)].size();
    });

    if (m_vocab.model == TokenizerModel::SentencePiece) {
        m_encoder = SpmEncoder(m_vocab, m_index);
        return true;
    }
    m_vocab.addSpacePrefix = false;
    std::string warning;
    std::optional<BpeEncoder> encoder = BpeEncoder::create(m_vocab, m_index, error, warning);
    if (!encoder) return false;
    m_encoder = std::move(*encoder);
    if (!warning.empty()) m_warnings.push_back(warning);
    return true;
}

std::optional<int32_t> Tokenizer::findToken(std::string_view storedPiece) const {
    return m_index.find(storedPiece);
}

TokenType Tokenizer::type(int32_t id) const {
    if (id < 0 || id >= size()) return TokenType::Undefined;
    return m_vocab.types[static_cast<size_t>(id)];
}

const PreTokenizer* Tokenizer::preTokenizer() const {
    const auto* bpe = std::get_if<BpeEncoder>(&m_encoder);
    return bpe ? &bpe->preTokenizer() : nullptr;
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool addBos,
                                       bool parseSpecial) const {
    std::vector<int32_t> ids;
    if (addBos) ids.push_back(m_vocab.bos);
    bool followsSpecial = true; // the first fragment is prefixed too
    for (const TextFragment& fragment :
         splitAtSpecialTokens(text, m_vocab, m_specialTokens, parseSpecial)) {
        if (fragment.specialToken) {
            ids.push_back(*fragment.specialToken);
            followsSpecial = true;
            continue;
        }
        const std::string_view fragmentText = text.substr(fragment.offset, fragment.length);
        if (const auto* spm = std::get_if<SpmEncoder>(&m_encoder)) {
            spm->encode(fragmentText, m_vocab.addSpacePrefix && followsSpecial, m_vocab, m_index,
                        ids);
        } else {
            std::get<BpeEncoder>(m_encoder).encode(fragmentText, m_index, ids);
        }
        followsSpecial = false;
    }
    return ids;
}

std::string Tokenizer::piece(int32_t id, bool showSpecial) const {
    if (id < 0 || id >= size()) return {};
    if (m_vocab.model == TokenizerModel::SentencePiece)
        return SpmEncoder::piece(m_vocab, id, showSpecial);
    return BpeEncoder::piece(m_vocab, id, showSpecial);
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool stripSpacePrefix) const {
    std::string text;
    for (const int32_t id : ids)
        text += piece(id);
    if (stripSpacePrefix && m_vocab.addSpacePrefix && text.starts_with(' ')) text.erase(0, 1);
    return text;
}

} // namespace sinkscope
