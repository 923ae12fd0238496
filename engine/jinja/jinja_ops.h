// Python's operators on interpreter values: equality and ordering, arithmetic (int results that
// leave the 64-bit range are errors, where Python would grow the integer) and `in`.
#pragma once

#include "jinja/jinja_value.h"

#include <optional>
#include <string_view>

namespace sinkscope::jinja {

enum class BinaryOp {
    Add,
    Subtract,
    Multiply,
    Divide,
    FloorDivide,
    Modulo,
    Power,
    Concat, // ~
    Equal,
    NotEqual,
    Less,
    LessEqual,
    Greater,
    GreaterEqual,
    In,
    NotIn,
};
const char* binaryOpSymbol(BinaryOp op);

// a == b. Costs a step per element compared.
bool equals(const Value& a, const Value& b, Budget& budget);
// Python's ordering: <0, 0 or >0; an error for types Python cannot order ("'<' not supported
// between instances of 'str' and 'int'").
int compare(const Value& a, const Value& b, Budget& budget);

Value applyBinary(BinaryOp op, const Value& a, const Value& b, Budget& budget);
Value negate(const Value& value);
Value unaryPlus(const Value& value);
// Python's `item in container`.
bool contains(const Value& container, const Value& item, Budget& budget);

// Python's int(value) where value is a bool or an int, else an error naming `what`.
int64_t toInteger(const Value& value, std::string_view what);

} // namespace sinkscope::jinja
