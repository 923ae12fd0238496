// The expression half of the evaluator: operators, lookups, calls, filters, tests and macros.
#include "jinja/builtins/jinja_builtins.h"
#include "jinja/jinja_lexer.h"
#include "jinja/jinja_lookup.h"
#include "jinja/jinja_render.h"

namespace sinkscope::jinja {

Value Interpreter::lookup(const std::string& name) const {
    if (const Value* value = m_scope->find(name)) return *value;
    return Value::undefined("'" + name + "' is undefined");
}

Arguments Interpreter::evaluateArguments(const CallArguments& arguments) {
    Arguments values;
    values.positional.reserve(arguments.positional.size());
    for (const ExprPtr& argument : arguments.positional)
        values.positional.push_back(evaluate(*argument));
    for (const auto& [name, argument] : arguments.keywords)
        values.keywords.emplace_back(name, evaluate(*argument));
    return values;
}

Value Interpreter::evaluate(const Expr& expr) {
    const DepthGuard guard(*this);
    m_budget.step();
    m_offset = expr.offset;
    const auto operand = [&](size_t i) { return evaluate(*expr.operands[i]); };
    switch (expr.kind) {
    case ExprKind::Literal:
        return expr.value;
    case ExprKind::Name:
        return lookup(expr.name);
    case ExprKind::List:
    case ExprKind::Tuple: {
        std::vector<Value> items;
        items.reserve(expr.operands.size());
        for (size_t i = 0; i < expr.operands.size(); ++i)
            items.push_back(operand(i));
        return makeList(m_budget, std::move(items), expr.kind == ExprKind::Tuple);
    }
    case ExprKind::Dict: {
        std::vector<std::pair<Value, Value>> entries;
        for (size_t i = 0; i + 1 < expr.operands.size(); i += 2) {
            Value key = operand(i);
            entries.emplace_back(std::move(key), operand(i + 1));
        }
        m_offset = expr.offset;
        return makeDict(m_budget, std::move(entries));
    }
    case ExprKind::Not:
        return !truthy(operand(0));
    case ExprKind::Negate:
    case ExprKind::Plus: {
        const Value value = operand(0);
        m_offset = expr.offset;
        return expr.kind == ExprKind::Negate ? negate(value) : unaryPlus(value);
    }
    case ExprKind::Binary: {
        const Value left = operand(0);
        const Value right = operand(1);
        m_offset = expr.offset;
        return applyBinary(expr.op, left, right, m_budget);
    }
    case ExprKind::And: {
        Value left = operand(0);
        return truthy(left) ? operand(1) : left;
    }
    case ExprKind::Or: {
        Value left = operand(0);
        return truthy(left) ? left : operand(1);
    }
    case ExprKind::Compare:
        return evaluateCompare(expr);
    case ExprKind::Conditional:
        if (truthy(operand(1))) return operand(0);
        if (expr.operands[2]) return operand(2);
        return Value::undefined("the inline if-expression on line " +
                                std::to_string(lineAndColumn(m_program.source, expr.offset).first) +
                                " evaluated to false and no else section was defined.");
    case ExprKind::Attribute: {
        const Value object = operand(0);
        m_offset = expr.offset;
        return getAttribute(object, expr.name, m_budget);
    }
    case ExprKind::Item: {
        const Value object = operand(0);
        const Value key = operand(1);
        m_offset = expr.offset;
        return getItem(object, key, m_budget);
    }
    case ExprKind::Slice: {
        const Value object = operand(0);
        const auto bound = [&](size_t i) { return expr.operands[i] ? operand(i) : Value(None{}); };
        const Value start = bound(1);
        const Value stop = bound(2);
        const Value step = bound(3);
        m_offset = expr.offset;
        return sliceValue(object, start, stop, step, m_budget);
    }
    case ExprKind::Call:
        return evaluateCall(expr, nullptr);
    case ExprKind::Filter:
        return evaluateFilter(expr, nullptr);
    case ExprKind::Test: {
        const Value subject = operand(0);
        const Arguments arguments = evaluateArguments(expr.arguments);
        m_offset = expr.offset;
        return applyTest(expr.name, subject, arguments) != expr.negated;
    }
    }
    return Value();
}

// a < b < c is a < b and b < c, each operand evaluated once.
Value Interpreter::evaluateCompare(const Expr& expr) {
    Value left = evaluate(*expr.operands[0]);
    for (size_t i = 0; i < expr.compareOps.size(); ++i) {
        Value right = evaluate(*expr.operands[i + 1]);
        m_offset = expr.offset;
        if (!truthy(applyBinary(expr.compareOps[i], left, right, m_budget))) return false;
        left = std::move(right);
    }
    return true;
}

Value Interpreter::evaluateCall(const Expr& call, const Value* caller) {
    const Value callee = evaluate(*call.operands[0]);
    Arguments arguments = evaluateArguments(call.arguments);
    if (caller) arguments.keywords.emplace_back("caller", *caller);
    m_offset = call.offset;
    if (callee.isUndefined()) failUndefined(callee);
    if (!callee.isCallable()) fail("'" + typeName(callee) + "' object is not callable");
    return callee.asCallable()->call(*this, std::move(arguments));
}

// A filter chain's innermost operand is null in a filter block or `set x | f`: `blockText`.
Value Interpreter::evaluateFilter(const Expr& filter, const Value* blockText) {
    const Expr* inner = filter.operands[0].get();
    Value input;
    if (!inner)
        input = *blockText;
    else if (inner->kind == ExprKind::Filter)
        input = evaluateFilter(*inner, blockText);
    else
        input = evaluate(*inner);
    const Arguments arguments = evaluateArguments(filter.arguments);
    m_offset = filter.offset;
    return applyFilter(filter.name, input, arguments);
}

Value Interpreter::applyFilter(std::string_view name, const Value& input,
                               const Arguments& arguments) {
    const FilterFunction filter = findFilter(name);
    if (!filter) fail("No filter named '" + std::string(name) + "' found.");
    m_budget.step();
    return filter(*this, input, arguments);
}

bool Interpreter::applyTest(std::string_view name, const Value& input, const Arguments& arguments) {
    const TestFunction test = findTest(name);
    if (!test) fail("No test named '" + std::string(name) + "' found.");
    m_budget.step();
    return test(*this, input, arguments);
}

Value Interpreter::callMacro(const MacroDefinition& macro, const std::weak_ptr<Scope>& defining,
                             Arguments arguments) {
    const int limit = m_program.limits.maxNesting;
    if (m_callDepth >= limit)
        fail("macro calls nest deeper than " + std::to_string(limit) + " levels (recursion?)");
    struct CallDepth {
        int& depth;
        explicit CallDepth(int& d) : depth(++d) {}
        ~CallDepth() { --depth; }
    } callDepth(m_callDepth);

    auto scope = std::make_shared<Scope>();
    scope->parent = defining.lock();
    if (!scope->parent) scope->parent = m_root;
    const size_t count = macro.parameters.size();
    std::vector<bool> given(count, false);
    for (size_t i = 0; i < arguments.positional.size() && i < count; ++i) {
        scope->set(macro.parameters[i], arguments.positional[i]);
        given[i] = true;
    }
    if (arguments.positional.size() > count && !macro.readsVarargs)
        fail("macro '" + macro.name + "' takes not more than " + std::to_string(count) +
             " argument(s)");
    std::vector<Value> varargs;
    for (size_t i = count; i < arguments.positional.size(); ++i)
        varargs.push_back(arguments.positional[i]);
    std::vector<std::pair<Value, Value>> kwargs;
    for (auto& [name, value] : arguments.keywords) {
        size_t index = 0;
        while (index < count && macro.parameters[index] != name)
            ++index;
        if (index < count && !given[index]) {
            scope->set(name, std::move(value));
            given[index] = true;
        } else if (name == "caller") {
            scope->set(name, std::move(value));
        } else if (macro.readsKwargs) {
            kwargs.emplace_back(Value(name), std::move(value));
        } else {
            fail("macro '" + macro.name + "' takes no keyword argument '" + name + "'");
        }
    }
    if (macro.readsVarargs) scope->set("varargs", makeList(m_budget, std::move(varargs), true));
    if (macro.readsKwargs) scope->set("kwargs", makeDict(m_budget, std::move(kwargs)));

    CaptureGuard captured(*this);
    const ScopeGuard scoped(*this, scope);
    for (size_t i = 0; i < count; ++i) {
        if (given[i]) continue;
        // Defaults are evaluated in the macro's scope, where earlier parameters are visible.
        scope->set(macro.parameters[i], macro.defaults[i]
                                            ? evaluate(*macro.defaults[i])
                                            : Value::undefined("parameter '" + macro.parameters[i] +
                                                               "' was not provided"));
    }
    execute(macro.body);
    return Value(captured.take());
}

} // namespace sinkscope::jinja
