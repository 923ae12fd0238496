#include "jinja/builtins/jinja_text.h"

#include "text/utf8.h"

#include <cstdint>

namespace sinkscope::jinja {

char32_t nextCodePoint(std::string_view text, size_t& offset) {
    const auto lead = static_cast<uint8_t>(text[offset++]);
    if (lead < 0x80) return lead;
    int continuation = lead >= 0xF0 ? 3 : lead >= 0xE0 ? 2 : 1;
    char32_t codePoint = lead & (0x3F >> continuation);
    for (; continuation > 0 && offset < text.size(); --continuation)
        codePoint = (codePoint << 6) | (static_cast<uint8_t>(text[offset++]) & 0x3F);
    return codePoint;
}

void appendCodePoint(std::string& out, char32_t codePoint) {
    if (codePoint < 0x80) {
        out += static_cast<char>(codePoint);
    } else if (codePoint < 0x800) {
        out += static_cast<char>(0xC0 | (codePoint >> 6));
        out += static_cast<char>(0x80 | (codePoint & 0x3F));
    } else if (codePoint < 0x10000) {
        out += static_cast<char>(0xE0 | (codePoint >> 12));
        out += static_cast<char>(0x80 | ((codePoint >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (codePoint & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (codePoint >> 18));
        out += static_cast<char>(0x80 | ((codePoint >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((codePoint >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (codePoint & 0x3F));
    }
}

size_t invalidUtf8Offset(std::string_view text) {
    size_t offset = 0;
    while (offset < text.size()) {
        const auto lead = utf8Lead(static_cast<uint8_t>(text[offset]));
        if (!lead) return offset;
        if (static_cast<size_t>(lead->continuationBytes) >= text.size() - offset) return offset;
        for (int i = 1; i <= lead->continuationBytes; ++i) {
            const auto byte = static_cast<uint8_t>(text[offset + static_cast<size_t>(i)]);
            const uint8_t low = i == 1 ? lead->firstLow : 0x80;
            const uint8_t high = i == 1 ? lead->firstHigh : 0xBF;
            if (byte < low || byte > high) return offset;
        }
        offset += static_cast<size_t>(lead->continuationBytes) + 1;
    }
    return std::string_view::npos;
}

size_t codePointCount(std::string_view text) {
    return codePointsBetween(text, 0, text.size());
}

size_t codePointsBetween(std::string_view text, size_t begin, size_t end) {
    size_t count = 0;
    for (size_t i = begin; i < end; ++i)
        if ((static_cast<uint8_t>(text[i]) & 0xC0) != 0x80) ++count;
    return count;
}

std::vector<size_t> codePointStarts(std::string_view text) {
    std::vector<size_t> starts;
    starts.reserve(text.size() + 1);
    for (size_t i = 0; i < text.size(); ++i)
        if ((static_cast<uint8_t>(text[i]) & 0xC0) != 0x80) starts.push_back(i);
    starts.push_back(text.size());
    return starts;
}

bool isPythonSpace(char32_t c) {
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
           c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
           c == 0x202F || c == 0x205F || c == 0x3000;
}

bool isPythonLineBreak(char32_t c) {
    return (c >= 0x0A && c <= 0x0D) || (c >= 0x1C && c <= 0x1E) || c == 0x85 || c == 0x2028 ||
           c == 0x2029;
}

bool isWordCharacter(char32_t c) {
    if (c < 0x80)
        return c == '_' || (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
    return !isPythonSpace(c);
}

namespace {

// Whether the code point starting at byte `i` should go: whitespace, or one of `chars`.
template <typename Strippable>
std::string_view stripWith(std::string_view text, bool left, bool right, Strippable strippable) {
    size_t begin = 0;
    size_t end = text.size();
    if (left) {
        while (begin < end) {
            size_t next = begin;
            if (!strippable(nextCodePoint(text, next))) break;
            begin = next;
        }
    }
    if (right) {
        while (end > begin) {
            size_t start = end - 1;
            while (start > begin && (static_cast<uint8_t>(text[start]) & 0xC0) == 0x80)
                --start;
            size_t next = start;
            if (!strippable(nextCodePoint(text, next))) break;
            end = start;
        }
    }
    return text.substr(begin, end - begin);
}

} // namespace

std::string_view stripText(std::string_view text, bool left, bool right) {
    return stripWith(text, left, right, isPythonSpace);
}

std::string_view stripChars(std::string_view text, std::string_view chars, bool left, bool right) {
    std::vector<char32_t> set;
    for (size_t i = 0; i < chars.size();)
        set.push_back(nextCodePoint(chars, i));
    return stripWith(text, left, right, [&set](char32_t c) {
        for (const char32_t s : set)
            if (s == c) return true;
        return false;
    });
}

char32_t upperCase(char32_t c) {
    if (c >= 'a' && c <= 'z') return c - 0x20;
    if (c < 0x80) return c;
    if ((c >= 0xE0 && c <= 0xFE && c != 0xF7) || (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2) ||
        (c >= 0x430 && c <= 0x44F))
        return c - 0x20;
    if (c == 0xFF) return 0x178;
    if (c == 0xB5) return 0x39C;
    if (c == 0x3C2) return 0x3A3;
    if (c >= 0x450 && c <= 0x45F) return c - 0x50;
    return c;
}

char32_t lowerCase(char32_t c) {
    if (c >= 'A' && c <= 'Z') return c + 0x20;
    if (c < 0x80) return c;
    if ((c >= 0xC0 && c <= 0xDE && c != 0xD7) || (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) ||
        (c >= 0x410 && c <= 0x42F))
        return c + 0x20;
    if (c == 0x178) return 0xFF;
    if (c >= 0x400 && c <= 0x40F) return c + 0x50;
    return c;
}

bool hasCase(char32_t c) {
    return upperCase(c) != c || lowerCase(c) != c || c == 0xDF;
}

namespace {

// Python's full mapping writes U+00DF (sharp s) as "SS" in upper case.
void appendUpper(std::string& out, char32_t c) {
    if (c == 0xDF) {
        out += "SS";
        return;
    }
    appendCodePoint(out, upperCase(c));
}

} // namespace

std::string upperText(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();)
        appendUpper(out, nextCodePoint(text, i));
    return out;
}

std::string lowerText(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();)
        appendCodePoint(out, lowerCase(nextCodePoint(text, i)));
    return out;
}

std::string capitalizeText(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
        const bool first = i == 0;
        const char32_t c = nextCodePoint(text, i);
        if (first)
            appendUpper(out, c);
        else
            appendCodePoint(out, lowerCase(c));
    }
    return out;
}

std::string titleText(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    bool previousCased = false;
    for (size_t i = 0; i < text.size();) {
        const char32_t c = nextCodePoint(text, i);
        if (previousCased)
            appendCodePoint(out, lowerCase(c));
        else
            appendUpper(out, c);
        previousCased = hasCase(c);
    }
    return out;
}

namespace {

bool hasOnlyCase(std::string_view text, bool lower) {
    bool cased = false;
    for (size_t i = 0; i < text.size();) {
        const char32_t c = nextCodePoint(text, i);
        if (!hasCase(c)) continue;
        const bool isLower = c == 0xDF || upperCase(c) != c;
        if (isLower != lower) return false;
        cased = true;
    }
    return cased;
}

} // namespace

bool isLowerText(std::string_view text) {
    return hasOnlyCase(text, true);
}

bool isUpperText(std::string_view text) {
    return hasOnlyCase(text, false);
}

std::vector<std::string_view> splitLines(std::string_view text) {
    std::vector<std::string_view> lines;
    size_t start = 0;
    size_t i = 0;
    while (i < text.size()) {
        const size_t at = i;
        const char32_t c = nextCodePoint(text, i);
        if (!isPythonLineBreak(c)) continue;
        lines.push_back(text.substr(start, at - start));
        if (c == '\r' && i < text.size() && text[i] == '\n') ++i;
        start = i;
    }
    if (start < text.size()) lines.push_back(text.substr(start));
    return lines;
}

} // namespace sinkscope::jinja
