// Text as the byte-level BPE pre-tokenizer reads it: code points with the Unicode classes its
// split rules ask for (\p{L}, \p{N}, \p{P}, \s, ...), taken from ICU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace sinkscope {

// Class bits of one code point. Each code point has exactly one of the general-category bits
// (the first eight), plus kWhitespace when it has the White_Space property.
enum CodePointClass : uint16_t {
    kUnassigned = 1 << 0,  // Cn, and values past U+10FFFF
    kNumber = 1 << 1,      // \p{N}
    kLetter = 1 << 2,      // \p{L}
    kSeparator = 1 << 3,   // \p{Z}
    kMark = 1 << 4,        // \p{M}
    kPunctuation = 1 << 5, // \p{P}
    kSymbol = 1 << 6,      // \p{S}
    kControl = 1 << 7,     // \p{C} except Cn: Cc, Cf, Co, Cs
    kWhitespace = 1 << 8,  // \s
};

struct CodePoint {
    char32_t value = 0;   // U+FFFD for a byte that starts no sequence
    uint16_t classes = 0; // CodePointClass bits; never 0
    size_t offset = 0;    // of its first byte in the text
};

// The code points of `text`, read the way llama.cpp reads UTF-8 (unicode_cpts_from_utf8): a lead
// byte takes as many continuation bytes (10xxxxxx) as its high bits say, without rejecting
// overlong forms, surrogates or values past U+10FFFF; a byte that starts no such sequence is one
// U+FFFD. Unlike llama.cpp, the bytes themselves are kept (a code point ends where the next one
// starts), so that an invalid sequence splits like llama.cpp's U+FFFD but still encodes, and
// decodes, as its own bytes.
std::vector<CodePoint> decodeCodePoints(std::string_view text);

uint16_t codePointClasses(char32_t value);

// ICU's simple lowercase mapping (llama.cpp's unicode_tolower), for the case-insensitive
// contractions of the llama3 split.
char32_t simpleLowercase(char32_t value);

} // namespace sinkscope
