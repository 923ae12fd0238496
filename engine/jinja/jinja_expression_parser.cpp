// The expression half of the parser: jinja2's grammar from conditional expressions down to
// literals, subscripts, calls, filters and tests.
#include "jinja/jinja_budget.h"
#include "jinja/jinja_parser.h"

#include <algorithm>

namespace sinkscope::jinja {

struct Parser::Subscript {
    ExprPtr single;
    bool isSlice = false;
    ExprPtr start, stop, step;
};

namespace {

// Counts one level of recursive descent; the grammar recurses at most 4 x maxNesting deep.
class DescentGuard {
public:
    DescentGuard(int& depth, int limit, size_t offset) : m_depth(depth) {
        if (++m_depth > limit)
            fail("the expression nests deeper than " + std::to_string(limit) + " levels", offset);
    }
    ~DescentGuard() { --m_depth; }
    DescentGuard(const DescentGuard&) = delete;
    DescentGuard& operator=(const DescentGuard&) = delete;

private:
    int& m_depth;
};

int expressionLimit(const JinjaLimits& limits) {
    return 4 * std::max(1, limits.maxNesting);
}

} // namespace

void Parser::finish(Expr& expr) {
    int depth = 0;
    const auto consider = [&depth](const ExprPtr& child) {
        if (child) depth = std::max(depth, child->depth);
    };
    for (const ExprPtr& operand : expr.operands)
        consider(operand);
    for (const ExprPtr& argument : expr.arguments.positional)
        consider(argument);
    for (const auto& keyword : expr.arguments.keywords)
        consider(keyword.second);
    expr.depth = depth + 1;
    if (expr.depth > expressionLimit(m_limits))
        fail("the expression nests deeper than " + std::to_string(expressionLimit(m_limits)) +
                 " levels",
             expr.offset);
}

ExprPtr Parser::makeExpr(ExprKind kind, size_t offset, std::vector<ExprPtr> operands) {
    auto expr = std::make_unique<Expr>();
    expr->kind = kind;
    expr->offset = offset;
    expr->operands = std::move(operands);
    finish(*expr);
    return expr;
}

ExprPtr Parser::parseTuple(bool withConditional, std::initializer_list<std::string_view> extraEnds,
                           bool explicitParentheses) {
    const size_t offset = current().offset;
    std::vector<ExprPtr> items;
    bool isTuple = false;
    const auto atEnd = [&] {
        const TokenKind kind = current().kind;
        if (kind == TokenKind::VariableEnd || kind == TokenKind::BlockEnd || isOperator(")"))
            return true;
        return std::any_of(extraEnds.begin(), extraEnds.end(),
                           [&](std::string_view name) { return isName(name); });
    };
    while (true) {
        if (!items.empty()) expectOperator(",");
        if (atEnd()) break;
        items.push_back(parseExpression(withConditional));
        if (!isOperator(",")) break;
        isTuple = true;
    }
    if (!isTuple) {
        if (!items.empty()) return std::move(items.front());
        if (!explicitParentheses)
            fail("Expected an expression, got '" + describeToken(current()) + "'",
                 current().offset);
    }
    return makeExpr(ExprKind::Tuple, offset, std::move(items));
}

ExprPtr Parser::parseExpression(bool withConditional) {
    const DescentGuard guard(m_expressionDepth, expressionLimit(m_limits), current().offset);
    return withConditional ? parseConditional() : parseOr();
}

ExprPtr Parser::parseConditional() {
    ExprPtr value = parseOr();
    while (isName("if")) {
        const size_t offset = current().offset;
        advance();
        ExprPtr condition = parseOr();
        ExprPtr otherwise;
        if (isName("else")) {
            advance();
            otherwise = parseExpression(true);
        }
        std::vector<ExprPtr> operands;
        operands.push_back(std::move(value));
        operands.push_back(std::move(condition));
        operands.push_back(std::move(otherwise));
        value = makeExpr(ExprKind::Conditional, offset, std::move(operands));
    }
    return value;
}

ExprPtr Parser::parseOr() {
    ExprPtr left = parseAnd();
    while (isName("or")) {
        const size_t offset = current().offset;
        advance();
        std::vector<ExprPtr> operands;
        operands.push_back(std::move(left));
        operands.push_back(parseAnd());
        left = makeExpr(ExprKind::Or, offset, std::move(operands));
    }
    return left;
}

ExprPtr Parser::parseAnd() {
    ExprPtr left = parseNot();
    while (isName("and")) {
        const size_t offset = current().offset;
        advance();
        std::vector<ExprPtr> operands;
        operands.push_back(std::move(left));
        operands.push_back(parseNot());
        left = makeExpr(ExprKind::And, offset, std::move(operands));
    }
    return left;
}

ExprPtr Parser::parseNot() {
    if (!isName("not")) return parseCompare();
    const size_t offset = current().offset;
    const DescentGuard guard(m_expressionDepth, expressionLimit(m_limits), offset);
    advance();
    std::vector<ExprPtr> operands;
    operands.push_back(parseNot());
    return makeExpr(ExprKind::Not, offset, std::move(operands));
}

ExprPtr Parser::parseCompare() {
    const size_t offset = current().offset;
    std::vector<ExprPtr> operands;
    operands.push_back(parseSum());
    std::vector<BinaryOp> ops;
    while (true) {
        static const std::pair<std::string_view, BinaryOp> comparisons[] = {
            {"==", BinaryOp::Equal},  {"!=", BinaryOp::NotEqual},
            {"<", BinaryOp::Less},    {"<=", BinaryOp::LessEqual},
            {">", BinaryOp::Greater}, {">=", BinaryOp::GreaterEqual}};
        const auto found =
            std::find_if(std::begin(comparisons), std::end(comparisons),
                         [&](const auto& comparison) { return isOperator(comparison.first); });
        if (found != std::end(comparisons)) {
            ops.push_back(found->second);
            advance();
        } else if (isName("in")) {
            ops.push_back(BinaryOp::In);
            advance();
        } else if (isName("not") && peek().kind == TokenKind::Name && peek().text == "in") {
            ops.push_back(BinaryOp::NotIn);
            advance();
            advance();
        } else {
            break;
        }
        operands.push_back(parseSum());
    }
    if (ops.empty()) return std::move(operands.front());
    ExprPtr compare = makeExpr(ExprKind::Compare, offset, std::move(operands));
    compare->compareOps = std::move(ops);
    return compare;
}

namespace {

struct BinaryLevel {
    std::string_view symbol;
    BinaryOp op;
};

} // namespace

ExprPtr Parser::parseSum() {
    ExprPtr left = parseConcat();
    while (isOperator("+") || isOperator("-")) {
        const BinaryOp op = isOperator("+") ? BinaryOp::Add : BinaryOp::Subtract;
        const size_t offset = current().offset;
        advance();
        std::vector<ExprPtr> operands;
        operands.push_back(std::move(left));
        operands.push_back(parseConcat());
        left = makeExpr(ExprKind::Binary, offset, std::move(operands));
        left->op = op;
    }
    return left;
}

ExprPtr Parser::parseConcat() {
    ExprPtr left = parseProduct();
    while (isOperator("~")) {
        const size_t offset = current().offset;
        advance();
        std::vector<ExprPtr> operands;
        operands.push_back(std::move(left));
        operands.push_back(parseProduct());
        left = makeExpr(ExprKind::Binary, offset, std::move(operands));
        left->op = BinaryOp::Concat;
    }
    return left;
}

ExprPtr Parser::parseProduct() {
    static const BinaryLevel products[] = {{"*", BinaryOp::Multiply},
                                           {"/", BinaryOp::Divide},
                                           {"//", BinaryOp::FloorDivide},
                                           {"%", BinaryOp::Modulo}};
    ExprPtr left = parsePower();
    while (true) {
        const auto found =
            std::find_if(std::begin(products), std::end(products),
                         [&](const BinaryLevel& level) { return isOperator(level.symbol); });
        if (found == std::end(products)) return left;
        const size_t offset = current().offset;
        advance();
        std::vector<ExprPtr> operands;
        operands.push_back(std::move(left));
        operands.push_back(parsePower());
        left = makeExpr(ExprKind::Binary, offset, std::move(operands));
        left->op = found->op;
    }
}

ExprPtr Parser::parsePower() {
    ExprPtr left = parseUnary(true);
    while (isOperator("**")) {
        const size_t offset = current().offset;
        advance();
        std::vector<ExprPtr> operands;
        operands.push_back(std::move(left));
        operands.push_back(parseUnary(true));
        left = makeExpr(ExprKind::Binary, offset, std::move(operands));
        left->op = BinaryOp::Power;
    }
    return left;
}

ExprPtr Parser::parseUnary(bool withFilters) {
    const size_t offset = current().offset;
    const DescentGuard guard(m_expressionDepth, expressionLimit(m_limits), offset);
    ExprPtr node;
    if (isOperator("-") || isOperator("+")) {
        const ExprKind kind = isOperator("-") ? ExprKind::Negate : ExprKind::Plus;
        advance();
        std::vector<ExprPtr> operands;
        operands.push_back(parseUnary(false));
        node = makeExpr(kind, offset, std::move(operands));
    } else {
        node = parsePrimary();
    }
    node = parsePostfix(std::move(node));
    if (withFilters) node = parseFilterExpression(std::move(node));
    return node;
}

ExprPtr Parser::parsePrimary() {
    const Token& token = current();
    const size_t offset = token.offset;
    if (token.kind == TokenKind::Name) {
        const std::string name = token.text;
        advance();
        ExprPtr node = makeExpr(ExprKind::Literal, offset);
        if (name == "true" || name == "True") {
            node->value = true;
        } else if (name == "false" || name == "False") {
            node->value = false;
        } else if (name == "none" || name == "None") {
            node->value = None{};
        } else {
            node->kind = ExprKind::Name;
            node->name = name;
            if (!m_macros.empty()) {
                m_macros.back()->readsVarargs |= name == "varargs";
                m_macros.back()->readsKwargs |= name == "kwargs";
                m_macros.back()->readsCaller |= name == "caller";
            }
        }
        return node;
    }
    if (token.kind == TokenKind::String) {
        std::string text;
        while (current().kind == TokenKind::String) {
            text += current().text;
            advance();
        }
        ExprPtr node = makeExpr(ExprKind::Literal, offset);
        node->value = Value(std::move(text));
        return node;
    }
    if (token.kind == TokenKind::Integer || token.kind == TokenKind::Float) {
        ExprPtr node = makeExpr(ExprKind::Literal, offset);
        node->value = token.kind == TokenKind::Integer ? Value(token.integer) : Value(token.number);
        advance();
        return node;
    }
    if (isOperator("(")) {
        advance();
        ExprPtr inner = parseTuple(true, {}, true);
        expectOperator(")");
        return inner;
    }
    if (isOperator("[")) return parseList();
    if (isOperator("{")) return parseDict();
    fail("unexpected '" + describeToken(token) + "'", offset);
}

ExprPtr Parser::parseList() {
    const size_t offset = current().offset;
    expectOperator("[");
    std::vector<ExprPtr> items;
    while (!isOperator("]")) {
        if (!items.empty()) expectOperator(",");
        if (isOperator("]")) break;
        items.push_back(parseExpression());
    }
    expectOperator("]");
    return makeExpr(ExprKind::List, offset, std::move(items));
}

ExprPtr Parser::parseDict() {
    const size_t offset = current().offset;
    expectOperator("{");
    std::vector<ExprPtr> items;
    while (!isOperator("}")) {
        if (!items.empty()) expectOperator(",");
        if (isOperator("}")) break;
        items.push_back(parseExpression());
        expectOperator(":");
        items.push_back(parseExpression());
    }
    expectOperator("}");
    return makeExpr(ExprKind::Dict, offset, std::move(items));
}

ExprPtr Parser::parsePostfix(ExprPtr node) {
    while (true) {
        if (isOperator(".") || isOperator("["))
            node = parseSubscript(std::move(node));
        else if (isOperator("("))
            node = parseCall(std::move(node));
        else
            return node;
    }
}

ExprPtr Parser::parseSubscript(ExprPtr node) {
    const size_t offset = current().offset;
    if (isOperator(".")) {
        advance();
        std::vector<ExprPtr> operands;
        operands.push_back(std::move(node));
        if (current().kind == TokenKind::Name) {
            ExprPtr attribute = makeExpr(ExprKind::Attribute, offset, std::move(operands));
            attribute->name = current().text;
            advance();
            return attribute;
        }
        if (current().kind != TokenKind::Integer) unexpected("name or number");
        ExprPtr index = makeExpr(ExprKind::Literal, current().offset);
        index->value = current().integer;
        advance();
        operands.push_back(std::move(index));
        return makeExpr(ExprKind::Item, offset, std::move(operands));
    }
    expectOperator("[");
    std::vector<Subscript> subscripts;
    while (!isOperator("]")) {
        if (!subscripts.empty()) expectOperator(",");
        if (isOperator("]")) break;
        subscripts.push_back(parseSubscribed());
    }
    expectOperator("]");
    if (subscripts.empty()) fail("expected a subscript", offset);
    std::vector<ExprPtr> operands;
    operands.push_back(std::move(node));
    if (subscripts.size() == 1 && subscripts.front().isSlice) {
        Subscript& slice = subscripts.front();
        operands.push_back(std::move(slice.start));
        operands.push_back(std::move(slice.stop));
        operands.push_back(std::move(slice.step));
        return makeExpr(ExprKind::Slice, offset, std::move(operands));
    }
    if (subscripts.size() == 1) {
        operands.push_back(std::move(subscripts.front().single));
    } else {
        std::vector<ExprPtr> items;
        for (Subscript& subscript : subscripts) {
            if (subscript.isSlice)
                fail("slices inside a tuple subscript are not supported", offset);
            items.push_back(std::move(subscript.single));
        }
        operands.push_back(makeExpr(ExprKind::Tuple, offset, std::move(items)));
    }
    return makeExpr(ExprKind::Item, offset, std::move(operands));
}

Parser::Subscript Parser::parseSubscribed() {
    Subscript subscript;
    const auto atBoundEnd = [this] { return isOperator("]") || isOperator(","); };
    if (!isOperator(":")) {
        subscript.single = parseExpression();
        if (!isOperator(":")) return subscript;
        subscript.start = std::move(subscript.single);
    }
    subscript.isSlice = true;
    advance(); // the first ':'
    if (!isOperator(":") && !atBoundEnd()) subscript.stop = parseExpression();
    if (isOperator(":")) {
        advance();
        if (!atBoundEnd()) subscript.step = parseExpression();
    }
    return subscript;
}

ExprPtr Parser::parseCall(ExprPtr callee) {
    const size_t offset = current().offset;
    CallArguments arguments = parseCallArguments();
    std::vector<ExprPtr> operands;
    operands.push_back(std::move(callee));
    auto call = std::make_unique<Expr>();
    call->kind = ExprKind::Call;
    call->offset = offset;
    call->operands = std::move(operands);
    call->arguments = std::move(arguments);
    finish(*call);
    return call;
}

CallArguments Parser::parseCallArguments() {
    CallArguments arguments;
    expectOperator("(");
    bool first = true;
    while (!isOperator(")")) {
        if (!first) expectOperator(",");
        first = false;
        if (isOperator(")")) break;
        if (isOperator("*") || isOperator("**"))
            fail("*args and **kwargs in calls are not supported", current().offset);
        if (current().kind == TokenKind::Name && peek().kind == TokenKind::Operator &&
            peek().text == "=") {
            std::string name = current().text;
            const size_t offset = current().offset;
            advance();
            advance();
            for (const auto& keyword : arguments.keywords)
                if (keyword.first == name) fail("keyword argument repeated: " + name, offset);
            arguments.keywords.emplace_back(std::move(name), parseExpression());
        } else {
            if (!arguments.keywords.empty())
                fail("invalid syntax for function call expression", current().offset);
            arguments.positional.push_back(parseExpression());
        }
    }
    expectOperator(")");
    return arguments;
}

ExprPtr Parser::parseFilterExpression(ExprPtr node) {
    while (true) {
        if (isOperator("|"))
            node = parseFilters(std::move(node), false);
        else if (isName("is"))
            node = parseTest(std::move(node));
        else if (isOperator("("))
            node = parseCall(std::move(node));
        else
            return node;
    }
}

std::string Parser::parseDottedName() {
    std::string name = expectName();
    while (isOperator(".")) {
        advance();
        name += "." + expectName();
    }
    return name;
}

ExprPtr Parser::parseFilters(ExprPtr node, bool startInline) {
    while (isOperator("|") || startInline) {
        if (!startInline) advance();
        startInline = false;
        const size_t offset = current().offset;
        auto filter = std::make_unique<Expr>();
        filter->kind = ExprKind::Filter;
        filter->offset = offset;
        filter->name = parseDottedName();
        if (isOperator("(")) filter->arguments = parseCallArguments();
        filter->operands.push_back(std::move(node));
        finish(*filter);
        node = std::move(filter);
    }
    return node;
}

ExprPtr Parser::parseTest(ExprPtr node) {
    advance(); // is
    auto test = std::make_unique<Expr>();
    test->kind = ExprKind::Test;
    if (isName("not")) {
        test->negated = true;
        advance();
    }
    test->offset = current().offset;
    test->name = parseDottedName();
    const Token& next = current();
    const bool argumentFollows = next.kind == TokenKind::Name || next.kind == TokenKind::String ||
                                 next.kind == TokenKind::Integer || next.kind == TokenKind::Float ||
                                 isOperator("(") || isOperator("[") || isOperator("{");
    if (isOperator("(")) {
        test->arguments = parseCallArguments();
    } else if (argumentFollows && !isName("else") && !isName("or") && !isName("and")) {
        if (isName("is")) fail("You cannot chain multiple tests with is", next.offset);
        test->arguments.positional.push_back(parsePostfix(parsePrimary()));
    }
    test->operands.push_back(std::move(node));
    finish(*test);
    return test;
}

} // namespace sinkscope::jinja
