// Values written out as Python writes them: str() (what {{ x }} prints), repr() (how str() of
// a container shows its items: ['a', 'b'], {'k': None}, (1,)), float repr (1.0, 1e-05, 1e+16),
// and json.dumps as Hugging Face's tojson calls it.
#pragma once

#include "jinja/jinja_budget.h"
#include "jinja/jinja_value.h"

#include <string>

namespace sinkscope::jinja {

std::string floatRepr(double value);

void appendStr(TextBuilder& out, const Value& value);
void appendRepr(TextBuilder& out, const Value& value);
std::string toStr(const Value& value, Budget& budget);

struct JsonOptions {
    bool indented = false;
    std::string indent;               // with `indented`: one level's indentation
    std::string itemSeparator = ", "; // "," when indented, unless given
    std::string keySeparator = ": ";
    bool ensureAscii = false;
    bool sortKeys = false;
};
// json.dumps(value, ...): lists and tuples as arrays, dict keys that are numbers, bools or None
// written as strings; an undefined value, a namespace or a callable is an error as in Python
// ("Object of type Undefined is not JSON serializable").
void appendJson(TextBuilder& out, const Value& value, const JsonOptions& options, Budget& budget);

// Python's printf-style `format % arguments` (also the format filter): %s %r %d %i %f %e %g %x
// %o %c %% with flags, width and precision; a tuple gives several arguments, a dict %(key)s.
Value percentFormat(const std::string& format, const Value& arguments, Budget& budget);
// Python's str.format: {} {0} {name} with .attribute and [key] steps, !r !s, and format specs
// ([[fill]align][sign][#][0][width][.precision][type]) for strings and numbers.
Value strFormat(const std::string& format, const Arguments& arguments, Budget& budget);

} // namespace sinkscope::jinja
