#include "tokenizer/code_points.h"

#include <unicode/uchar.h>

#include <array>

namespace sinkscope {

namespace {

constexpr char32_t kReplacement = 0xFFFD;

bool isContinuation(uint8_t byte) {
    return (byte & 0xC0) == 0x80;
}

// Continuation bytes a lead byte asks for in llama.cpp's reading; -1 for a byte that leads
// nothing (a continuation byte, 0xF8-0xFF).
int continuationCount(uint8_t lead) {
    if (lead < 0x80) return 0;
    if (lead < 0xC0) return -1;
    if (lead < 0xE0) return 1;
    if (lead < 0xF0) return 2;
    if (lead < 0xF8) return 3;
    return -1;
}

uint16_t classesFromIcu(char32_t value) {
    if (value > 0x10FFFF) return kUnassigned;
    const auto character = static_cast<UChar32>(value);
    const uint32_t category = U_GET_GC_MASK(character);
    uint16_t classes = kControl;
    if (category & U_GC_L_MASK) {
        classes = kLetter;
    } else if (category & U_GC_N_MASK) {
        classes = kNumber;
    } else if (category & U_GC_P_MASK) {
        classes = kPunctuation;
    } else if (category & U_GC_S_MASK) {
        classes = kSymbol;
    } else if (category & U_GC_M_MASK) {
        classes = kMark;
    } else if (category & U_GC_Z_MASK) {
        classes = kSeparator;
    } else if (category & U_GC_CN_MASK) {
        classes = kUnassigned;
    }
    if (u_isUWhiteSpace(character)) classes |= kWhitespace;
    return classes;
}

} // namespace

uint16_t codePointClasses(char32_t value) {
    // ASCII is most of most texts: looked up once.
    static const std::array<uint16_t, 128> ascii = [] {
        std::array<uint16_t, 128> table{};
        for (char32_t c = 0; c < 128; ++c)
            table[c] = classesFromIcu(c);
        return table;
    }();
    return value < ascii.size() ? ascii[value] : classesFromIcu(value);
}

char32_t simpleLowercase(char32_t value) {
    if (value > 0x10FFFF) return value;
    return static_cast<char32_t>(u_tolower(static_cast<UChar32>(value)));
}

std::vector<CodePoint> decodeCodePoints(std::string_view text) {
    std::vector<CodePoint> codePoints;
    codePoints.reserve(text.size());
    for (size_t offset = 0; offset < text.size();) {
        const auto lead = static_cast<uint8_t>(text[offset]);
        const int continuations = continuationCount(lead);
        bool complete =
            continuations >= 0 && text.size() - offset > static_cast<size_t>(continuations);
        char32_t value = continuations > 0 ? lead & (0x3F >> continuations) : lead;
        for (int i = 1; complete && i <= continuations; ++i) {
            const auto next = static_cast<uint8_t>(text[offset + static_cast<size_t>(i)]);
            complete = isContinuation(next);
            value = (value << 6) | (next & 0x3F);
        }
        const size_t length = complete ? 1 + static_cast<size_t>(continuations) : 1;
        if (!complete) value = kReplacement;
        codePoints.push_back({value, codePointClasses(value), offset});
        offset += length;
    }
    return codePoints;
}

} // namespace sinkscope
