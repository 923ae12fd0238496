// encode(fragment), after the special tokens are cut out (tokenizer.cpp):
//   1. The fragment gets the space prefix when asked (llama.cpp's `is_prev_special`: it starts
//      the text or follows a special token; the BOS added up front does not change that).
//   2. Spaces become U+2581; the fragment is split into UTF-8 characters, and the adjacent pair
//      whose concatenation is a token with the highest score is merged, again and again (ties:
//      the leftmost pair), through a priority queue of candidate pairs.
//   3. Each final symbol is its token, or, when it is none, one byte token per byte.
#include "tokenizer/spm.h"

#include <cstdio>
#include <optional>
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

} // namespace

SpmEncoder::SpmEncoder(const Vocabulary& vocab, const TokenIndex& index) {
    for (int byte = 0; byte < 256; ++byte) {
        const auto value = static_cast<uint8_t>(byte);
        m_byteTokens[value] =
            index.find(byteTokenPiece(value))
                .value_or(index.find(std::string(1, static_cast<char>(value))).value_or(vocab.unk));
    }
}

void SpmEncoder::encode(std::string_view fragment, bool spacePrefix, const Vocabulary& vocab,
                        const TokenIndex& index, std::vector<int32_t>& ids) const {
    std::string text = spacePrefix ? " " : "";
    text.append(fragment);
    appendMergedTokens(replaceAll(text, " ", kSpaceMarker), vocab, index, ids);
}

void SpmEncoder::appendMergedTokens(std::string_view escapedText, const Vocabulary& vocab,
                                    const TokenIndex& index, std::vector<int32_t>& ids) const {
    std::vector<Symbol> symbols = splitIntoChars(escapedText); // [n_chars]
    std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> candidates;
    auto addCandidate = [&](int left, int right) {
        if (left < 0 || right < 0) return;
        const Symbol& leftSymbol = symbols[static_cast<size_t>(left)];
        const size_t length = leftSymbol.length + symbols[static_cast<size_t>(right)].length;
        const auto id = index.find(escapedText.substr(leftSymbol.offset, length));
        if (!id) return;
        candidates.push({left, right, vocab.scores[static_cast<size_t>(*id)], length});
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
    for (int i = symbols.empty() ? -1 : 0; i >= 0; i = symbols[static_cast<size_t>(i)].next) {
        const Symbol& symbol = symbols[static_cast<size_t>(i)];
        const std::string_view symbolText = escapedText.substr(symbol.offset, symbol.length);
        if (const auto id = index.find(symbolText)) {
            ids.push_back(*id);
            continue;
        }
        for (const char byte : symbolText)
            ids.push_back(m_byteTokens[static_cast<uint8_t>(byte)]);
    }
}

std::string SpmEncoder::piece(const Vocabulary& vocab, int32_t id, bool showSpecial) {
    const std::string& stored = vocab.pieces[static_cast<size_t>(id)];
    switch (vocab.types[static_cast<size_t>(id)]) {
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

} // namespace sinkscope
