// The statement half of the parser, the check of filter and test names, and parseProgram.
#include "jinja/jinja_parser.h"

#include "jinja/builtins/jinja_builtins.h"
#include "jinja/builtins/jinja_text.h"
#include "jinja/jinja_budget.h"

namespace sinkscope::jinja {

struct Parser::OpenBlock {
    std::string_view name;
    size_t offset;
    std::initializer_list<std::string_view> endTags;
};

namespace {

std::string lookingFor(std::initializer_list<std::string_view> tags, std::string_view block) {
    std::string text = " Jinja was looking for the following tags: ";
    bool first = true;
    for (const std::string_view tag : tags) {
        text += (first ? "'" : " or '") + std::string(tag) + "'";
        first = false;
    }
    return text + ". The innermost block that needs to be closed is '" + std::string(block) + "'.";
}

} // namespace

Parser::Parser(const std::vector<Token>& tokens, const JinjaLimits& limits)
    : m_tokens(tokens), m_limits(limits) {}

Body Parser::parseTemplate() {
    return parseBody({}, nullptr);
}

Body Parser::parseBody(std::initializer_list<std::string_view> endTags, const OpenBlock* block) {
    Body body;
    while (true) {
        const Token& token = current();
        switch (token.kind) {
        case TokenKind::Text: {
            auto node = std::make_unique<Node>();
            node->kind = NodeKind::Text;
            node->offset = token.offset;
            node->text = token.text;
            body.push_back(std::move(node));
            advance();
            break;
        }
        case TokenKind::VariableBegin: {
            auto node = std::make_unique<Node>();
            node->kind = NodeKind::Output;
            node->offset = token.offset;
            advance();
            node->expression = parseTuple(true, {}, false);
            expect(TokenKind::VariableEnd, "end of print statement");
            body.push_back(std::move(node));
            break;
        }
        case TokenKind::BlockBegin: {
            const Token& name = peek();
            if (name.kind == TokenKind::Name)
                for (const std::string_view tag : endTags)
                    if (name.text == tag) return body;
            body.push_back(parseStatement(block));
            break;
        }
        case TokenKind::End:
            if (block)
                fail("Unexpected end of template." + lookingFor(endTags, block->name),
                     block->offset);
            return body;
        default:
            unexpected("template data or a tag");
        }
    }
}

std::unique_ptr<Node> Parser::parseStatement(const OpenBlock* enclosing) {
    const size_t offset = current().offset;
    advance(); // {%
    if (current().kind != TokenKind::Name) unexpected("a tag name");
    const std::string tag = current().text;
    const auto simple = [&](NodeKind kind) {
        advance();
        expect(TokenKind::BlockEnd, "end of statement block");
        auto node = std::make_unique<Node>();
        node->kind = kind;
        node->offset = offset;
        return node;
    };
    if (tag == "break" || tag == "continue") {
        if (m_loopDepth == 0) fail("'" + tag + "' outside of a for loop", offset);
        return simple(tag == "break" ? NodeKind::Break : NodeKind::Continue);
    }
    if (tag == "set") return parseSet(offset);
    if (++m_blockDepth > m_limits.maxNesting)
        fail("blocks nest deeper than " + std::to_string(m_limits.maxNesting) + " levels", offset);
    std::unique_ptr<Node> node;
    if (tag == "if") {
        node = parseIf(offset);
    } else if (tag == "for") {
        node = parseFor(offset);
    } else if (tag == "macro") {
        node = parseMacro(offset);
    } else if (tag == "call") {
        node = parseCallBlock(offset);
    } else if (tag == "filter") {
        node = parseFilterBlock(offset);
    } else if (tag == "with") {
        node = parseWith(offset);
    } else if (tag == "generation") {
        node = simple(NodeKind::Scope);
        const OpenBlock block{"generation", offset, {"endgeneration"}};
        node->body = parseBody(block.endTags, &block);
        endTag();
        expect(TokenKind::BlockEnd, "end of statement block");
    } else {
        std::string message = "Encountered unknown tag '" + tag + "'.";
        if (enclosing) message += lookingFor(enclosing->endTags, enclosing->name);
        fail(message, current().offset);
    }
    --m_blockDepth;
    return node;
}

std::string Parser::endTag() {
    advance(); // {%
    return expectName();
}

std::unique_ptr<Node> Parser::parseIf(size_t offset) {
    auto node = std::make_unique<Node>();
    node->kind = NodeKind::If;
    node->offset = offset;
    advance(); // if
    ExprPtr condition = parseTuple(false, {}, false);
    while (true) {
        expect(TokenKind::BlockEnd, "end of statement block");
        const OpenBlock block{"if", offset, {"elif", "else", "endif"}};
        Body body = parseBody(block.endTags, &block);
        node->branches.emplace_back(std::move(condition), std::move(body));
        const std::string tag = endTag();
        if (tag == "elif") {
            condition = parseTuple(false, {}, false);
            continue;
        }
        if (tag == "else") {
            expect(TokenKind::BlockEnd, "end of statement block");
            const OpenBlock elseBlock{"if", offset, {"endif"}};
            node->branches.emplace_back(nullptr, parseBody(elseBlock.endTags, &elseBlock));
            endTag();
        }
        expect(TokenKind::BlockEnd, "end of statement block");
        return node;
    }
}

Target Parser::parseAssignTarget(bool allowNamespace, bool allowTuple) {
    Target target;
    const bool parenthesized = allowTuple && isOperator("(");
    if (parenthesized) advance();
    target.names.push_back(expectName());
    if (allowNamespace && isOperator(".")) {
        advance();
        target.attribute = expectName();
        return target;
    }
    while (allowTuple && isOperator(",")) {
        advance();
        if (current().kind != TokenKind::Name) break;
        target.names.push_back(expectName());
    }
    if (parenthesized) expectOperator(")");
    for (const std::string& name : target.names)
        if (name == "true" || name == "false" || name == "none" || name == "True" ||
            name == "False" || name == "None")
            fail("can't assign to '" + name + "'", current().offset);
    return target;
}

std::unique_ptr<Node> Parser::parseFor(size_t offset) {
    auto node = std::make_unique<Node>();
    node->kind = NodeKind::For;
    node->offset = offset;
    advance(); // for
    node->target = parseAssignTarget(false, true);
    if (!isName("in")) unexpected("'in'");
    advance();
    node->expression = parseTuple(false, {"recursive"}, false);
    if (isName("if")) {
        advance();
        node->condition = parseExpression();
    }
    if (isName("recursive")) fail("recursive loops are not supported", current().offset);
    expect(TokenKind::BlockEnd, "end of statement block");
    ++m_loopDepth;
    const OpenBlock block{"for", offset, {"endfor", "else"}};
    node->body = parseBody(block.endTags, &block);
    --m_loopDepth;
    if (endTag() == "else") {
        expect(TokenKind::BlockEnd, "end of statement block");
        const OpenBlock elseBlock{"for", offset, {"endfor"}};
        node->otherwise = parseBody(elseBlock.endTags, &elseBlock);
        endTag();
    }
    expect(TokenKind::BlockEnd, "end of statement block");
    return node;
}

std::unique_ptr<Node> Parser::parseSet(size_t offset) {
    auto node = std::make_unique<Node>();
    node->offset = offset;
    advance(); // set
    node->target = parseAssignTarget(true, true);
    if (isOperator("=")) {
        advance();
        node->kind = NodeKind::Set;
        node->expression = parseTuple(true, {}, false);
        expect(TokenKind::BlockEnd, "end of statement block");
        return node;
    }
    if (node->target.names.size() != 1) unexpected("'='");
    if (++m_blockDepth > m_limits.maxNesting)
        fail("blocks nest deeper than " + std::to_string(m_limits.maxNesting) + " levels", offset);
    node->kind = NodeKind::SetBlock;
    if (isOperator("|")) node->expression = parseFilters(nullptr, false);
    expect(TokenKind::BlockEnd, "end of statement block");
    const OpenBlock block{"set", offset, {"endset"}};
    node->body = parseBody(block.endTags, &block);
    endTag();
    expect(TokenKind::BlockEnd, "end of statement block");
    --m_blockDepth;
    return node;
}

void Parser::parseMacroParameters(MacroDefinition& macro) {
    expectOperator("(");
    while (!isOperator(")")) {
        if (!macro.parameters.empty()) expectOperator(",");
        if (isOperator(")")) break;
        const size_t offset = current().offset;
        std::string name = expectName();
        for (const std::string& existing : macro.parameters)
            if (existing == name) fail("duplicate argument '" + name + "' in macro", offset);
        macro.parameters.push_back(std::move(name));
        if (isOperator("=")) {
            advance();
            macro.defaults.push_back(parseExpression());
        } else {
            if (!macro.defaults.empty() && macro.defaults.back())
                fail("non-default argument follows default argument", offset);
            macro.defaults.push_back(nullptr);
        }
    }
    expectOperator(")");
}

// Macro bodies start a new scope for break and continue, and collect varargs/kwargs/caller use.
Body Parser::parseMacroBody(MacroDefinition& macro, const OpenBlock& block) {
    const int loops = m_loopDepth;
    m_loopDepth = 0;
    m_macros.push_back(&macro);
    Body body = parseBody(block.endTags, &block);
    m_macros.pop_back();
    m_loopDepth = loops;
    endTag();
    expect(TokenKind::BlockEnd, "end of statement block");
    return body;
}

std::unique_ptr<Node> Parser::parseMacro(size_t offset) {
    auto node = std::make_unique<Node>();
    node->kind = NodeKind::Macro;
    node->offset = offset;
    node->macro = std::make_unique<MacroDefinition>();
    advance(); // macro
    node->macro->name = expectName();
    parseMacroParameters(*node->macro);
    expect(TokenKind::BlockEnd, "end of statement block");
    const OpenBlock block{"macro", offset, {"endmacro"}};
    node->macro->body = parseMacroBody(*node->macro, block);
    return node;
}

std::unique_ptr<Node> Parser::parseCallBlock(size_t offset) {
    auto node = std::make_unique<Node>();
    node->kind = NodeKind::CallBlock;
    node->offset = offset;
    node->macro = std::make_unique<MacroDefinition>();
    node->macro->name = "caller";
    advance(); // call
    if (isOperator("(")) parseMacroParameters(*node->macro);
    node->expression = parseExpression();
    if (node->expression->kind != ExprKind::Call) fail("expected call", node->expression->offset);
    expect(TokenKind::BlockEnd, "end of statement block");
    const OpenBlock block{"call", offset, {"endcall"}};
    node->macro->body = parseMacroBody(*node->macro, block);
    return node;
}

std::unique_ptr<Node> Parser::parseFilterBlock(size_t offset) {
    auto node = std::make_unique<Node>();
    node->kind = NodeKind::FilterBlock;
    node->offset = offset;
    advance(); // filter
    node->expression = parseFilters(nullptr, true);
    expect(TokenKind::BlockEnd, "end of statement block");
    const OpenBlock block{"filter", offset, {"endfilter"}};
    node->body = parseBody(block.endTags, &block);
    endTag();
    expect(TokenKind::BlockEnd, "end of statement block");
    return node;
}

std::unique_ptr<Node> Parser::parseWith(size_t offset) {
    auto node = std::make_unique<Node>();
    node->kind = NodeKind::With;
    node->offset = offset;
    advance(); // with
    while (current().kind != TokenKind::BlockEnd) {
        if (!node->assignments.empty()) expectOperator(",");
        Target target = parseAssignTarget(false, false);
        expectOperator("=");
        node->assignments.emplace_back(std::move(target), parseExpression());
    }
    advance();
    const OpenBlock block{"with", offset, {"endwith"}};
    node->body = parseBody(block.endTags, &block);
    endTag();
    expect(TokenKind::BlockEnd, "end of statement block");
    return node;
}
const Token& Parser::peek() const {
    return m_tokens[std::min(m_position + 1, m_tokens.size() - 1)];
}

void Parser::advance() {
    if (m_position + 1 < m_tokens.size()) ++m_position;
}

bool Parser::isName(std::string_view name) const {
    return current().kind == TokenKind::Name && current().text == name;
}

bool Parser::isOperator(std::string_view op) const {
    return current().kind == TokenKind::Operator && current().text == op;
}

void Parser::expectOperator(std::string_view op) {
    if (!isOperator(op)) unexpected("'" + std::string(op) + "'");
    advance();
}

void Parser::expect(TokenKind kind, std::string_view what) {
    if (current().kind != kind) unexpected(what);
    advance();
}

std::string Parser::expectName() {
    if (current().kind != TokenKind::Name) unexpected("name");
    std::string name = current().text;
    advance();
    return name;
}

void Parser::unexpected(std::string_view expected) const {
    fail("expected " + std::string(expected) + ", got '" + describeToken(current()) + "'",
         current().offset);
}

std::string describeToken(const Token& token) {
    switch (token.kind) {
    case TokenKind::Text:
        return "template data";
    case TokenKind::VariableBegin:
        return "begin of print statement";
    case TokenKind::VariableEnd:
        return "end of print statement";
    case TokenKind::BlockBegin:
        return "begin of statement block";
    case TokenKind::BlockEnd:
        return "end of statement block";
    case TokenKind::String:
        return "string";
    case TokenKind::End:
        return "end of template";
    default:
        return token.text;
    }
}

namespace {

// jinja2 refuses an unknown filter or test when compiling, except inside an `if` statement or a
// conditional expression ("soft" frames), where only reaching it fails. Loops, macros and the
// other blocks start a frame that is not soft again.
void checkNames(const Expr* expr, bool soft);

void checkArguments(const CallArguments& arguments, bool soft) {
    for (const ExprPtr& argument : arguments.positional)
        checkNames(argument.get(), soft);
    for (const auto& keyword : arguments.keywords)
        checkNames(keyword.second.get(), soft);
}

void checkNames(const Expr* expr, bool soft) {
    if (!expr) return;
    if (expr->kind == ExprKind::Conditional) soft = true;
    if (!soft && expr->kind == ExprKind::Filter && !findFilter(expr->name))
        fail("No filter named '" + expr->name + "'.", expr->offset);
    if (!soft && expr->kind == ExprKind::Test && !findTest(expr->name))
        fail("No test named '" + expr->name + "'.", expr->offset);
    for (const ExprPtr& operand : expr->operands)
        checkNames(operand.get(), soft);
    checkArguments(expr->arguments, soft);
}

void checkNames(const Body& body, bool soft) {
    for (const auto& node : body) {
        checkNames(node->expression.get(),
                   soft && node->kind != NodeKind::FilterBlock && node->kind != NodeKind::SetBlock);
        checkNames(node->condition.get(), false);
        for (const auto& assignment : node->assignments)
            checkNames(assignment.second.get(), soft);
        for (const auto& [condition, branch] : node->branches) {
            checkNames(condition.get(), true);
            checkNames(branch, true);
        }
        checkNames(node->body, false);
        checkNames(node->otherwise, false);
        if (node->macro) {
            for (const ExprPtr& defaultValue : node->macro->defaults)
                checkNames(defaultValue.get(), false);
            checkNames(node->macro->body, false);
        }
    }
}

} // namespace

std::unique_ptr<Program> parseProgram(std::string_view source, const JinjaLimits& limits) {
    auto program = std::make_unique<Program>();
    program->limits = limits;
    program->source = normalizeSource(source);
    if (const size_t bad = invalidUtf8Offset(program->source); bad != std::string::npos)
        fail("the template is not valid UTF-8", bad);
    const std::vector<Token> tokens = tokenize(program->source);
    program->body = Parser(tokens, limits).parseTemplate();
    checkNames(program->body, false);
    return program;
}

} // namespace sinkscope::jinja
