// Where things are in a JSON text: the line and column of a byte offset, and the offset of the
// value a JSON pointer (RFC 6901, "/2/parameters/properties/brightness/type") names. nlohmann's
// values carry no positions, so schema errors found on the parsed value are placed back into the
// text here, for an editor to mark them in place. Pure functions over bytes.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sinkscope {

struct TextPosition {
    int line = 1;   // 1-based
    int column = 1; // 1-based, in bytes from the start of the line
};

TextPosition textPosition(std::string_view text, size_t offset);

// "/a~1b/0" -> {"a/b", "0"}; nullopt when the pointer is not "" and does not start with '/', or
// has a '~' not followed by 0 or 1.
std::optional<std::vector<std::string>> splitJsonPointer(std::string_view pointer);
// One reference token escaped for a pointer: "~" -> "~0", "/" -> "~1".
std::string escapeJsonPointerToken(std::string_view token);

// The byte offset where the value named by `pointer` starts in `json` (its first byte: '{', '"',
// a digit...). nullopt when the text is not well-formed along the way or the pointer names
// nothing. For duplicate object keys, the first occurrence.
std::optional<size_t> locateJsonPointer(std::string_view json, std::string_view pointer);

// The offset of the first '[' or '{' that opens a container nested deeper than `maxDepth`
// (outside strings); nullopt when none does. Lets callers refuse documents whose depth would make
// recursive code (copying, printing) run out of stack.
std::optional<size_t> firstOffsetDeeperThan(std::string_view json, int maxDepth);

} // namespace sinkscope
