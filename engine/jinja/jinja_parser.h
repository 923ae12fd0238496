// Tokens to a syntax tree, by jinja2's grammar: its operator precedence (`**` binds left to
// right and looser than unary minus, filters tighter than every operator, tests right after
// them), adjacent string literals joined, `x is test arg` with one argument without
// parentheses, unknown filters and tests refused when parsing unless they sit inside an `if`
// or a conditional expression (jinja2 then only fails when they are reached).
#pragma once

#include "jinja/jinja_ast.h"
#include "jinja/jinja_lexer.h"

#include <initializer_list>
#include <memory>
#include <string_view>
#include <vector>

namespace sinkscope::jinja {

// Throws Failure, with the offset of what is wrong.
std::unique_ptr<Program> parseProgram(std::string_view source, const JinjaLimits& limits);

class Parser {
public:
    Parser(const std::vector<Token>& tokens, const JinjaLimits& limits);
    Body parseTemplate();

private:
    struct OpenBlock; // a block statement being parsed, for end-of-template messages
    struct Subscript;

    // Statements (jinja_parser.cpp).
    Body parseBody(std::initializer_list<std::string_view> endTags, const OpenBlock* block);
    std::unique_ptr<Node> parseStatement(const OpenBlock* enclosing);
    std::unique_ptr<Node> parseIf(size_t offset);
    std::unique_ptr<Node> parseFor(size_t offset);
    std::unique_ptr<Node> parseSet(size_t offset);
    std::unique_ptr<Node> parseMacro(size_t offset);
    std::unique_ptr<Node> parseCallBlock(size_t offset);
    std::unique_ptr<Node> parseFilterBlock(size_t offset);
    std::unique_ptr<Node> parseWith(size_t offset);
    std::string endTag(); // consumes {% name and returns the name
    void parseMacroParameters(MacroDefinition& macro);
    Body parseMacroBody(MacroDefinition& macro, const OpenBlock& block);
    Target parseAssignTarget(bool allowNamespace, bool allowTuple);

    // Expressions (jinja_expression_parser.cpp).
    ExprPtr parseTuple(bool withConditional, std::initializer_list<std::string_view> extraEnds,
                       bool explicitParentheses);
    ExprPtr parseExpression(bool withConditional = true);
    ExprPtr parseConditional();
    ExprPtr parseOr();
    ExprPtr parseAnd();
    ExprPtr parseNot();
    ExprPtr parseCompare();
    ExprPtr parseSum();
    ExprPtr parseConcat();
    ExprPtr parseProduct();
    ExprPtr parsePower();
    ExprPtr parseUnary(bool withFilters);
    ExprPtr parsePrimary();
    ExprPtr parseList();
    ExprPtr parseDict();
    ExprPtr parsePostfix(ExprPtr node);
    ExprPtr parseSubscript(ExprPtr node);
    Subscript parseSubscribed();
    ExprPtr parseFilterExpression(ExprPtr node);
    ExprPtr parseFilters(ExprPtr node, bool startInline);
    ExprPtr parseTest(ExprPtr node);
    ExprPtr parseCall(ExprPtr callee);
    CallArguments parseCallArguments();
    std::string parseDottedName();
    ExprPtr makeExpr(ExprKind kind, size_t offset, std::vector<ExprPtr> operands = {});
    void finish(Expr& expr); // computes depth, checks it against the limit

    // Tokens.
    const Token& current() const { return m_tokens[m_position]; }
    const Token& peek() const;
    void advance();
    bool isName(std::string_view name) const;
    bool isOperator(std::string_view op) const;
    void expectOperator(std::string_view op);
    void expect(TokenKind kind, std::string_view what);
    std::string expectName();
    [[noreturn]] void unexpected(std::string_view expected) const;

    const std::vector<Token>& m_tokens;
    size_t m_position = 0;
    JinjaLimits m_limits;
    int m_blockDepth = 0;
    int m_expressionDepth = 0;
    int m_loopDepth = 0; // for loops around the statement being parsed, within its macro
    std::vector<MacroDefinition*> m_macros; // being parsed, innermost last
};

// Describes a token as jinja2's messages do: "end of print statement", "'foo'".
std::string describeToken(const Token& token);

} // namespace sinkscope::jinja
