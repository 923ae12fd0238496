// Python's view of text for the Jinja interpreter. Strings are UTF-8 (checked where they enter:
// the template source and the context), while Python counts, indexes and slices code points and
// has its own idea of whitespace and line breaks; these helpers bridge the two.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sinkscope::jinja {

// The code point at `offset` of valid UTF-8; moves `offset` past it.
char32_t nextCodePoint(std::string_view text, size_t& offset);
void appendCodePoint(std::string& out, char32_t codePoint);
// The byte offset of the first malformed sequence, or npos when the text is valid UTF-8.
size_t invalidUtf8Offset(std::string_view text);
size_t codePointCount(std::string_view text);
// Byte offset of every code point, then text.size(): [count + 1].
std::vector<size_t> codePointStarts(std::string_view text);
// Code points from `begin` to `end` (byte offsets).
size_t codePointsBetween(std::string_view text, size_t begin, size_t end);

bool isPythonSpace(char32_t codePoint);     // str.isspace()
bool isPythonLineBreak(char32_t codePoint); // where str.splitlines() splits
// Letters, digits and underscore as re's \w sees them; beyond ASCII every code point that is not
// whitespace counts (an approximation of Unicode's letter and number categories).
bool isWordCharacter(char32_t codePoint);

// str.strip / lstrip / rstrip: whitespace, or any code point of `chars`.
std::string_view stripText(std::string_view text, bool left, bool right);
std::string_view stripChars(std::string_view text, std::string_view chars, bool left, bool right);

// Case mapping of ASCII, Latin-1, Greek and Cyrillic letters (other scripts stay as they are).
char32_t upperCase(char32_t codePoint);
char32_t lowerCase(char32_t codePoint);
bool hasCase(char32_t codePoint); // a letter with distinct upper and lower forms
std::string upperText(std::string_view text);
std::string lowerText(std::string_view text);
std::string capitalizeText(std::string_view text); // str.capitalize()
std::string titleText(std::string_view text);      // str.title()
// str.islower() / str.isupper(): some cased letter, and none of the other case.
bool isLowerText(std::string_view text);
bool isUpperText(std::string_view text);

// str.splitlines() without the line ends.
std::vector<std::string_view> splitLines(std::string_view text);

} // namespace sinkscope::jinja
