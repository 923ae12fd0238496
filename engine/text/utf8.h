// The UTF-8 rule the call grammar writes by (RFC 3629): which lead bytes start a character, how
// many continuation bytes follow, and the range of the first of them (which rules out overlong
// forms, surrogates and code points past U+10FFFF); later ones are 0x80-0xBF.
#pragma once

#include <cstdint>
#include <optional>

namespace sinkscope {

struct Utf8Lead {
    int continuationBytes = 0;
    uint8_t firstLow = 0x80;
    uint8_t firstHigh = 0xBF;
};

// ASCII gives no continuation bytes; nullopt for a byte that cannot start a character.
inline std::optional<Utf8Lead> utf8Lead(uint8_t byte) {
    if (byte < 0x80) return Utf8Lead{0, 0, 0};
    if (byte >= 0xC2 && byte <= 0xDF) return Utf8Lead{1, 0x80, 0xBF};
    if (byte == 0xE0) return Utf8Lead{2, 0xA0, 0xBF};
    if (byte == 0xED) return Utf8Lead{2, 0x80, 0x9F};
    if (byte >= 0xE1 && byte <= 0xEF) return Utf8Lead{2, 0x80, 0xBF};
    if (byte == 0xF0) return Utf8Lead{3, 0x90, 0xBF};
    if (byte >= 0xF1 && byte <= 0xF3) return Utf8Lead{3, 0x80, 0xBF};
    if (byte == 0xF4) return Utf8Lead{3, 0x80, 0x8F};
    return std::nullopt;
}

} // namespace sinkscope
