// Jinja source to tokens, with jinja2's whitespace rules as Hugging Face configures them:
//   - newlines are normalized to \n and one trailing newline is dropped;
//   - {%- {{- {#- strip all whitespace before the tag, -%} -}} -#} all whitespace after it;
//   - trim_blocks: a block or comment tag's end eats the one \n right after it (not after }});
//   - lstrip_blocks: spaces and tabs from the start of a line up to a block or comment tag go,
//     unless the tag opens with {%+ (and +%} keeps the \n);
//   - {% raw %}...{% endraw %} is text;
//   - inside a tag, }} or %} only ends it when every bracket opened in it is closed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sinkscope::jinja {

enum class TokenKind {
    Text,
    VariableBegin, // {{
    VariableEnd,   // }}
    BlockBegin,    // {%
    BlockEnd,      // %}
    Name,
    String,
    Integer,
    Float,
    Operator,
    End,
};

struct Token {
    TokenKind kind = TokenKind::End;
    size_t offset = 0; // byte offset into the normalized source
    std::string text;  // Text: the data; Name, Operator: as written; String: the decoded value
    int64_t integer = 0;
    double number = 0;
};

// \r\n and \r become \n; one trailing \n goes (jinja2's keep_trailing_newline=False).
std::string normalizeSource(std::string_view source);

// Tokens of a normalized, valid UTF-8 source, ending with an End token. Throws Failure.
std::vector<Token> tokenize(const std::string& source);

// 1-based line and column (in code points) of a byte offset.
std::pair<int, int> lineAndColumn(std::string_view source, size_t offset);

} // namespace sinkscope::jinja
