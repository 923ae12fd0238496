#include "fuzz_vocabulary.h"

#include <cstdio>
#include <limits>
#include <string>

namespace sinkscope::fuzz {

namespace {

struct FuzzPiece {
    const char* text;
    float score;
};

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();

// "\xE2\x96\x81" is U+2581, the vocabulary's spelling of ' '.
constexpr FuzzPiece kNormalPieces[] = {
    {"\xE2\x96\x81", -1},
    {"a", -2},
    {"b", -2}, // ties are broken by position
    {"c", -2},
    {"e", -3},
    {"h", -3},
    {"t", -3},
    {"ab", -4},
    {"bc", -4},
    {"abc", -5},
    {"ab", -1}, // a duplicate piece: the last id wins the lookup
    {"th", -6},
    {"he", -7},
    {"\xE2\x96\x81t", -8},
    {"\xE2\x96\x81th", -9},
    {"\xE2\x96\x81the", -10},
    {"\xE2\x96\x81\xE2\x96\x81", -11},
    {"\xC3\xA9", -12},                 // é
    {"\xE6\x97\xA5", -13},             // 日
    {"\xE6\x9C\xAC", -13},             // 本
    {"\xE6\x97\xA5\xE6\x9C\xAC", -14}, // 日本
    {"\xF0\x9F\x99\x82", -15},         // 🙂
    {"ce", kNaN},
    {"ec", kMinusInfinity},
};

void add(Vocabulary& vocab, std::string piece, float score, TokenType type) {
    vocab.pieces.push_back(std::move(piece));
    vocab.scores.push_back(score);
    vocab.types.push_back(type);
}

} // namespace

Vocabulary fuzzVocabulary(bool addSpacePrefix) {
    Vocabulary vocab;
    add(vocab, "<unk>", 0, TokenType::Unknown);
    add(vocab, "<s>", 0, TokenType::Control);
    add(vocab, "</s>", 0, TokenType::Control);
    add(vocab, "<|im_start|>", 0, TokenType::Control);
    for (int byte = 0; byte < 256; ++byte) {
        char text[7];
        std::snprintf(text, sizeof text, "<0x%02X>", byte);
        add(vocab, text, 0, TokenType::Byte);
    }
    for (const FuzzPiece& piece : kNormalPieces)
        add(vocab, piece.text, piece.score, TokenType::Normal);
    vocab.bos = 1;
    vocab.eos = 2;
    vocab.unk = 0;
    vocab.addBos = true;
    vocab.addSpacePrefix = addSpacePrefix;
    return vocab;
}

} // namespace sinkscope::fuzz
