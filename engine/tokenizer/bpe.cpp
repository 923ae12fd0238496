// Symbols carry token ids rather than texts: every merge names two tokens and makes a token
// (create() checks it, as Hugging Face's tokenizers does), so a symbol is always a token, or a
// single byte whose character is none (which no merge names). A queued pair is stale when
// either symbol has changed since: merged away, or grown into a longer token (a different id).
#include "tokenizer/bpe.h"

#include "tokenizer/quoted.h"

#include <limits>
#include <queue>

namespace sinkscope {

namespace {

constexpr bool standsForItself(int byte) {
    return (byte >= 0x21 && byte <= 0x7E) || (byte >= 0xA1 && byte <= 0xAC) || byte >= 0xAE;
}

std::string utf8Of(char32_t value) {
    std::string text;
    if (value < 0x80) {
        text.push_back(static_cast<char>(value));
    } else { // the mapping stays below U+0800: two bytes
        text.push_back(static_cast<char>(0xC0 | (value >> 6)));
        text.push_back(static_cast<char>(0x80 | (value & 0x3F)));
    }
    return text;
}

// byte -> its character's code point (U+0021 .. U+0143)
constexpr std::array<char32_t, 256> kByteCharacters = [] {
    std::array<char32_t, 256> characters{};
    char32_t next = 0x100;
    for (int byte = 0; byte < 256; ++byte)
        characters[static_cast<size_t>(byte)] =
            standsForItself(byte) ? static_cast<char32_t>(byte) : next++;
    return characters;
}();

constexpr size_t kCharacterLimit = 0x144; // one past the highest character

// code point below kCharacterLimit -> its byte, or -1
constexpr std::array<int16_t, kCharacterLimit> kCharacterBytes = [] {
    std::array<int16_t, kCharacterLimit> bytes{};
    bytes.fill(-1);
    for (int byte = 0; byte < 256; ++byte)
        bytes[kByteCharacters[static_cast<size_t>(byte)]] = static_cast<int16_t>(byte);
    return bytes;
}();

uint64_t pairKey(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
           static_cast<uint32_t>(right);
}

constexpr int32_t kMergedAway = -2; // a symbol's token once merged into its left neighbour

// One byte of the word, or the merge of a run of them; linked to its live neighbours.
struct Symbol {
    int32_t token = -1; // -1: a byte whose character is no token
    int prev = -1;
    int next = -1;
};

// Two adjacent symbols with a merge, as they were when queued.
struct Candidate {
    int32_t rank = 0;
    int left = 0;
    int right = 0;
    int32_t leftToken = 0;
    int32_t rightToken = 0;
    int32_t merged = 0;
};

// Lowest rank on top; on equal ranks the leftmost pair.
struct CandidateOrder {
    bool operator()(const Candidate& a, const Candidate& b) const {
        return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
    }
};

} // namespace

std::string_view gpt2CharacterOf(uint8_t byte) {
    static const std::array<std::string, 256> characters = [] {
        std::array<std::string, 256> texts;
        for (size_t byte = 0; byte < texts.size(); ++byte)
            texts[byte] = utf8Of(kByteCharacters[byte]);
        return texts;
    }();
    return characters[byte];
}

std::string gpt2BytesOf(std::string_view piece) {
    std::string bytes;
    bytes.reserve(piece.size());
    for (size_t i = 0; i < piece.size();) {
        // The characters are below U+0800: ASCII, or a two-byte sequence (overlong ones excluded).
        const auto lead = static_cast<uint8_t>(piece[i]);
        const auto next = i + 1 < piece.size() ? static_cast<uint8_t>(piece[i + 1]) : 0;
        const bool twoBytes = lead >= 0xC2 && lead <= 0xDF && (next & 0xC0) == 0x80;
        const char32_t value = twoBytes ? ((lead & 0x1F) << 6) | (next & 0x3F) : lead;
        const size_t length = twoBytes ? 2 : 1;
        const bool character =
            (lead < 0x80 || twoBytes) && value < kCharacterLimit && kCharacterBytes[value] >= 0;
        if (character) {
            bytes.push_back(static_cast<char>(kCharacterBytes[value]));
        } else {
            bytes.append(piece.substr(i, length)); // no encoding makes this: kept as it is
        }
        i += length;
    }
    return bytes;
}

std::optional<BpeEncoder> BpeEncoder::create(const Vocabulary& vocab, const TokenIndex& index,
                                             std::string& error, std::string& warning) {
    BpeEncoder encoder(PreTokenizer::forName(vocab.preTokenizer, warning));
    if (vocab.merges.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
        error = "tokenizer.ggml.merges has more merges than 32-bit ranks can order";
        return std::nullopt;
    }
    encoder.m_merges.reserve(vocab.merges.size());
    for (size_t rank = 0; rank < vocab.merges.size(); ++rank) {
        const std::string_view merge = vocab.merges[rank];
        const std::string where =
            "tokenizer.ggml.merges[" + std::to_string(rank) + "] = " + quotedText(merge);
        // Like llama.cpp, the first space after the first byte separates the two texts.
        const size_t space = merge.find(' ', 1);
        if (space == std::string_view::npos || space + 1 == merge.size()) {
            error = where + " is not two tokens separated by a space";
            return std::nullopt;
        }
        const std::string_view left = merge.substr(0, space);
        const std::string_view right = merge.substr(space + 1);
        const std::string joined = std::string(left) + std::string(right);
        const auto leftId = index.find(left);
        const auto rightId = index.find(right);
        const auto mergedId = index.find(joined);
        if (!leftId || !rightId) {
            error =
                where + " names " + quotedText(leftId ? right : left) + ", which is not a token";
            return std::nullopt;
        }
        if (!mergedId) {
            error = where + " makes " + quotedText(joined) + ", which is not a token";
            return std::nullopt;
        }
        encoder.m_merges.try_emplace(pairKey(*leftId, *rightId),
                                     Merge{static_cast<int32_t>(rank), *mergedId});
    }
    for (int byte = 0; byte < 256; ++byte) {
        const std::string_view character = gpt2CharacterOf(static_cast<uint8_t>(byte));
        encoder.m_byteTokens[static_cast<size_t>(byte)] = index.find(character).value_or(-1);
        std::array<int32_t, 2>& fallback = encoder.m_byteFallback[static_cast<size_t>(byte)];
        fallback.fill(-1);
        size_t used = 0;
        for (const char part : character)
            if (const auto id = index.find(std::string_view(&part, 1))) fallback[used++] = *id;
    }
    return encoder;
}

const BpeEncoder::Merge* BpeEncoder::findMerge(int32_t left, int32_t right) const {
    if (left < 0 || right < 0) return nullptr;
    const auto found = m_merges.find(pairKey(left, right));
    return found == m_merges.end() ? nullptr : &found->second;
}

void BpeEncoder::encode(std::string_view fragment, const TokenIndex& index,
                        std::vector<int32_t>& ids) const {
    for (const std::string_view word : m_preTokenizer.split(fragment))
        encodeWord(word, index, ids);
}

void BpeEncoder::encodeWord(std::string_view word, const TokenIndex& index,
                            std::vector<int32_t>& ids) const {
    if (m_preTokenizer.ignoresMerges()) {
        std::string characters;
        for (const char byte : word)
            characters += gpt2CharacterOf(static_cast<uint8_t>(byte));
        if (const auto whole = index.find(characters)) {
            ids.push_back(*whole);
            return;
        }
    }

    std::vector<Symbol> symbols(word.size()); // [n_bytes] symbol i starts as byte i
    for (size_t i = 0; i < word.size(); ++i) {
        symbols[i] = {m_byteTokens[static_cast<uint8_t>(word[i])], static_cast<int>(i) - 1,
                      i + 1 < word.size() ? static_cast<int>(i) + 1 : -1};
    }
    std::priority_queue<Candidate, std::vector<Candidate>, CandidateOrder> candidates;
    const auto addCandidate = [&](int left, int right) {
        if (left < 0 || right < 0) return;
        const int32_t leftToken = symbols[static_cast<size_t>(left)].token;
        const int32_t rightToken = symbols[static_cast<size_t>(right)].token;
        if (const Merge* merge = findMerge(leftToken, rightToken))
            candidates.push({merge->rank, left, right, leftToken, rightToken, merge->merged});
    };
    for (int right = 1; right < static_cast<int>(symbols.size()); ++right)
        addCandidate(right - 1, right);

    while (!candidates.empty()) {
        const Candidate best = candidates.top();
        candidates.pop();
        Symbol& left = symbols[static_cast<size_t>(best.left)];
        Symbol& right = symbols[static_cast<size_t>(best.right)];
        if (left.token != best.leftToken || right.token != best.rightToken) continue; // stale
        left.token = best.merged;
        right.token = kMergedAway;
        left.next = right.next;
        if (right.next >= 0) symbols[static_cast<size_t>(right.next)].prev = best.left;
        addCandidate(left.prev, best.left);
        addCandidate(best.left, left.next);
    }

    for (int i = symbols.empty() ? -1 : 0; i >= 0; i = symbols[static_cast<size_t>(i)].next) {
        const int32_t token = symbols[static_cast<size_t>(i)].token;
        if (token >= 0) {
            ids.push_back(token);
            continue;
        }
        for (const int32_t id : m_byteFallback[static_cast<uint8_t>(word[static_cast<size_t>(i)])])
            if (id >= 0) ids.push_back(id);
    }
}

std::string BpeEncoder::piece(const Vocabulary& vocab, int32_t id, bool showSpecial) {
    const std::string& stored = vocab.pieces[static_cast<size_t>(id)];
    switch (vocab.types[static_cast<size_t>(id)]) {
    case TokenType::Control:
    case TokenType::Unknown:
        return showSpecial ? stored : std::string();
    case TokenType::UserDefined:
        return stored;
    case TokenType::Normal:
        return gpt2BytesOf(stored);
    case TokenType::Byte:
    case TokenType::Undefined:
    case TokenType::Unused:
        break;
    }
    return {};
}

} // namespace sinkscope
