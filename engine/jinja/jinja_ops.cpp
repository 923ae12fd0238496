#include "jinja/jinja_ops.h"

#include "jinja/builtins/jinja_builtins.h"
#include "jinja/builtins/jinja_format.h"
#include "jinja/builtins/jinja_text.h"
#include "jinja/jinja_budget.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sinkscope::jinja {

const char* binaryOpSymbol(BinaryOp op) {
    switch (op) {
    case BinaryOp::Add:
        return "+";
    case BinaryOp::Subtract:
        return "-";
    case BinaryOp::Multiply:
        return "*";
    case BinaryOp::Divide:
        return "/";
    case BinaryOp::FloorDivide:
        return "//";
    case BinaryOp::Modulo:
        return "%";
    case BinaryOp::Power:
        return "**";
    case BinaryOp::Concat:
        return "~";
    case BinaryOp::Equal:
        return "==";
    case BinaryOp::NotEqual:
        return "!=";
    case BinaryOp::Less:
        return "<";
    case BinaryOp::LessEqual:
        return "<=";
    case BinaryOp::Greater:
        return ">";
    case BinaryOp::GreaterEqual:
        return ">=";
    case BinaryOp::In:
        return "in";
    case BinaryOp::NotIn:
        return "not in";
    }
    return "?";
}

bool equals(const Value& a, const Value& b, Budget& budget) {
    budget.step();
    if (a.isNumber() && b.isNumber()) {
        if (a.isIntegral() && b.isIntegral()) return a.asInt() == b.asInt();
        return a.asFloat() == b.asFloat();
    }
    if (a.kind() != b.kind()) return false;
    switch (a.kind()) {
    case Value::Kind::Undefined:
    case Value::Kind::None:
        return true;
    case Value::Kind::String:
        return a.asString() == b.asString();
    case Value::Kind::List: {
        const List& x = *a.asList();
        const List& y = *b.asList();
        if (x.isTuple != y.isTuple || x.items.size() != y.items.size()) return false;
        for (size_t i = 0; i < x.items.size(); ++i)
            if (!equals(x.items[i], y.items[i], budget)) return false;
        return true;
    }
    case Value::Kind::Dict: {
        const Dict& x = *a.asDict();
        const Dict& y = *b.asDict();
        if (x.entries.size() != y.entries.size()) return false;
        for (const auto& [key, value] : x.entries) {
            const Value* other = y.find(key, budget);
            if (!other || !equals(value, *other, budget)) return false;
        }
        return true;
    }
    case Value::Kind::Namespace:
        return a.asNamespace() == b.asNamespace();
    case Value::Kind::Callable:
        return a.asCallable() == b.asCallable();
    case Value::Kind::Loop:
        return a.asLoop() == b.asLoop();
    case Value::Kind::Iterator:
        return a.asIterator() == b.asIterator();
    default:
        return false;
    }
}

namespace {

[[noreturn]] void unorderable(BinaryOp op, const Value& a, const Value& b) {
    fail(std::string("'") + binaryOpSymbol(op) + "' not supported between instances of '" +
         typeName(a) + "' and '" + typeName(b) + "'");
}

bool ordered(BinaryOp op, const Value& a, const Value& b, Budget& budget) {
    if (a.isUndefined()) failUndefined(a);
    if (b.isUndefined()) failUndefined(b);
    if (a.isNumber() && b.isNumber()) {
        if (a.isIntegral() && b.isIntegral()) {
            const int64_t x = a.asInt();
            const int64_t y = b.asInt();
            return op == BinaryOp::Less        ? x < y
                   : op == BinaryOp::LessEqual ? x <= y
                   : op == BinaryOp::Greater   ? x > y
                                               : x >= y;
        }
        const double x = a.asFloat();
        const double y = b.asFloat();
        return op == BinaryOp::Less        ? x < y
               : op == BinaryOp::LessEqual ? x <= y
               : op == BinaryOp::Greater   ? x > y
                                           : x >= y;
    }
    if (a.isString() && b.isString()) {
        const int c = a.asString().compare(b.asString()); // UTF-8 byte order is code point order
        return op == BinaryOp::Less        ? c < 0
               : op == BinaryOp::LessEqual ? c <= 0
               : op == BinaryOp::Greater   ? c > 0
                                           : c >= 0;
    }
    if (a.isList() && b.isList() && a.isTuple() == b.isTuple()) {
        const auto& x = a.asList()->items;
        const auto& y = b.asList()->items;
        for (size_t i = 0; i < x.size() && i < y.size(); ++i)
            if (!equals(x[i], y[i], budget)) return ordered(op, x[i], y[i], budget);
        const size_t m = x.size();
        const size_t n = y.size();
        return op == BinaryOp::Less        ? m < n
               : op == BinaryOp::LessEqual ? m <= n
               : op == BinaryOp::Greater   ? m > n
                                           : m >= n;
    }
    unorderable(op, a, b);
}

} // namespace

int compare(const Value& a, const Value& b, Budget& budget) {
    if (ordered(BinaryOp::Less, a, b, budget)) return -1;
    return ordered(BinaryOp::Less, b, a, budget) ? 1 : 0;
}

namespace {

[[noreturn]] void unsupported(BinaryOp op, const Value& a, const Value& b) {
    fail(std::string("unsupported operand type(s) for ") + binaryOpSymbol(op) + ": '" +
         typeName(a) + "' and '" + typeName(b) + "'");
}

[[noreturn]] void overflow() {
    fail("integer result outside the 64-bit range");
}

template <typename Operation> int64_t checked(Operation operation, int64_t x, int64_t y) {
    int64_t result = 0;
    if (operation(x, y, &result)) overflow();
    return result;
}

bool addOverflows(int64_t x, int64_t y, int64_t* r) {
    return __builtin_add_overflow(x, y, r);
}
bool subtractOverflows(int64_t x, int64_t y, int64_t* r) {
    return __builtin_sub_overflow(x, y, r);
}
bool multiplyOverflows(int64_t x, int64_t y, int64_t* r) {
    return __builtin_mul_overflow(x, y, r);
}

int64_t integerPower(int64_t base, int64_t exponent) {
    int64_t result = 1;
    while (exponent > 0) {
        if (exponent & 1) result = checked(multiplyOverflows, result, base);
        exponent >>= 1;
        if (exponent > 0) base = checked(multiplyOverflows, base, base);
    }
    return result;
}

// Python's float // and %: the quotient floored, the remainder taking the divisor's sign.
double floatModulo(double x, double y) {
    double mod = std::fmod(x, y);
    if (mod != 0.0) {
        if ((y < 0) != (mod < 0)) mod += y;
    } else {
        mod = std::copysign(0.0, y);
    }
    return mod;
}

double floatFloorDivide(double x, double y) {
    double mod = std::fmod(x, y);
    double div = (x - mod) / y;
    if (mod != 0.0 && (y < 0) != (mod < 0)) div -= 1.0;
    if (div == 0.0) return std::copysign(0.0, x / y);
    double floored = std::floor(div);
    if (div - floored > 0.5) floored += 1.0;
    return floored;
}

Value arithmetic(BinaryOp op, const Value& a, const Value& b) {
    if (a.isIntegral() && b.isIntegral()) {
        const int64_t x = a.asInt();
        const int64_t y = b.asInt();
        switch (op) {
        case BinaryOp::Add:
            return checked(addOverflows, x, y);
        case BinaryOp::Subtract:
            return checked(subtractOverflows, x, y);
        case BinaryOp::Multiply:
            return checked(multiplyOverflows, x, y);
        case BinaryOp::Divide:
            if (y == 0) fail("division by zero");
            return static_cast<double>(x) / static_cast<double>(y);
        case BinaryOp::FloorDivide:
        case BinaryOp::Modulo: {
            if (y == 0)
                fail(op == BinaryOp::Modulo ? "integer modulo by zero"
                                            : "integer division or modulo by zero");
            if (x == std::numeric_limits<int64_t>::min() && y == -1) overflow();
            int64_t quotient = x / y;
            int64_t remainder = x % y;
            if (remainder != 0 && ((remainder < 0) != (y < 0))) {
                --quotient;
                remainder += y;
            }
            return op == BinaryOp::FloorDivide ? quotient : remainder;
        }
        case BinaryOp::Power:
            if (y >= 0) return integerPower(x, y);
            if (x == 0) fail("0.0 cannot be raised to a negative power");
            return std::pow(static_cast<double>(x), static_cast<double>(y));
        default:
            break;
        }
    }
    const double x = a.asFloat();
    const double y = b.asFloat();
    switch (op) {
    case BinaryOp::Add:
        return x + y;
    case BinaryOp::Subtract:
        return x - y;
    case BinaryOp::Multiply:
        return x * y;
    case BinaryOp::Divide:
        if (y == 0.0) fail("float division by zero");
        return x / y;
    case BinaryOp::FloorDivide:
        if (y == 0.0) fail("float floor division by zero");
        return floatFloorDivide(x, y);
    case BinaryOp::Modulo:
        if (y == 0.0) fail("float modulo");
        return floatModulo(x, y);
    case BinaryOp::Power: {
        if (x == 0.0 && y < 0.0) fail("0.0 cannot be raised to a negative power");
        if (x < 0.0 && std::floor(y) != y)
            fail("a negative number to a fractional power is complex, which is not supported");
        const double r = std::pow(x, y);
        if (std::isinf(r) && std::isfinite(x) && std::isfinite(y))
            fail("(34, 'Numerical result out of range')");
        return r;
    }
    default:
        break;
    }
    unsupported(op, a, b);
}

Value repeat(const Value& sequence, int64_t count, Budget& budget) {
    const size_t times = count > 0 ? static_cast<size_t>(count) : 0;
    if (sequence.isString()) {
        TextBuilder out(budget);
        out.appendRepeated(sequence.asString(), times);
        return Value(out.take());
    }
    const List& list = *sequence.asList();
    if (!list.items.empty() && times > budget.maxListItems() / list.items.size())
        budget.chargeItems(budget.maxListItems() + 1);
    std::vector<Value> items;
    items.reserve(list.items.size() * times);
    for (size_t i = 0; i < times; ++i)
        items.insert(items.end(), list.items.begin(), list.items.end());
    return makeList(budget, std::move(items), list.isTuple);
}

Value add(const Value& a, const Value& b, Budget& budget) {
    if (a.isNumber() && b.isNumber()) return arithmetic(BinaryOp::Add, a, b);
    if (a.isString() && b.isString()) {
        TextBuilder out(budget);
        out.append(a.asString());
        out.append(b.asString());
        return Value(out.take());
    }
    if (a.isList() && b.isList() && a.isTuple() == b.isTuple()) {
        std::vector<Value> items = a.asList()->items;
        budget.chargeItems(items.size() + b.asList()->items.size());
        items.insert(items.end(), b.asList()->items.begin(), b.asList()->items.end());
        return makeList(budget, std::move(items), a.isTuple());
    }
    if (a.isString() || a.isList())
        fail("can only concatenate " + typeName(a) + " (not \"" + typeName(b) + "\") to " +
             typeName(a));
    unsupported(BinaryOp::Add, a, b);
}

} // namespace

Value applyBinary(BinaryOp op, const Value& a, const Value& b, Budget& budget) {
    switch (op) {
    case BinaryOp::Equal:
        return equals(a, b, budget);
    case BinaryOp::NotEqual:
        return !equals(a, b, budget);
    case BinaryOp::Less:
    case BinaryOp::LessEqual:
    case BinaryOp::Greater:
    case BinaryOp::GreaterEqual:
        return ordered(op, a, b, budget);
    case BinaryOp::In:
        return contains(b, a, budget);
    case BinaryOp::NotIn:
        return !contains(b, a, budget);
    case BinaryOp::Concat: {
        TextBuilder out(budget);
        appendStr(out, a);
        appendStr(out, b);
        return Value(out.take());
    }
    default:
        break;
    }
    if (op == BinaryOp::Modulo && a.isString()) return percentFormat(a.asString(), b, budget);
    if (a.isUndefined()) failUndefined(a);
    if (b.isUndefined()) failUndefined(b);
    if (op == BinaryOp::Add) return add(a, b, budget);
    if (op == BinaryOp::Multiply) {
        if ((a.isString() || a.isList()) && b.isIntegral()) return repeat(a, b.asInt(), budget);
        if (a.isIntegral() && (b.isString() || b.isList())) return repeat(b, a.asInt(), budget);
        if (a.isString() || a.isList() || b.isString() || b.isList())
            fail("can't multiply sequence by non-int of type '" +
                 typeName(a.isString() || a.isList() ? b : a) + "'");
    }
    if (a.isNumber() && b.isNumber()) return arithmetic(op, a, b);
    unsupported(op, a, b);
}

Value negate(const Value& value) {
    if (value.isUndefined()) failUndefined(value);
    if (value.isIntegral()) {
        if (value.asInt() == std::numeric_limits<int64_t>::min()) overflow();
        return -value.asInt();
    }
    if (value.isFloat()) return -value.asFloat();
    fail("bad operand type for unary -: '" + typeName(value) + "'");
}

Value unaryPlus(const Value& value) {
    if (value.isUndefined()) failUndefined(value);
    if (value.isIntegral()) return value.asInt();
    if (value.isFloat()) return value;
    fail("bad operand type for unary +: '" + typeName(value) + "'");
}

bool contains(const Value& container, const Value& item, Budget& budget) {
    switch (container.kind()) {
    case Value::Kind::Undefined:
        return false;
    case Value::Kind::String:
        if (!item.isString())
            fail("'in <string>' requires string as left operand, not " + typeName(item));
        budget.chargeText(container.asString().size());
        return container.asString().find(item.asString()) != std::string::npos;
    case Value::Kind::List:
        for (const Value& element : container.asList()->items)
            if (equals(element, item, budget)) return true;
        return false;
    case Value::Kind::Dict:
        if (item.isList() || item.isDict() || item.isNamespace())
            fail("unhashable type: '" + typeName(item) + "'");
        return container.asDict()->find(item, budget) != nullptr;
    case Value::Kind::Iterator: {
        // Python walks the iterator up to the first match, using up what it passed.
        const Iterator& iterator = *container.asIterator();
        const auto& items = iterator.items->items;
        while (iterator.position < items.size())
            if (equals(items[iterator.position++], item, budget)) return true;
        return false;
    }
    default:
        fail("argument of type '" + typeName(container) + "' is not iterable");
    }
}

int64_t toInteger(const Value& value, std::string_view what) {
    if (!value.isIntegral())
        fail(std::string(what) + " must be an integer, not " + typeName(value));
    return value.asInt();
}

} // namespace sinkscope::jinja
