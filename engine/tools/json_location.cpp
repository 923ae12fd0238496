#include "tools/json_location.h"

#include <nlohmann/json.hpp>

namespace sinkscope {

namespace {

bool isJsonSpace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// A forward-only reader over JSON text that skips values without building them.
class JsonScanner {
public:
    explicit JsonScanner(std::string_view text) : m_text(text) {}

    size_t offset() const { return m_offset; }
    char peek() const { return m_offset < m_text.size() ? m_text[m_offset] : '\0'; }

    void skipSpace() {
        while (m_offset < m_text.size() && isJsonSpace(m_text[m_offset]))
            ++m_offset;
    }
    bool consume(char expected) {
        skipSpace();
        if (peek() != expected) return false;
        ++m_offset;
        return true;
    }
    // At an opening quote: moves past the closing one.
    bool skipString() {
        if (peek() != '"') return false;
        for (++m_offset; m_offset < m_text.size(); ++m_offset) {
            if (m_text[m_offset] == '\\') {
                ++m_offset;
            } else if (m_text[m_offset] == '"') {
                ++m_offset;
                return true;
            }
        }
        return false;
    }
    // The decoded text of the string that starts here (escapes resolved); moves past it.
    std::optional<std::string> readString() {
        const size_t start = m_offset;
        if (!skipString()) return std::nullopt;
        const std::string_view raw = m_text.substr(start, m_offset - start);
        if (raw.find('\\') == std::string_view::npos)
            return std::string(raw.substr(1, raw.size() - 2));
        const nlohmann::json decoded = nlohmann::json::parse(raw, nullptr, false);
        if (!decoded.is_string()) return std::nullopt;
        return decoded.get<std::string>();
    }
    // Moves past one value of any kind; containers by counting brackets outside strings.
    bool skipValue() {
        skipSpace();
        const char first = peek();
        if (first == '"') return skipString();
        if (first != '{' && first != '[') {
            const size_t start = m_offset;
            while (m_offset < m_text.size() && !isJsonSpace(peek()) && peek() != ',' &&
                   peek() != ']' && peek() != '}')
                ++m_offset;
            return m_offset > start;
        }
        int depth = 0;
        while (m_offset < m_text.size()) {
            const char c = peek();
            if (c == '"') {
                if (!skipString()) return false;
                continue;
            }
            if (c == '{' || c == '[') ++depth;
            if (c == '}' || c == ']') --depth;
            ++m_offset;
            if (depth == 0) return true;
        }
        return false;
    }
    // Inside an object whose '{' was consumed: moves to the value of member `key`.
    bool enterMember(std::string_view key) {
        skipSpace();
        if (peek() == '}') return false;
        while (true) {
            skipSpace();
            const std::optional<std::string> name = readString();
            if (!name || !consume(':')) return false;
            skipSpace();
            if (*name == key) return true;
            if (!skipValue() || !consume(',')) return false;
        }
    }
    // Inside an array whose '[' was consumed: moves to element `index`.
    bool enterElement(size_t index) {
        skipSpace();
        if (peek() == ']') return false;
        for (size_t i = 0; i < index; ++i)
            if (!skipValue() || !consume(',')) return false;
        skipSpace();
        return true;
    }

private:
    std::string_view m_text;
    size_t m_offset = 0;
};

// "0", "12": an array index as a pointer writes it (no sign, no leading zeros).
std::optional<size_t> arrayIndex(std::string_view token) {
    if (token.empty() || token.size() > 9 || (token.size() > 1 && token[0] == '0'))
        return std::nullopt;
    size_t index = 0;
    for (const char c : token) {
        if (c < '0' || c > '9') return std::nullopt;
        index = index * 10 + static_cast<size_t>(c - '0');
    }
    return index;
}

} // namespace

TextPosition textPosition(std::string_view text, size_t offset) {
    TextPosition position;
    const size_t end = std::min(offset, text.size());
    size_t lineStart = 0;
    for (size_t i = 0; i < end; ++i) {
        if (text[i] == '\n') {
            ++position.line;
            lineStart = i + 1;
        }
    }
    position.column = static_cast<int>(end - lineStart) + 1;
    return position;
}

std::optional<size_t> firstOffsetDeeperThan(std::string_view json, int maxDepth) {
    int depth = 0;
    bool inString = false;
    for (size_t i = 0; i < json.size(); ++i) {
        const char c = json[i];
        if (inString) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                inString = false;
        } else if (c == '"') {
            inString = true;
        } else if (c == '[' || c == '{') {
            if (++depth > maxDepth) return i;
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return std::nullopt;
}

std::optional<std::vector<std::string>> splitJsonPointer(std::string_view pointer) {
    std::vector<std::string> tokens;
    if (pointer.empty()) return tokens;
    if (pointer.front() != '/') return std::nullopt;
    std::string current;
    for (size_t i = 1; i <= pointer.size(); ++i) {
        if (i == pointer.size() || pointer[i] == '/') {
            tokens.push_back(std::move(current));
            current.clear();
        } else if (pointer[i] == '~') {
            if (i + 1 >= pointer.size() || (pointer[i + 1] != '0' && pointer[i + 1] != '1'))
                return std::nullopt;
            current += pointer[++i] == '0' ? '~' : '/';
        } else {
            current += pointer[i];
        }
    }
    return tokens;
}

std::string escapeJsonPointerToken(std::string_view token) {
    std::string escaped;
    for (const char c : token) {
        if (c == '~')
            escaped += "~0";
        else if (c == '/')
            escaped += "~1";
        else
            escaped += c;
    }
    return escaped;
}

std::optional<size_t> locateJsonPointer(std::string_view json, std::string_view pointer) {
    const std::optional<std::vector<std::string>> tokens = splitJsonPointer(pointer);
    if (!tokens) return std::nullopt;
    JsonScanner scanner(json);
    scanner.skipSpace();
    for (const std::string& token : *tokens) {
        if (scanner.consume('{')) {
            if (!scanner.enterMember(token)) return std::nullopt;
        } else if (scanner.consume('[')) {
            const std::optional<size_t> index = arrayIndex(token);
            if (!index || !scanner.enterElement(*index)) return std::nullopt;
        } else {
            return std::nullopt;
        }
    }
    scanner.skipSpace();
    if (scanner.offset() >= json.size()) return std::nullopt;
    return scanner.offset();
}

} // namespace sinkscope
