// jinja2's tests (`x is defined`, `x is divisibleby 3`, `x is eq y`, ...).
#include "jinja/builtins/jinja_builtins.h"
#include "jinja/jinja_lookup.h"

#include "jinja/builtins/jinja_format.h"
#include "jinja/builtins/jinja_text.h"
#include "jinja/jinja_ops.h"
#include "jinja/jinja_render.h"

namespace sinkscope::jinja {

namespace {

const Value& onlyArgument(std::string_view test, const Arguments& arguments) {
    bindArguments(test, {"other"}, 1, arguments);
    return arguments.positional.empty() ? arguments.keywords.front().second
                                        : arguments.positional.front();
}

void noArguments(std::string_view test, const Arguments& arguments) {
    bindArguments(test, {}, 0, arguments);
}

#define SINKSCOPE_SIMPLE_TEST(function, name, condition)                                           \
    bool function(Interpreter&, const Value& value, const Arguments& arguments) {                  \
        noArguments(name, arguments);                                                              \
        return condition;                                                                          \
    }

SINKSCOPE_SIMPLE_TEST(testDefined, "defined", !value.isUndefined())
SINKSCOPE_SIMPLE_TEST(testUndefined, "undefined", value.isUndefined())
SINKSCOPE_SIMPLE_TEST(testNone, "none", value.isNone())
SINKSCOPE_SIMPLE_TEST(testBoolean, "boolean", value.isBool())
SINKSCOPE_SIMPLE_TEST(testTrue, "true", value.isBool() && value.asBool())
SINKSCOPE_SIMPLE_TEST(testFalse, "false", value.isBool() && !value.asBool())
SINKSCOPE_SIMPLE_TEST(testInteger, "integer", value.isInt())
SINKSCOPE_SIMPLE_TEST(testFloat, "float", value.isFloat())
SINKSCOPE_SIMPLE_TEST(testNumber, "number", value.isNumber())
SINKSCOPE_SIMPLE_TEST(testString, "string", value.isString())
SINKSCOPE_SIMPLE_TEST(testMapping, "mapping", value.isDict())
// Python: iter() works (undefined iterates as empty); a sequence has len() and [].
SINKSCOPE_SIMPLE_TEST(testIterable, "iterable",
                      value.isString() || value.isList() || value.isDict() || value.isUndefined() ||
                          value.isLoop() || value.isIterator())
SINKSCOPE_SIMPLE_TEST(testSequence, "sequence",
                      value.isString() || value.isList() || value.isDict() || value.isUndefined())
// jinja2's Undefined and loop objects can be called (to fail, or for recursive loops).
SINKSCOPE_SIMPLE_TEST(testCallable, "callable",
                      value.isCallable() || value.isUndefined() || value.isLoop())

#undef SINKSCOPE_SIMPLE_TEST

// Nothing is escaped here: Hugging Face renders without autoescape, so there is no Markup.
bool testEscaped(Interpreter&, const Value&, const Arguments& arguments) {
    noArguments("escaped", arguments);
    return false;
}

bool modulo(Interpreter& interpreter, const Value& value, const Value& divisor, int64_t remainder) {
    return equals(applyBinary(BinaryOp::Modulo, value, divisor, interpreter.budget()),
                  Value(remainder), interpreter.budget());
}

bool testOdd(Interpreter& interpreter, const Value& value, const Arguments& arguments) {
    noArguments("odd", arguments);
    return modulo(interpreter, value, Value(int64_t{2}), 1);
}

bool testEven(Interpreter& interpreter, const Value& value, const Arguments& arguments) {
    noArguments("even", arguments);
    return modulo(interpreter, value, Value(int64_t{2}), 0);
}

bool testDivisibleby(Interpreter& interpreter, const Value& value, const Arguments& arguments) {
    const auto bound = bindArguments("divisibleby", {"num"}, 1, arguments);
    return modulo(interpreter, value, *bound[0], 0);
}

bool testLower(Interpreter& interpreter, const Value& value, const Arguments& arguments) {
    noArguments("lower", arguments);
    return isLowerText(toStr(value, interpreter.budget()));
}

bool testUpper(Interpreter& interpreter, const Value& value, const Arguments& arguments) {
    noArguments("upper", arguments);
    return isUpperText(toStr(value, interpreter.budget()));
}

bool testSameas(Interpreter& interpreter, const Value& value, const Arguments& arguments) {
    const Value& other = onlyArgument("sameas", arguments);
    if (value.kind() != other.kind()) return false;
    switch (value.kind()) {
    case Value::Kind::List:
        return value.asList() == other.asList();
    case Value::Kind::Dict:
        return value.asDict() == other.asDict();
    case Value::Kind::String:
        return value.stringPtr() == other.stringPtr();
    default:
        return equals(value, other, interpreter.budget());
    }
}

bool testIn(Interpreter& interpreter, const Value& value, const Arguments& arguments) {
    return contains(onlyArgument("in", arguments), value, interpreter.budget());
}

bool testFilter(Interpreter&, const Value& value, const Arguments& arguments) {
    noArguments("filter", arguments);
    return value.isString() && findFilter(value.asString());
}

bool testTest(Interpreter&, const Value& value, const Arguments& arguments) {
    noArguments("test", arguments);
    return value.isString() && findTest(value.asString());
}

template <BinaryOp op>
bool testCompare(Interpreter& interpreter, const Value& value, const Arguments& arguments) {
    return truthy(
        applyBinary(op, value, onlyArgument(binaryOpSymbol(op), arguments), interpreter.budget()));
}

} // namespace

TestFunction findTest(std::string_view name) {
    static const std::pair<std::string_view, TestFunction> tests[] = {
        {"boolean", testBoolean},
        {"callable", testCallable},
        {"defined", testDefined},
        {"divisibleby", testDivisibleby},
        {"escaped", testEscaped},
        {"even", testEven},
        {"false", testFalse},
        {"filter", testFilter},
        {"float", testFloat},
        {"in", testIn},
        {"integer", testInteger},
        {"iterable", testIterable},
        {"lower", testLower},
        {"mapping", testMapping},
        {"none", testNone},
        {"number", testNumber},
        {"odd", testOdd},
        {"sameas", testSameas},
        {"sequence", testSequence},
        {"string", testString},
        {"test", testTest},
        {"true", testTrue},
        {"undefined", testUndefined},
        {"upper", testUpper},
        {"==", testCompare<BinaryOp::Equal>},
        {"eq", testCompare<BinaryOp::Equal>},
        {"equalto", testCompare<BinaryOp::Equal>},
        {"!=", testCompare<BinaryOp::NotEqual>},
        {"ne", testCompare<BinaryOp::NotEqual>},
        {"<", testCompare<BinaryOp::Less>},
        {"lt", testCompare<BinaryOp::Less>},
        {"lessthan", testCompare<BinaryOp::Less>},
        {"<=", testCompare<BinaryOp::LessEqual>},
        {"le", testCompare<BinaryOp::LessEqual>},
        {">", testCompare<BinaryOp::Greater>},
        {"gt", testCompare<BinaryOp::Greater>},
        {"greaterthan", testCompare<BinaryOp::Greater>},
        {">=", testCompare<BinaryOp::GreaterEqual>},
        {"ge", testCompare<BinaryOp::GreaterEqual>},
    };
    for (const auto& [testName, function] : tests)
        if (testName == name) return function;
    return nullptr;
}

} // namespace sinkscope::jinja
