// How the splits are computed, and why not with a regex engine.
//
// llama.cpp gives each family a list of regexes; each regex cuts every piece the previous ones
// left into its matches and the text between them (unicode_regex_split). Two regexes, GPT-2's and
// Llama-3's, run through hand-written splitters there; all others through std::regex over a
// "collapsed" copy of the text, where each non-ASCII code point becomes one byte standing for its
// class (non-ASCII whitespace becomes U+000B), or std::wregex for regexes without \p{..}.
//
// Here every regex is a step of one of four kinds: the GPT-2 splitter, the Llama-3 splitter (with
// digit groups of 3, or of 1 for Qwen2, whose regex differs only there), a run of one character
// class with an optional one-character prefix ("\p{N}+", "[0-9]{3}", "\s?\p{L}+"), and the
// trailing whitespace of a piece ("\s+$"). Each reproduces what llama.cpp's matcher computes:
//   - The splitters make the same decisions in the same order as llama.cpp's, so its quirks carry
//     over (a lone space at the end of a piece, the \s+(?!\S) look-ahead).
//   - The collapsed text makes \p{L} "a letter" and \s "ASCII \t\n\v\f\r and space, or any
//     non-ASCII White_Space": exactly the class bits of code_points.h. The Qwen2 regex, matched
//     by backtracking over that text, gives the Llama-3 splitter's words with single digits (the
//     splitter is that regex's alternatives tried in order).
//   - std::wregex sees non-ASCII whitespace as U+000B too, so a literal class never matches it
//     (DeepSeek's "　-。" does not match U+3000): literal classes exclude whitespace.
// An ICU or std::regex engine would need the same class rewriting, and std::regex recurses per
// repeated character (a long run of spaces overflows the stack); these steps are linear.
// The classes come from ICU (Unicode 15 in ICU 72), llama.cpp's from its unicode-data.cpp
// (Unicode 15.1): code points assigned in between split differently.
#include "tokenizer/pre_tokenizer.h"

#include "tokenizer/code_points.h"
#include "tokenizer/quoted.h"

#include <algorithm>
#include <array>
#include <limits>
#include <span>

namespace sinkscope {

namespace {

struct CodePointRange {
    char32_t first;
    char32_t last;
};

bool inRanges(char32_t value, std::span<const CodePointRange> ranges) {
    return std::any_of(ranges.begin(), ranges.end(), [value](const CodePointRange& range) {
        return value >= range.first && value <= range.last;
    });
}

bool isLineBreak(char32_t value) {
    return value == '\r' || value == '\n';
}

bool has(const CodePoint& c, uint16_t classes) {
    return (c.classes & classes) != 0;
}

// [^\s\p{L}\p{N}]: anything else that is a character (classes 0 stands for "past the piece").
bool isOther(uint16_t classes) {
    return classes != 0 && !(classes & (kWhitespace | kLetter | kNumber));
}

// One piece of the text: code points [begin, end). Reading past its end gives nothing, as a
// regex matched over the piece alone sees the end of its subject.
struct Piece {
    std::span<const CodePoint> text;
    size_t begin = 0;
    size_t end = 0;

    static constexpr char32_t kPastEnd = std::numeric_limits<char32_t>::max();
    char32_t at(size_t pos) const { return pos < end ? text[pos].value : kPastEnd; }
    uint16_t classes(size_t pos) const { return pos < end ? text[pos].classes : 0; }
    // The first position at or after `pos` whose classes have none of `classes`.
    size_t runEnd(size_t pos, uint16_t wanted) const {
        while (this->classes(pos) & wanted)
            ++pos;
        return pos;
    }
};

// Collects the code point counts of the pieces a step cuts.
class Cuts {
public:
    explicit Cuts(std::vector<size_t>& lengths) : m_lengths(lengths) {}
    void startPiece(size_t begin) { m_last = begin; }
    // Ends the current word at `pos` (nothing when it would be empty).
    void cut(size_t pos) {
        if (pos > m_last) m_lengths.push_back(pos - m_last);
        m_last = pos;
    }

private:
    std::vector<size_t>& m_lengths;
    size_t m_last = 0;
};

// 's 't 're 've 'm 'll 'd at `pos` (any case for Llama-3): its length, or 0.
size_t contractionLength(const Piece& piece, size_t pos, bool anyCase) {
    if (piece.at(pos) != '\'' || pos + 1 >= piece.end) return 0;
    const auto letter = [&](size_t at) {
        return anyCase ? simpleLowercase(piece.at(at)) : piece.at(at);
    };
    const char32_t first = letter(pos + 1);
    if (first == 's' || first == 't' || first == 'm' || first == 'd') return 2;
    if (pos + 2 >= piece.end) return 0;
    const char32_t second = letter(pos + 2);
    const bool two = (first == 'r' && second == 'e') || (first == 'v' && second == 'e') ||
                     (first == 'l' && second == 'l');
    return two ? 3 : 0;
}

// The whitespace alternatives both splitters end with: \s+(?!\S) | \s+ | (one code point).
size_t whitespaceWordEnd(const Piece& piece, size_t pos) {
    const size_t run = piece.runEnd(pos, kWhitespace) - pos;
    if (run > 1 && pos + run < piece.end) return pos + run - 1; // leave one before the word
    if (run > 0) return pos + run;
    return pos + 1;
}

// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
size_t gpt2WordEnd(const Piece& piece, size_t pos) {
    if (const size_t length = contractionLength(piece, pos, false)) return pos + length;
    const size_t body = piece.at(pos) == ' ' ? pos + 1 : pos;
    const uint16_t bodyClasses = piece.classes(body);
    if (bodyClasses & kLetter) return piece.runEnd(body, kLetter);
    if (bodyClasses & kNumber) return piece.runEnd(body, kNumber);
    if (isOther(bodyClasses)) {
        size_t end = body;
        while (isOther(piece.classes(end)))
            ++end;
        return end;
    }
    return whitespaceWordEnd(piece, pos);
}

// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,G}| ?[^\s\p{L}\p{N}]+[\r\n]*|
// \s*[\r\n]+|\s+(?!\S)|\s+   with G = digitGroup (3 for Llama-3, 1 for Qwen2).
size_t llama3WordEnd(const Piece& piece, size_t pos, size_t digitGroup) {
    if (const size_t length = contractionLength(piece, pos, true)) return pos + length;
    const char32_t first = piece.at(pos);
    const uint16_t classes = piece.classes(pos);
    if (!isLineBreak(first) && !(classes & kNumber) &&
        ((classes & kLetter) || (piece.classes(pos + 1) & kLetter))) {
        return piece.runEnd(pos + 1, kLetter);
    }
    if (classes & kNumber) return std::min(piece.runEnd(pos, kNumber), pos + digitGroup);

    // llama.cpp tests the code point at `pos` for being a character here, not the one after the
    // optional space: a space that ends the piece becomes a word of its own on this path.
    const uint16_t bodyClasses = first == ' ' ? piece.classes(pos + 1) : classes;
    if (!(bodyClasses & (kWhitespace | kLetter | kNumber)) && classes != 0) {
        size_t end = first == ' ' ? pos + 1 : pos;
        while (isOther(piece.classes(end)))
            ++end;
        while (isLineBreak(piece.at(end)))
            ++end;
        return end;
    }

    size_t afterLastBreak = 0;
    for (size_t at = pos; piece.classes(at) & kWhitespace; ++at)
        if (isLineBreak(piece.at(at))) afterLastBreak = at + 1;
    if (afterLastBreak > 0) return afterLastBreak; // \s*[\r\n]+
    return whitespaceWordEnd(piece, pos);
}

using CharTest = bool (*)(const CodePoint&);

enum class Prefix {
    None,
    Space,      // " ?"
    Whitespace, // "\s?"
};

enum class StepKind {
    Gpt2,
    Llama3,
    Run,           // the leftmost matches of prefix? class{minCount,maxCount}, greedy
    TrailingSpace, // \s+$
};

// One regex of a family. The run's class never contains its prefix character, so a prefix is
// taken exactly when a class character follows it.
struct SplitStep {
    StepKind kind = StepKind::Run;
    CharTest test = nullptr;
    size_t minCount = 1;
    size_t maxCount = std::numeric_limits<size_t>::max();
    Prefix prefix = Prefix::None;
    size_t digitGroup = 3; // Llama3
};

bool prefixAt(const Piece& piece, size_t pos, Prefix prefix) {
    switch (prefix) {
    case Prefix::None:
        return false;
    case Prefix::Space:
        return piece.at(pos) == ' ';
    case Prefix::Whitespace:
        return (piece.classes(pos) & kWhitespace) != 0;
    }
    return false;
}

// The end of the run step's match at `pos`, or `pos` when there is none.
size_t runMatchEnd(const Piece& piece, const SplitStep& step, size_t pos) {
    size_t body = pos;
    if (prefixAt(piece, pos, step.prefix) && pos + 1 < piece.end &&
        step.test(piece.text[pos + 1])) {
        body = pos + 1;
    }
    size_t end = body;
    while (end < piece.end && end - body < step.maxCount && step.test(piece.text[end]))
        ++end;
    return end - body >= step.minCount ? end : pos;
}

void splitPiece(const Piece& piece, const SplitStep& step, Cuts& cuts) {
    cuts.startPiece(piece.begin);
    switch (step.kind) {
    case StepKind::Gpt2:
        for (size_t pos = piece.begin; pos < piece.end;)
            cuts.cut(pos = gpt2WordEnd(piece, pos));
        return;
    case StepKind::Llama3:
        for (size_t pos = piece.begin; pos < piece.end;)
            cuts.cut(pos = llama3WordEnd(piece, pos, step.digitGroup));
        return;
    case StepKind::Run:
        for (size_t pos = piece.begin; pos < piece.end;) {
            const size_t matchEnd = runMatchEnd(piece, step, pos);
            if (matchEnd == pos) {
                ++pos;
                continue;
            }
            cuts.cut(pos); // the text before the match
            cuts.cut(pos = matchEnd);
        }
        break;
    case StepKind::TrailingSpace: {
        size_t start = piece.end;
        while (start > piece.begin && has(piece.text[start - 1], kWhitespace))
            --start;
        cuts.cut(start);
        break;
    }
    }
    cuts.cut(piece.end);
}

// --- The character classes of the run steps.

bool isLineBreakChar(const CodePoint& c) {
    return isLineBreak(c.value);
}
bool isNumber(const CodePoint& c) {
    return has(c, kNumber);
}
bool isLetter(const CodePoint& c) {
    return has(c, kLetter);
}
bool isPunctuation(const CodePoint& c) {
    return has(c, kPunctuation);
}
bool isAsciiDigit(const CodePoint& c) {
    return c.value >= '0' && c.value <= '9';
}
// [\p{P}\$\+<=>\^~\|]
bool isDefaultPunctuation(const CodePoint& c) {
    return has(c, kPunctuation) ||
           std::u32string_view(U"$+<=>^~|").find(c.value) != std::u32string_view::npos;
}
// [\p{P}\$\+<=>\^~\|`]
bool isFalconPunctuation(const CodePoint& c) {
    return isDefaultPunctuation(c) || c.value == '`';
}

// The literal classes below never match whitespace: llama.cpp's std::wregex sees every non-ASCII
// whitespace as U+000B, and none of them lists an ASCII one.
bool inLiteralClass(const CodePoint& c, std::span<const CodePointRange> ranges) {
    return !has(c, kWhitespace) && inRanges(c.value, ranges);
}

// DeepSeek LLM's letters, as its tokenizer.json spells them out (the cased letters).
constexpr CodePointRange kDeepSeekLetters[] = {
    {0x41, 0x5A},       {0x61, 0x7A},       {0xB5, 0xB5},       {0xC0, 0xD6},
    {0xD8, 0xF6},       {0xF8, 0x1BA},      {0x1BC, 0x1BF},     {0x1C4, 0x293},
    {0x295, 0x2AF},     {0x370, 0x373},     {0x376, 0x377},     {0x37B, 0x37D},
    {0x37F, 0x37F},     {0x386, 0x386},     {0x388, 0x38A},     {0x38C, 0x38C},
    {0x38E, 0x3A1},     {0x3A3, 0x3F5},     {0x3F7, 0x481},     {0x48A, 0x52F},
    {0x531, 0x556},     {0x10A0, 0x10C5},   {0x13A0, 0x13F5},   {0x13F8, 0x13FD},
    {0x1C90, 0x1CBA},   {0x1CBD, 0x1CBF},   {0x1D00, 0x1D2B},   {0x1D6B, 0x1D77},
    {0x1D79, 0x1D9A},   {0x1E00, 0x1F15},   {0x1F18, 0x1F1D},   {0x1F20, 0x1F45},
    {0x1F48, 0x1F4D},   {0x1F50, 0x1F57},   {0x1F59, 0x1F59},   {0x1F5B, 0x1F5B},
    {0x1F5D, 0x1F5D},   {0x1F5F, 0x1F7D},   {0x1F80, 0x1FB4},   {0x1FB6, 0x1FBC},
    {0x1FBE, 0x1FBE},   {0x1FC2, 0x1FC4},   {0x1FC6, 0x1FCC},   {0x1FD0, 0x1FD3},
    {0x1FD6, 0x1FDB},   {0x1FE0, 0x1FEC},   {0x1FF2, 0x1FF4},   {0x1FF6, 0x1FFC},
    {0x2102, 0x2102},   {0x2107, 0x2107},   {0x210A, 0x2113},   {0x2115, 0x2115},
    {0x2119, 0x211D},   {0x2124, 0x2124},   {0x2126, 0x2126},   {0x2128, 0x2128},
    {0x212A, 0x212D},   {0x212F, 0x2134},   {0x2139, 0x2139},   {0x213C, 0x213F},
    {0x2145, 0x2149},   {0x214E, 0x214E},   {0x2183, 0x2184},   {0x2C00, 0x2C7B},
    {0x2C7E, 0x2CE4},   {0x2CEB, 0x2CEE},   {0x2CF2, 0x2CF3},   {0xA640, 0xA66D},
    {0xA680, 0xA69B},   {0xA722, 0xA76F},   {0xA771, 0xA787},   {0xA78B, 0xA78E},
    {0xAB70, 0xABBF},   {0xFB00, 0xFB06},   {0xFB13, 0xFB17},   {0xFF21, 0xFF3A},
    {0xFF41, 0xFF5A},   {0x10400, 0x1044F}, {0x104B0, 0x104D3}, {0x104D8, 0x104FB},
    {0x10C80, 0x10CB2}, {0x10CC0, 0x10CF2}, {0x118A0, 0x118DF}, {0x1E900, 0x1E943},
};
// [!-/:-~！-／：-～‘-‟　-。]
constexpr CodePointRange kDeepSeekPunctuation[] = {
    {0x21, 0x2F},     {0x3A, 0x7E},     {0xFF01, 0xFF0F},
    {0xFF1A, 0xFF5E}, {0x2018, 0x201F}, {0x3000, 0x3002},
};
// [一-龥ࠀ-一가-퟿]
constexpr CodePointRange kDeepSeekCjk[] = {{0x4E00, 0x9FA5}, {0x0800, 0x4E00}, {0xAC00, 0xD7FF}};
// (\s|.,!?…。，、।۔،), negated by the BLOOM-style word class
constexpr CodePointRange kBloomBreaks[] = {
    {'(', '('},       {')', ')'},       {'|', '|'},       {'.', '.'},       {',', ','},
    {'!', '!'},       {'?', '?'},       {0x2026, 0x2026}, {0x3002, 0x3002}, {0xFF0C, 0xFF0C},
    {0x3001, 0x3001}, {0x0964, 0x0964}, {0x06D4, 0x06D4}, {0x060C, 0x060C},
};

bool isDeepSeekLetter(const CodePoint& c) {
    return inLiteralClass(c, kDeepSeekLetters);
}
bool isDeepSeekPunctuation(const CodePoint& c) {
    return inLiteralClass(c, kDeepSeekPunctuation);
}
bool isDeepSeekCjk(const CodePoint& c) {
    return inLiteralClass(c, kDeepSeekCjk);
}
// [^(\s|.,!?…。，、।۔،)]
bool isBloomWordChar(const CodePoint& c) {
    return !has(c, kWhitespace) && !inRanges(c.value, kBloomBreaks);
}

constexpr size_t kUnbounded = std::numeric_limits<size_t>::max();

constexpr SplitStep run(CharTest test, size_t minCount = 1, size_t maxCount = kUnbounded,
                        Prefix prefix = Prefix::None) {
    return {StepKind::Run, test, minCount, maxCount, prefix, 0};
}
constexpr SplitStep one(CharTest test) {
    return run(test, 1, 1);
}
constexpr SplitStep kGpt2 = {StepKind::Gpt2, nullptr, 0, 0, Prefix::None, 0};
constexpr SplitStep kTrailingSpace = {StepKind::TrailingSpace, nullptr, 0, 0, Prefix::None, 0};
constexpr SplitStep llama3(size_t digitGroup) {
    return {StepKind::Llama3, nullptr, 0, 0, Prefix::None, digitGroup};
}

} // namespace

// A family: the tokenizer.ggml.pre names llama.cpp maps to one of its pre-tokenizer types, the
// regexes that type runs (as steps, in order), and the flags llama.cpp sets for it.
struct PreTokenizerFamily {
    std::string_view name;
    std::vector<std::string_view> preNames;
    std::vector<SplitStep> steps;
    bool ignoreMerges = false;
    bool addBos = false;
};

namespace {

const std::vector<PreTokenizerFamily>& families() {
    static const std::vector<PreTokenizerFamily> all = {
        // [\p{P}\$\+<=>\^~\|]+, GPT-2's regex, \p{N}+, [0-9][0-9][0-9]
        {"default",
         {"default"},
         {run(isDefaultPunctuation), kGpt2, run(isNumber), run(isAsciiDigit, 3, 3)}},
        {"gpt2",
         {"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v1-en", "jina-v2-es",
          "jina-v2-de", "jina-v2-code", "roberta-bpe", "mpt", "olmo", "jais"},
         {kGpt2}},
        {"llama3", {"llama3", "llama-v3", "llama-bpe", "falcon3"}, {llama3(3)}, true, true},
        {"dbrx", {"dbrx", "smaug-bpe"}, {llama3(3)}},
        {"qwen2", {"qwen2", "deepseek-r1-qwen", "stablelm2", "megrez"}, {llama3(1)}},
        // \p{N}, then GPT-2's regex
        {"starcoder",
         {"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b"},
         {one(isNumber), kGpt2}},
        // [\r\n], \s?[letters]+, \s?[punctuation]+, \s+$, [CJK]+, \p{N}+
        {"deepseek-llm",
         {"deepseek-llm"},
         {one(isLineBreakChar), run(isDeepSeekLetter, 1, kUnbounded, Prefix::Whitespace),
          run(isDeepSeekPunctuation, 1, kUnbounded, Prefix::Whitespace), kTrailingSpace,
          run(isDeepSeekCjk), run(isNumber)}},
        // [\r\n], \s?\p{L}+, \s?\p{P}+, [CJK]+, \p{N}
        {"deepseek-coder",
         {"deepseek-coder"},
         {one(isLineBreakChar), run(isLetter, 1, kUnbounded, Prefix::Whitespace),
          run(isPunctuation, 1, kUnbounded, Prefix::Whitespace), run(isDeepSeekCjk),
          one(isNumber)}},
        // [\p{P}\$\+<=>\^~\|`]+, GPT-2's regex, [0-9][0-9][0-9]
        {"falcon", {"falcon"}, {run(isFalconPunctuation), kGpt2, run(isAsciiDigit, 3, 3)}},
        //  ?[^(\s|.,!?…。，、।۔،)]+
        {"bloom",
         {"poro-chat", "bloom", "gpt3-finnish"},
         {run(isBloomWordChar, 1, kUnbounded, Prefix::Space)}},
        {"viking", {"viking"}, {run(isBloomWordChar, 1, kUnbounded, Prefix::Space), one(isNumber)}},
    };
    return all;
}

// Names llama.cpp knows whose splits (look-arounds over letter cases, \p{M} and \p{S} mixes)
// are not implemented here.
constexpr std::string_view kUnsupportedNames[] = {"deepseek-v3", "chatglm-bpe", "tekken",
                                                  "chameleon"};

} // namespace

PreTokenizer PreTokenizer::forName(std::string_view name, std::string& warning) {
    warning.clear();
    for (const PreTokenizerFamily& family : families()) {
        const auto& names = family.preNames;
        if (std::find(names.begin(), names.end(), name) != names.end()) return PreTokenizer(family);
    }
    const std::string quoted = quotedText(name);
    if (name.empty()) {
        warning = "tokenizer.ggml.pre is missing: using the default pre-tokenizer";
    } else if (std::find(std::begin(kUnsupportedNames), std::end(kUnsupportedNames), name) !=
               std::end(kUnsupportedNames)) {
        warning = "pre-tokenizer " + quoted + " is not supported: using the default one";
    } else {
        warning = "unknown pre-tokenizer " + quoted + ": using the default one";
    }
    return PreTokenizer(families().front());
}

std::string_view PreTokenizer::family() const {
    return m_family->name;
}

bool PreTokenizer::ignoresMerges() const {
    return m_family->ignoreMerges;
}

bool PreTokenizer::addsBosByDefault() const {
    return m_family->addBos;
}

std::vector<std::string_view> PreTokenizer::split(std::string_view text) const {
    const std::vector<CodePoint> codePoints = decodeCodePoints(text);
    std::vector<size_t> lengths = {codePoints.size()}; // [n_pieces] code points per piece
    if (codePoints.empty()) lengths.clear();
    for (const SplitStep& step : m_family->steps) {
        std::vector<size_t> next;
        next.reserve(lengths.size());
        Cuts cuts(next);
        size_t begin = 0;
        for (const size_t length : lengths) {
            splitPiece({codePoints, begin, begin + length}, step, cuts);
            begin += length;
        }
        lengths = std::move(next);
    }
    std::vector<std::string_view> words;
    words.reserve(lengths.size());
    size_t begin = 0;
    for (const size_t length : lengths) {
        const size_t end = begin + length;
        const size_t byteBegin = codePoints[begin].offset;
        const size_t byteEnd = end < codePoints.size() ? codePoints[end].offset : text.size();
        words.push_back(text.substr(byteBegin, byteEnd - byteBegin));
        begin = end;
    }
    return words;
}

} // namespace sinkscope
