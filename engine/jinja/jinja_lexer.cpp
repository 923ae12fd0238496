#include "jinja/jinja_lexer.h"

#include "jinja/builtins/jinja_text.h"
#include "jinja/jinja_budget.h"

#include <charconv>
#include <cmath>

namespace sinkscope::jinja {

std::string normalizeSource(std::string_view source) {
    std::string out;
    out.reserve(source.size());
    for (size_t i = 0; i < source.size(); ++i) {
        if (source[i] == '\r') {
            out += '\n';
            if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
        } else {
            out += source[i];
        }
    }
    if (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
}

std::pair<int, int> lineAndColumn(std::string_view source, size_t offset) {
    offset = std::min(offset, source.size());
    int line = 1;
    size_t lineStart = 0;
    for (size_t i = 0; i < offset; ++i) {
        if (source[i] == '\n') {
            ++line;
            lineStart = i + 1;
        }
    }
    return {line, static_cast<int>(codePointsBetween(source, lineStart, offset)) + 1};
}

namespace {

bool isDigit(char c) {
    return c >= '0' && c <= '9';
}

bool isNameStart(char c) {
    return c == '_' || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
}

int hexDigit(char c) {
    if (isDigit(c)) return c - '0';
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') return (c | 0x20) - 'a' + 10;
    return -1;
}

class Lexer {
public:
    explicit Lexer(const std::string& source) : m_source(source) {}

    std::vector<Token> run() {
        while (m_pos < m_source.size()) {
            const size_t tag = findTagOpen(m_pos);
            if (tag == std::string::npos) {
                emitText(m_pos, std::string_view(m_source).substr(m_pos));
                break;
            }
            const char type = m_source[tag + 1];
            size_t inside = tag + 2;
            char sign = 0;
            if (inside < m_source.size() && (m_source[inside] == '-' || m_source[inside] == '+'))
                sign = m_source[inside++];
            size_t rawBody = 0;
            const bool raw = type == '%' && matchRawOpen(tag, rawBody);
            const std::string_view text(m_source.data() + m_pos, tag - m_pos);
            emitText(m_pos, stripBefore(text, sign, type != '{'));
            if (raw)
                lexRaw(tag, rawBody);
            else if (type == '#')
                lexComment(tag, inside);
            else
                lexTag(type, tag, inside);
        }
        m_tokens.push_back(Token{TokenKind::End, m_source.size(), {}, 0, 0});
        return std::move(m_tokens);
    }

private:
    size_t findTagOpen(size_t from) const {
        for (size_t i = m_source.find('{', from); i != std::string::npos;
             i = m_source.find('{', i + 1)) {
            if (i + 1 < m_source.size() &&
                (m_source[i + 1] == '{' || m_source[i + 1] == '%' || m_source[i + 1] == '#'))
                return i;
        }
        return std::string::npos;
    }

    size_t skipSpace(size_t i) const {
        while (i < m_source.size()) {
            size_t next = i;
            if (!isPythonSpace(nextCodePoint(m_source, next))) break;
            i = next;
        }
        return i;
    }

    bool startsWith(size_t at, std::string_view text) const {
        return m_source.compare(at, text.size(), text) == 0;
    }

    // The text before a tag, after the tag's whitespace control: '-' strips all whitespace,
    // lstrip_blocks the line's leading spaces when nothing else stands before the tag.
    std::string_view stripBefore(std::string_view text, char sign, bool lstrips) const {
        if (sign == '-') return stripText(text, false, true);
        if (sign == '+' || !lstrips) return text;
        const size_t lineStart = text.rfind('\n') + 1;
        if (lineStart == 0 && !m_lineStarting) return text;
        const std::string_view tail = text.substr(lineStart);
        if (!tail.empty() && stripText(tail, true, false).empty()) return text.substr(0, lineStart);
        return text;
    }

    void emitText(size_t offset, std::string_view text) {
        if (!text.empty())
            m_tokens.push_back(Token{TokenKind::Text, offset, std::string(text), 0, 0});
    }

    void finishTag(size_t end) {
        m_pos = end;
        m_lineStarting = m_source[end - 1] == '\n';
    }

    // {%[-+]?\s*raw\s*(-%}\s*|%}) at `tag`; `body` is where the raw text starts.
    bool matchRawOpen(size_t tag, size_t& body) const {
        size_t i = tag + 2;
        if (i < m_source.size() && (m_source[i] == '-' || m_source[i] == '+')) ++i;
        i = skipSpace(i);
        if (!startsWith(i, "raw")) return false;
        i = skipSpace(i + 3);
        if (startsWith(i, "-%}")) {
            body = skipSpace(i + 3);
            return true;
        }
        if (startsWith(i, "%}")) {
            body = i + 2;
            return true;
        }
        return false;
    }

    void lexRaw(size_t tag, size_t body) {
        m_lineStarting = m_source[body - 1] == '\n';
        for (size_t at = m_source.find("{%", body); at != std::string::npos;
             at = m_source.find("{%", at + 1)) {
            size_t i = at + 2;
            char sign = 0;
            if (i < m_source.size() && (m_source[i] == '-' || m_source[i] == '+'))
                sign = m_source[i++];
            i = skipSpace(i);
            if (!startsWith(i, "endraw")) continue;
            i = skipSpace(i + 6);
            size_t end = 0;
            if (startsWith(i, "+%}")) {
                end = i + 3;
            } else if (startsWith(i, "-%}")) {
                end = skipSpace(i + 3);
            } else if (startsWith(i, "%}")) {
                end = i + 2;
                if (end < m_source.size() && m_source[end] == '\n') ++end;
            } else {
                continue;
            }
            emitText(body,
                     stripBefore(std::string_view(m_source).substr(body, at - body), sign, true));
            finishTag(end);
            return;
        }
        fail("Missing end of raw directive", tag);
    }

    void lexComment(size_t tag, size_t body) {
        const size_t close = m_source.find("#}", body);
        if (close == std::string::npos) fail("Missing end of comment tag", tag);
        size_t end = close + 2;
        const char sign = close > body ? m_source[close - 1] : 0;
        if (sign == '-')
            end = skipSpace(end);
        else if (sign != '+' && end < m_source.size() && m_source[end] == '\n')
            ++end;
        finishTag(end);
    }

    // After {{ or {% (and its sign): expression tokens up to the matching end.
    void lexTag(char type, size_t tag, size_t i) {
        const bool block = type == '%';
        m_tokens.push_back(
            Token{block ? TokenKind::BlockBegin : TokenKind::VariableBegin, tag, {}, 0, 0});
        std::string brackets; // the closers expected, innermost last
        while (true) {
            if (i >= m_source.size())
                fail(std::string("unexpected end of template, expected '") +
                         (block ? "end of statement block" : "end of print statement") + "'",
                     tag);
            if (brackets.empty()) {
                size_t end = 0;
                if (block && startsWith(i, "+%}")) {
                    end = i + 3;
                } else if (startsWith(i, block ? "-%}" : "-}}")) {
                    end = skipSpace(i + 3);
                } else if (startsWith(i, block ? "%}" : "}}")) {
                    end = i + 2;
                    if (block && end < m_source.size() && m_source[end] == '\n') ++end;
                }
                if (end > 0) {
                    m_tokens.push_back(
                        Token{block ? TokenKind::BlockEnd : TokenKind::VariableEnd, i, {}, 0, 0});
                    finishTag(end);
                    return;
                }
            }
            const size_t space = skipSpace(i);
            if (space > i) {
                i = space;
                continue;
            }
            i = lexToken(i, brackets);
        }
    }

    size_t lexToken(size_t i, std::string& brackets) {
        const char c = m_source[i];
        if (isDigit(c)) return lexNumber(i);
        if (isNameStart(c)) {
            size_t end = i + 1;
            while (end < m_source.size() && (isNameStart(m_source[end]) || isDigit(m_source[end])))
                ++end;
            m_tokens.push_back(Token{TokenKind::Name, i, m_source.substr(i, end - i), 0, 0});
            return end;
        }
        if (c == '\'' || c == '"') return lexString(i);
        for (const std::string_view op : {"//", "**", "==", "!=", ">=", "<="}) {
            if (startsWith(i, op)) {
                m_tokens.push_back(Token{TokenKind::Operator, i, std::string(op), 0, 0});
                return i + 2;
            }
        }
        if (std::string_view("+-/*%~[](){}><=.:|,;").find(c) == std::string_view::npos) {
            size_t next = i;
            std::string character;
            appendCodePoint(character, nextCodePoint(m_source, next));
            fail("unexpected char '" + character + "'", i);
        }
        if (c == '(' || c == '[' || c == '{') brackets += c == '(' ? ')' : c == '[' ? ']' : '}';
        if (c == ')' || c == ']' || c == '}') {
            if (brackets.empty()) fail(std::string("unexpected '") + c + "'", i);
            if (brackets.back() != c)
                fail(std::string("unexpected '") + c + "', expected '" + brackets.back() + "'", i);
            brackets.pop_back();
        }
        m_tokens.push_back(Token{TokenKind::Operator, i, std::string(1, c), 0, 0});
        return i + 1;
    }

    // Digits with single underscores between them, as jinja2's number patterns allow.
    size_t digitsEnd(size_t i, int base = 10) const {
        const auto isBaseDigit = [base](char c) {
            const int d = hexDigit(c);
            return d >= 0 && d < base;
        };
        size_t end = i;
        while (end < m_source.size()) {
            if (isBaseDigit(m_source[end])) {
                ++end;
            } else if (m_source[end] == '_' && end > i && end + 1 < m_source.size() &&
                       isBaseDigit(m_source[end + 1])) {
                ++end;
            } else {
                break;
            }
        }
        return end;
    }

    // jinja2's decimal zero: 0(_?0)*
    size_t zerosEnd(size_t i) const {
        size_t end = i + 1;
        while (end < m_source.size()) {
            if (m_source[end] == '0')
                ++end;
            else if (m_source[end] == '_' && end + 1 < m_source.size() && m_source[end + 1] == '0')
                end += 2;
            else
                break;
        }
        return end;
    }

    size_t lexNumber(size_t i) {
        const bool afterDot = i > 0 && m_source[i - 1] == '.';
        size_t end = digitsEnd(i);
        if (!afterDot) {
            size_t floatEnd = 0;
            if (end < m_source.size() && m_source[end] == '.' && end + 1 < m_source.size() &&
                isDigit(m_source[end + 1]))
                floatEnd = digitsEnd(end + 1);
            const size_t mantissaEnd = floatEnd ? floatEnd : end;
            if (mantissaEnd < m_source.size() && (m_source[mantissaEnd] | 0x20) == 'e') {
                size_t exponent = mantissaEnd + 1;
                if (exponent < m_source.size() &&
                    (m_source[exponent] == '+' || m_source[exponent] == '-'))
                    ++exponent;
                if (exponent < m_source.size() && isDigit(m_source[exponent]))
                    floatEnd = digitsEnd(exponent);
            }
            if (floatEnd) return emitFloat(i, floatEnd);
        }
        int base = 10;
        size_t digits = i;
        if (m_source[i] == '0' && i + 1 < m_source.size()) {
            const char prefix = static_cast<char>(m_source[i + 1] | 0x20);
            base = prefix == 'b' ? 2 : prefix == 'o' ? 8 : prefix == 'x' ? 16 : 10;
            if (base != 10) {
                digits = i + 2;
                if (digits < m_source.size() && m_source[digits] == '_') ++digits;
                end = digitsEnd(digits, base);
                if (end == digits) base = 10;
            }
        }
        if (base == 10) {
            digits = i;
            end = m_source[i] == '0' ? zerosEnd(i) : digitsEnd(i);
        }
        int64_t value = 0;
        for (size_t k = digits; k < end; ++k) {
            if (m_source[k] == '_') continue;
            if (__builtin_mul_overflow(value, base, &value) ||
                __builtin_add_overflow(value, hexDigit(m_source[k]), &value))
                fail("integer literal too large (this renderer's integers are 64-bit)", i);
        }
        m_tokens.push_back(Token{TokenKind::Integer, i, m_source.substr(i, end - i), value, 0});
        return end;
    }

    size_t emitFloat(size_t i, size_t end) {
        std::string text;
        for (size_t k = i; k < end; ++k)
            if (m_source[k] != '_') text += m_source[k];
        double value = 0;
        const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
        if (result.ec == std::errc::result_out_of_range)
            value = text.find("e-") != std::string::npos || text.find("E-") != std::string::npos
                        ? 0.0
                        : HUGE_VAL;
        m_tokens.push_back(Token{TokenKind::Float, i, m_source.substr(i, end - i), 0, value});
        return end;
    }

    size_t lexString(size_t i);

    const std::string& m_source;
    std::vector<Token> m_tokens;
    size_t m_pos = 0;
    bool m_lineStarting = true; // whether the last tag's end consumed a newline (or none yet)
};

// Python's unicode-escape decoding, as jinja2 applies to string literals: \n \t \\ \' \" \a
// \b \f \r \v, octal \ooo, \xhh, \uhhhh, \Uhhhhhhhh, a backslash-newline vanishes, and any
// other backslash stays as written.
size_t Lexer::lexString(size_t i) {
    const char quote = m_source[i];
    std::string value;
    size_t k = i + 1;
    while (true) {
        if (k >= m_source.size()) fail("unexpected end of template inside a string literal", i);
        const char c = m_source[k];
        if (c == quote) break;
        if (c != '\\') {
            value += c;
            ++k;
            continue;
        }
        if (k + 1 >= m_source.size()) fail("unexpected end of template inside a string literal", i);
        const char e = m_source[k + 1];
        k += 2;
        switch (e) {
        case '\n':
            break;
        case '\\':
            value += '\\';
            break;
        case '\'':
            value += '\'';
            break;
        case '"':
            value += '"';
            break;
        case 'a':
            value += '\a';
            break;
        case 'b':
            value += '\b';
            break;
        case 'f':
            value += '\f';
            break;
        case 'n':
            value += '\n';
            break;
        case 'r':
            value += '\r';
            break;
        case 't':
            value += '\t';
            break;
        case 'v':
            value += '\v';
            break;
        case 'x':
        case 'u':
        case 'U': {
            const int width = e == 'x' ? 2 : e == 'u' ? 4 : 8;
            char32_t codePoint = 0;
            for (int d = 0; d < width; ++d, ++k) {
                const int digit = k < m_source.size() ? hexDigit(m_source[k]) : -1;
                if (digit < 0)
                    fail(std::string("truncated \\") + e + " escape in a string literal", k);
                codePoint = codePoint * 16 + static_cast<char32_t>(digit);
            }
            if (codePoint > 0x10FFFF || (codePoint >= 0xD800 && codePoint <= 0xDFFF))
                fail("a string literal escapes a code point that is not valid text", k);
            appendCodePoint(value, codePoint);
            break;
        }
        default:
            if (e >= '0' && e <= '7') {
                char32_t codePoint = static_cast<char32_t>(e - '0');
                for (int d = 0;
                     d < 2 && k < m_source.size() && m_source[k] >= '0' && m_source[k] <= '7'; ++d)
                    codePoint = codePoint * 8 + static_cast<char32_t>(m_source[k++] - '0');
                appendCodePoint(value, codePoint);
            } else {
                value += '\\';
                k -= 1;
            }
        }
    }
    m_tokens.push_back(Token{TokenKind::String, i, std::move(value), 0, 0});
    return k + 1;
}

} // namespace

std::vector<Token> tokenize(const std::string& source) {
    return Lexer(source).run();
}

} // namespace sinkscope::jinja
