// SentencePiece ("llama") tokenizer, written to give the same ids as llama.cpp's SPM tokenizer
// (src/llama-vocab.cpp at c392e5094, the build the shared reference outputs come from).
//
// encode(text):
//   1. Cut the special tokens out of the text, longest text first (user-defined always; control
//      and unknown only with parseSpecial). What lies between them are text fragments.
//   2. Every text fragment that follows a special token, or starts the text, gets the space
//      prefix (llama.cpp's `is_prev_special`; the BOS added up front does not change that).
//   3. Spaces become U+2581; the fragment is split into UTF-8 characters, and the adjacent pair
//      whose concatenation is a token with the highest score is merged, again and again (ties:
//      the leftmost pair), through a priority queue of candidate pairs.
//   4. Each final symbol is its token, or, when it is none, one byte token per byte.
#include "tokenizer/tokenizer.h"

#include "gguf/gguf.h"

#include <algorithm>
#include <cstdio>
#include <queue>

namespace sinkscope {

namespace {

constexpr std::string_view kSpaceMarker = "\xE2\x96\x81"; // U+2581 LOWER ONE EIGHTH BLOCK

std::string replaceAll(std::string_view text, std::string_view from, std::string_view to) {
    std::string result;
    result.reserve(text.size());
    size_t start = 0;
    for (size_t found = text.find(from); found != std::string_view::npos;
         found = text.find(from, start)) {
        result.append(text.substr(start, found - start));
        result.append(to);
        start = found + from.size();
    }
    result.append(text.substr(start));
    return result;
}

bool isContinuationByte(uint8_t byte) {
    return (byte & 0xC0) == 0x80;
}

// Bytes in the UTF-8 character that starts at `offset`; 1 for a byte that starts no well-formed
// sequence (stray continuation byte, invalid lead byte, truncated sequence), so that invalid
// input falls back to byte tokens one byte at a time.
size_t utf8CharLength(std::string_view text, size_t offset) {
    const auto lead = static_cast<uint8_t>(text[offset]);
    size_t length = 1;
    if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
    }
    if (offset + length > text.size()) return 1;
    for (size_t i = 1; i < length; ++i) {
        if (!isContinuationByte(static_cast<uint8_t>(text[offset + i]))) return 1;
    }
    return length;
}

// "<0x0A>" -> 0x0A; nullopt for any other text.
std::optional<uint8_t> parseByteToken(std::string_view piece) {
    if (piece.size() != 6 || !piece.starts_with("<0x") || piece[5] != '>') return std::nullopt;
    int value = 0;
    for (const char digit : piece.substr(3, 2)) {
        int nibble = 0;
        if (digit >= '0' && digit <= '9') {
            nibble = digit - '0';
        } else if (digit >= 'A' && digit <= 'F') {
            nibble = digit - 'A' + 10;
        } else if (digit >= 'a' && digit <= 'f') {
            nibble = digit - 'a' + 10;
        } else {
            return std::nullopt;
        }
        value = value * 16 + nibble;
    }
    return static_cast<uint8_t>(value);
}

std::string byteTokenPiece(uint8_t byte) {
    char text[7];
    std::snprintf(text, sizeof text, "<0x%02X>", byte);
    return text;
}

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

// A run of the fragment's bytes, linked to its neighbours; length 0 once merged into its left.
struct Symbol {
    size_t offset = 0;
    size_t length = 0;
    int prev = -1;
    int next = -1;
};

// Two adjacent symbols whose concatenation (`length` bytes) is a token with `score`.
struct Bigram {
    int left = 0;
    int right = 0;
    float score = 0.0f;
    size_t length = 0;
};

// Highest score on top; on equal scores the leftmost pair.
struct BigramOrder {
    bool operator()(const Bigram& a, const Bigram& b) const {
        return a.score < b.score || (a.score == b.score && a.left > b.left);
    }
};

std::vector<Symbol> splitIntoChars(std::string_view text) {
    std::vector<Symbol> symbols;
    for (size_t offset = 0; offset < text.size();) {
        const size_t length = utf8CharLength(text, offset);
        const int index = static_cast<int>(symbols.size());
        symbols.push_back({offset, length, index - 1, index + 1});
        offset += length;
    }
    if (!symbols.empty()) symbols.back().next = -1;
    return symbols;
}

std::optional<int64_t> readOptionalInt(const GgufFile& file, std::string_view key, int64_t fallback,
                                       std::string& error) {
    const GgufValue* value = file.find(key);
    if (!value) return fallback;
    const std::optional<int64_t> number = value->asInt();
    if (!number) error = std::string(key) + " is not an integer";
    return number;
}

std::optional<bool> readOptionalBool(const GgufFile& file, std::string_view key, bool fallback,
                                     std::string& error) {
    const GgufValue* value = file.find(key);
    if (!value) return fallback;
    const std::optional<bool> flag = value->asBool();
    if (!flag) error = std::string(key) + " is not a boolean";
    return flag;
}

std::optional<int32_t> readTokenId(const GgufFile& file, std::string_view key, int32_t fallback,
                                   size_t vocabSize, std::string& error) {
    const std::optional<int64_t> id = readOptionalInt(file, key, fallback, error);
    if (!id) return std::nullopt;
    if (*id < 0 || static_cast<uint64_t>(*id) >= vocabSize) {
        error = std::string(key) + " = " + std::to_string(*id) + " is outside the vocabulary of " +
                std::to_string(vocabSize) + " tokens";
        return std::nullopt;
    }
    return static_cast<int32_t>(*id);
}

// tokenizer.ggml.token_type values outside the enum read as Undefined, as llama.cpp does.
TokenType tokenTypeFromGguf(int64_t value) {
    if (value < static_cast<int64_t>(TokenType::Undefined) ||
        value > static_cast<int64_t>(TokenType::Byte)) {
        return TokenType::Undefined;
    }
    return static_cast<TokenType>(value);
}

// Fills pieces, scores and types; scores and types are optional (0 and Normal when absent).
bool readTokenArrays(const GgufFile& file, Vocabulary& vocab, std::string& error) {
    const GgufValue* tokens = file.find("tokenizer.ggml.tokens");
    if (!tokens || !tokens->asStringArray()) {
        error = "tokenizer.ggml.tokens is missing or not an array of strings";
        return false;
    }
    vocab.pieces = *tokens->asStringArray();
    const size_t count = vocab.pieces.size();
    if (count == 0) {
        error = "tokenizer.ggml.tokens is empty: the vocabulary has no tokens";
        return false;
    }
    if (count > static_cast<size_t>(INT32_MAX)) {
        error = "tokenizer.ggml.tokens has more tokens than 32-bit ids can address";
        return false;
    }
    auto checkLength = [&](const char* key, size_t length) {
        if (length == count) return true;
        error = std::string(key) + " has " + std::to_string(length) +
                " entries but tokenizer.ggml.tokens has " + std::to_string(count);
        return false;
    };

    vocab.scores.assign(count, 0.0f);
    if (const GgufValue* scores = file.find("tokenizer.ggml.scores")) {
        const std::vector<double>* values = scores->asFloatArray();
        if (!values) {
            error = "tokenizer.ggml.scores is not an array of floats";
            return false;
        }
        if (!checkLength("tokenizer.ggml.scores", values->size())) return false;
        std::transform(values->begin(), values->end(), vocab.scores.begin(),
                       [](double score) { return static_cast<float>(score); });
    }

    vocab.types.assign(count, TokenType::Normal);
    if (const GgufValue* types = file.find("tokenizer.ggml.token_type")) {
        const std::vector<int64_t>* values = types->asIntArray();
        if (!values) {
            error = "tokenizer.ggml.token_type is not an array of integers";
            return false;
        }
        if (!checkLength("tokenizer.ggml.token_type", values->size())) return false;
        std::transform(values->begin(), values->end(), vocab.types.begin(), tokenTypeFromGguf);
    }
    return true;
}

bool readSpecialSettings(const GgufFile& file, Vocabulary& vocab, std::string& error) {
    const size_t count = vocab.pieces.size();
    const auto bos = readTokenId(file, "tokenizer.ggml.bos_token_id", 1, count, error);
    if (!bos) return false;
    const auto eos = readTokenId(file, "tokenizer.ggml.eos_token_id", 2, count, error);
    if (!eos) return false;
    const auto unk = readTokenId(file, "tokenizer.ggml.unknown_token_id", 0, count, error);
    if (!unk) return false;
    const auto addBos = readOptionalBool(file, "tokenizer.ggml.add_bos_token", true, error);
    if (!addBos) return false;
    const auto addSpacePrefix =
        readOptionalBool(file, "tokenizer.ggml.add_space_prefix", true, error);
    if (!addSpacePrefix) return false;
    vocab.bos = *bos;
    vocab.eos = *eos;
    vocab.unk = *unk;
    vocab.addBos = *addBos;
    vocab.addSpacePrefix = *addSpacePrefix;
    return true;
}

} // namespace

std::optional<Tokenizer> Tokenizer::fromGguf(const GgufFile& file, std::string& error) {
    const GgufValue* model = file.find("tokenizer.ggml.model");
    if (!model || !model->asString()) {
        error = "tokenizer.ggml.model is missing or not a string";
        return std::nullopt;
    }
    if (*model->asString() != "llama") {
        error = "tokenizer model \"" + *model->asString() +
                "\" is not supported (only \"llama\", SentencePiece)";
        return std::nullopt;
    }
    Vocabulary vocab;
    if (!readTokenArrays(file, vocab, error) || !readSpecialSettings(file, vocab, error)) {
        return std::nullopt;
    }
    return Tokenizer(std::move(vocab));
}

Tokenizer::Tokenizer(Vocabulary vocab) : m_vocab(std::move(vocab)) {
    // A vocabulary built in code may leave scores or types short: they default to 0 and Normal.
    const size_t count = m_vocab.pieces.size();
    m_vocab.scores.resize(count, 0.0f);
    m_vocab.types.resize(count, TokenType::Normal);

    m_index.reserve(count);
    for (size_t id = 0; id < count; ++id) {
        m_index.insert_or_assign(m_vocab.pieces[id], static_cast<int32_t>(id));
        if (isSpecialType(m_vocab.types[id]) && !m_vocab.pieces[id].empty()) {
            m_specialTokens.push_back(static_cast<int32_t>(id));
        }
    }
    std::stable_sort(m_specialTokens.begin(), m_specialTokens.end(), [this](int32_t a, int32_t b) {
        return m_vocab.pieces[static_cast<size_t>(a)].size() >
               m_vocab.pieces[static_cast<size_t>(b)].size();
    });
    for (int byte = 0; byte < 256; ++byte) {
        m_byteTokens[byte] = byteFallbackToken(static_cast<uint8_t>(byte));
    }
}

int32_t Tokenizer::byteFallbackToken(uint8_t byte) const {
    if (const auto id = findToken(byteTokenPiece(byte))) return *id;
    if (const auto id = findToken(std::string(1, static_cast<char>(byte)))) return *id;
    return m_vocab.unk;
}

std::optional<int32_t> Tokenizer::findToken(std::string_view storedPiece) const {
    const auto found = m_index.find(storedPiece);
    if (found == m_index.end()) return std::nullopt;
    return found->second;
}

TokenType Tokenizer::type(int32_t id) const {
    if (id < 0 || id >= size()) return TokenType::Undefined;
    return m_vocab.types[static_cast<size_t>(id)];
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
        std::string fragmentText = m_vocab.addSpacePrefix && followsSpecial ? " " : "";
        fragmentText.append(text.substr(fragment.offset, fragment.length));
        appendMergedTokens(replaceAll(fragmentText, " ", kSpaceMarker), ids);
        followsSpecial = false;
    }
    return ids;
}

void Tokenizer::appendMergedTokens(std::string_view escapedText, std::vector<int32_t>& ids) const {
    std::vector<Symbol> symbols = splitIntoChars(escapedText); // [n_chars]
    std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> candidates;
    auto addCandidate = [&](int left, int right) {
        if (left < 0 || right < 0) return;
        const Symbol& leftSymbol = symbols[static_cast<size_t>(left)];
        const size_t length = leftSymbol.length + symbols[static_cast<size_t>(right)].length;
        const auto id = findToken(escapedText.substr(leftSymbol.offset, length));
        if (!id) return;
        candidates.push({left, right, m_vocab.scores[static_cast<size_t>(*id)], length});
    };
    for (int right = 1; right < static_cast<int>(symbols.size()); ++right) {
        addCandidate(right - 1, right);
    }

    while (!candidates.empty()) {
        const Bigram best = candidates.top();
        candidates.pop();
        Symbol& left = symbols[static_cast<size_t>(best.left)];
        Symbol& right = symbols[static_cast<size_t>(best.right)];
        // Stale: one side was merged away or has grown since this pair was queued.
        if (left.length == 0 || right.length == 0 || left.length + right.length != best.length) {
            continue;
        }
        left.length += right.length;
        right.length = 0;
        left.next = right.next;
        if (right.next >= 0) symbols[static_cast<size_t>(right.next)].prev = best.left;
        addCandidate(left.prev, best.left);
        addCandidate(best.left, left.next);
    }

    // Every merged symbol is a token by construction, so only single characters can miss the
    // vocabulary; llama.cpp's resegment() then falls back to their bytes, as here.
    for (int index = symbols.empty() ? -1 : 0; index >= 0;
         index = symbols[static_cast<size_t>(index)].next) {
        const Symbol& symbol = symbols[static_cast<size_t>(index)];
        const std::string_view symbolText = escapedText.substr(symbol.offset, symbol.length);
        if (const auto id = findToken(symbolText)) {
            ids.push_back(*id);
        } else {
            appendByteTokens(symbolText, ids);
        }
    }
}

void Tokenizer::appendByteTokens(std::string_view symbol, std::vector<int32_t>& ids) const {
    for (const char byte : symbol)
        ids.push_back(m_byteTokens[static_cast<uint8_t>(byte)]);
}

std::string Tokenizer::piece(int32_t id, bool showSpecial) const {
    if (id < 0 || id >= size()) return {};
    const std::string& stored = m_vocab.pieces[static_cast<size_t>(id)];
    switch (type(id)) {
    case TokenType::Control:
    case TokenType::Unknown:
        return showSpecial ? stored : std::string();
    case TokenType::UserDefined:
        return stored;
    case TokenType::Normal:
        return replaceAll(stored, kSpaceMarker, " ");
    case TokenType::Byte:
        if (const auto byte = parseByteToken(stored))
            return std::string(1, static_cast<char>(*byte));
        return replaceAll(stored, kSpaceMarker, " ");
    case TokenType::Undefined:
    case TokenType::Unused:
        break;
    }
    // llama.cpp prints nothing for unused and undefined tokens.
    return {};
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool stripSpacePrefix) const {
    std::string text;
    for (const int32_t id : ids)
        text += piece(id);
    if (stripSpacePrefix && m_vocab.addSpacePrefix && text.starts_with(' ')) text.erase(0, 1);
    return text;
}

} // namespace sinkscope
