// jinja2's filters on text and single values (the ones on sequences are in
// jinja_sequence_filters.cpp). Where jinja2 gives a generator or iterator (items, batch,
// reverse), so does this: always true, no length, used up by walking it.
#include "jinja/builtins/jinja_builtins.h"
#include "jinja/jinja_lookup.h"

#include "jinja/builtins/jinja_format.h"
#include "jinja/builtins/jinja_text.h"
#include "jinja/jinja_ops.h"
#include "jinja/jinja_render.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace sinkscope::jinja {

namespace {

Budget& budgetOf(Interpreter& interpreter) {
    return interpreter.budget();
}

std::vector<Value> itemsOf(Interpreter& interpreter, const Value& input) {
    return iterate(input, budgetOf(interpreter))->items;
}

Value filterAbs(Interpreter&, const Value& input, const Arguments& arguments) {
    bindArguments("abs", {}, 0, arguments);
    if (input.isUndefined()) failUndefined(input);
    if (input.isIntegral()) {
        if (input.asInt() == INT64_MIN) fail("integer result outside the 64-bit range");
        return std::abs(input.asInt());
    }
    if (input.isFloat()) return std::fabs(input.asFloat());
    fail("bad operand type for abs(): '" + typeName(input) + "'");
}

Value filterAttr(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    const auto bound = bindArguments("attr", {"name"}, 1, arguments);
    const std::string name = toStr(*bound[0], budgetOf(interpreter));
    if (input.isUndefined()) failUndefined(input);
    if (auto method = findMethod(input, name)) return *method;
    if (input.isNamespace() || input.isLoop())
        return getAttribute(input, name, budgetOf(interpreter));
    return Value::undefined("'" + objectDescription(input) + "' has no attribute '" + name + "'");
}

Value filterBatch(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    const auto bound = bindArguments("batch", {"linecount", "fill_with"}, 1, arguments);
    const int64_t size = toInteger(*bound[0], "batch's linecount");
    if (size <= 0) fail("batch's linecount must be positive");
    std::vector<Value> batches;
    std::vector<Value> current;
    for (const Value& item : itemsOf(interpreter, input)) {
        current.push_back(item);
        if (static_cast<int64_t>(current.size()) == size)
            batches.push_back(makeList(budgetOf(interpreter), std::exchange(current, {})));
    }
    if (!current.empty()) {
        if (bound[1] && !bound[1]->isNone())
            while (static_cast<int64_t>(current.size()) < size)
                current.push_back(*bound[1]);
        batches.push_back(makeList(budgetOf(interpreter), std::move(current)));
    }
    return makeIterator(budgetOf(interpreter), std::move(batches));
}

Value filterCapitalize(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    bindArguments("capitalize", {}, 0, arguments);
    return makeString(budgetOf(interpreter), capitalizeText(toStr(input, budgetOf(interpreter))));
}

Value filterCenter(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    const auto bound = bindArguments("center", {"width"}, 0, arguments);
    const std::string text = toStr(input, budgetOf(interpreter));
    const int64_t width = intArgument(bound[0], 80, "center's width");
    const auto length = static_cast<int64_t>(codePointCount(text));
    if (width <= length) return Value(text);
    const int64_t padding = width - length;
    const int64_t left = padding / 2 + (padding & width & 1);
    TextBuilder out(budgetOf(interpreter));
    out.appendRepeated(" ", static_cast<size_t>(left));
    out.append(text);
    out.appendRepeated(" ", static_cast<size_t>(padding - left));
    return Value(out.take());
}

Value filterLength(Interpreter&, const Value& input, const Arguments& arguments) {
    bindArguments("length", {}, 0, arguments);
    const auto length = lengthOf(input);
    if (!length) fail("object of type '" + typeName(input) + "' has no len()");
    return static_cast<int64_t>(*length);
}

Value filterDefault(Interpreter&, const Value& input, const Arguments& arguments) {
    const auto bound = bindArguments("default", {"default_value", "boolean"}, 0, arguments);
    if (input.isUndefined() || (boolArgument(bound[1], false) && !truthy(input)))
        return bound[0] ? *bound[0] : Value(std::string());
    return input;
}

Value filterEscape(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    bindArguments("escape", {}, 0, arguments);
    TextBuilder out(budgetOf(interpreter));
    for (const char c : toStr(input, budgetOf(interpreter))) {
        switch (c) {
        case '&':
            out.append("&amp;");
            break;
        case '<':
            out.append("&lt;");
            break;
        case '>':
            out.append("&gt;");
            break;
        case '"':
            out.append("&#34;");
            break;
        case '\'':
            out.append("&#39;");
            break;
        default:
            out.append(c);
        }
    }
    return Value(out.take());
}

Value endItem(Interpreter& interpreter, const Value& input, bool first) {
    if (input.isIterator()) {
        if (!first)
            fail(std::string("'") + input.asIterator()->type + "' object is not reversible");
        const Iterator& iterator = *input.asIterator();
        if (iterator.position < iterator.items->items.size())
            return iterator.items->items[iterator.position++];
        return Value::undefined("No first item, sequence was empty.");
    }
    if (input.isUndefined() || (lengthOf(input) && *lengthOf(input) == 0))
        return Value::undefined(first ? "No first item, sequence was empty."
                                      : "No last item, sequence was empty.");
    if (input.isList()) return first ? input.asList()->items.front() : input.asList()->items.back();
    if (input.isDict())
        return first ? input.asDict()->entries.front().first : input.asDict()->entries.back().first;
    const std::vector<Value> items = itemsOf(interpreter, input);
    return first ? items.front() : items.back();
}

Value filterFirst(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    bindArguments("first", {}, 0, arguments);
    return endItem(interpreter, input, true);
}

Value filterLast(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    bindArguments("last", {}, 0, arguments);
    return endItem(interpreter, input, false);
}

Value filterFloat(Interpreter&, const Value& input, const Arguments& arguments) {
    const auto bound = bindArguments("float", {"default"}, 0, arguments);
    if (input.isUndefined()) failUndefined(input);
    if (input.isNumber()) return input.asFloat();
    if (input.isString())
        if (const auto parsed = parsePythonFloat(input.asString())) return *parsed;
    return bound[0] ? *bound[0] : Value(0.0);
}

// Python's int(text, base): optional sign, the base's prefix, single underscores, whitespace.
std::optional<int64_t> parsePythonInt(std::string_view text, int64_t base) {
    text = stripText(text, true, true);
    bool negative = false;
    if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
        negative = text[0] == '-';
        text.remove_prefix(1);
    }
    if (text.size() > 1 && text[0] == '0') {
        const char prefix = static_cast<char>(text[1] | 0x20);
        const int64_t prefixed = prefix == 'x' ? 16 : prefix == 'o' ? 8 : prefix == 'b' ? 2 : 0;
        if (prefixed && (base == prefixed || base == 0)) {
            base = prefixed;
            text.remove_prefix(2);
            if (!text.empty() && text[0] == '_') text.remove_prefix(1);
        }
    }
    if (base == 0) base = 10;
    if (text.empty() || base < 2 || base > 36) return std::nullopt;
    int64_t value = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '_' && i > 0 && i + 1 < text.size() && text[i + 1] != '_') continue;
        const int digit = c >= '0' && c <= '9'                     ? c - '0'
                          : (c | 0x20) >= 'a' && (c | 0x20) <= 'z' ? (c | 0x20) - 'a' + 10
                                                                   : 99;
        if (digit >= base) return std::nullopt;
        if (__builtin_mul_overflow(value, base, &value) ||
            __builtin_add_overflow(value, digit, &value))
            return std::nullopt;
    }
    return negative ? -value : value;
}

Value filterInt(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    const auto bound = bindArguments("int", {"default", "base"}, 0, arguments);
    const Value fallback = bound[0] ? *bound[0] : Value(int64_t{0});
    if (input.isUndefined()) failUndefined(input);
    if (input.isIntegral()) return input.asInt();
    if (input.isFloat()) {
        const double f = input.asFloat();
        if (!std::isfinite(f) || std::fabs(f) >= 9.2e18) return fallback;
        return static_cast<int64_t>(std::trunc(f));
    }
    if (!input.isString()) return fallback;
    if (const auto parsed =
            parsePythonInt(input.asString(), intArgument(bound[1], 10, "int's base")))
        return *parsed;
    // jinja2's fallback, so that "42.23"|int gives 42.
    if (const auto parsed = parsePythonFloat(input.asString())) {
        if (std::isfinite(*parsed) && std::fabs(*parsed) < 9.2e18)
            return static_cast<int64_t>(std::trunc(*parsed));
    }
    (void)interpreter;
    return fallback;
}

Value filterFormat(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    if (!arguments.positional.empty() && !arguments.keywords.empty())
        fail("can't handle positional and keyword arguments at the same time");
    Budget& budget = budgetOf(interpreter);
    const std::string format = toStr(input, budget);
    if (!arguments.keywords.empty()) {
        std::vector<std::pair<Value, Value>> entries;
        for (const auto& [name, value] : arguments.keywords)
            entries.emplace_back(Value(name), value);
        return percentFormat(format, makeDict(budget, std::move(entries)), budget);
    }
    return percentFormat(format, makeList(budget, arguments.positional, true), budget);
}

Value filterIndent(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    const auto bound = bindArguments("indent", {"width", "first", "blank"}, 0, arguments);
    if (input.isUndefined()) failUndefined(input);
    if (!input.isString())
        fail("unsupported operand type(s) for +=: '" + typeName(input) + "' and 'str'");
    Budget& budget = budgetOf(interpreter);
    std::string indentation;
    if (bound[0] && bound[0]->isString()) {
        indentation = bound[0]->asString();
    } else {
        TextBuilder spaces(budget);
        spaces.appendRepeated(" ", static_cast<size_t>(std::max<int64_t>(
                                       0, intArgument(bound[0], 4, "indent's width"))));
        indentation = spaces.take();
    }
    const bool blank = boolArgument(bound[2], false);
    const std::string text = input.asString() + "\n";
    const std::vector<std::string_view> lines = splitLines(text);
    TextBuilder out(budget);
    if (boolArgument(bound[1], false)) out.append(indentation);
    for (size_t i = 0; i < lines.size(); ++i) {
        if (i > 0) {
            out.append('\n');
            if (blank || !lines[i].empty()) out.append(indentation);
        }
        out.append(lines[i]);
    }
    return Value(out.take());
}

Value filterItems(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    bindArguments("items", {}, 0, arguments);
    if (input.isUndefined()) return makeIterator(budgetOf(interpreter), {});
    if (!input.isDict()) fail("Can only get item pairs from a mapping.");
    std::vector<Value> pairs;
    for (const auto& [key, value] : input.asDict()->entries)
        pairs.push_back(makeList(budgetOf(interpreter), {key, value}, true));
    return makeIterator(budgetOf(interpreter), std::move(pairs));
}

Value filterJoin(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    const auto bound = bindArguments("join", {"d", "attribute"}, 0, arguments);
    Budget& budget = budgetOf(interpreter);
    const std::string separator = strArgument(bound[0], "", budget);
    TextBuilder out(budget);
    bool first = true;
    for (const Value& item : itemsOf(interpreter, input)) {
        if (!first) out.append(separator);
        first = false;
        appendStr(out,
                  bound[1] && !bound[1]->isNone() ? attributePath(item, *bound[1], budget) : item);
    }
    return Value(out.take());
}

Value filterList(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    bindArguments("list", {}, 0, arguments);
    return makeList(budgetOf(interpreter), itemsOf(interpreter, input));
}

Value filterLower(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    bindArguments("lower", {}, 0, arguments);
    return makeString(budgetOf(interpreter), lowerText(toStr(input, budgetOf(interpreter))));
}

Value filterUpper(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    bindArguments("upper", {}, 0, arguments);
    return makeString(budgetOf(interpreter), upperText(toStr(input, budgetOf(interpreter))));
}

// jinja2's title: each piece after a run of spaces, '-', '(', '{', '[' or '<' starts upper case,
// the rest of it lower case (unlike str.title, "it's" stays "It's").
Value filterTitle(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    bindArguments("title", {}, 0, arguments);
    const std::string text = toStr(input, budgetOf(interpreter));
    std::string out;
    bool startOfWord = true;
    for (size_t i = 0; i < text.size();) {
        const char32_t c = nextCodePoint(text, i);
        const bool separator =
            isPythonSpace(c) || c == '-' || c == '(' || c == '{' || c == '[' || c == '<';
        appendCodePoint(out, separator ? c : startOfWord ? upperCase(c) : lowerCase(c));
        startOfWord = separator;
    }
    return makeString(budgetOf(interpreter), std::move(out));
}

Value filterReplace(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    const auto bound = bindArguments("replace", {"old", "new", "count"}, 2, arguments);
    Budget& budget = budgetOf(interpreter);
    return replaceText(toStr(input, budget), toStr(*bound[0], budget), toStr(*bound[1], budget),
                       intArgument(bound[2], -1, "replace's count"), budget);
}

Value filterReverse(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    bindArguments("reverse", {}, 0, arguments);
    if (input.isString()) {
        const std::string& text = input.asString();
        const std::vector<size_t> starts = codePointStarts(text);
        std::string out;
        out.reserve(text.size());
        for (size_t i = starts.size() - 1; i > 0; --i)
            out.append(text, starts[i - 1], starts[i] - starts[i - 1]);
        return makeString(budgetOf(interpreter), std::move(out));
    }
    if (!input.isList() && !input.isDict() && !input.isUndefined() && !input.isIterator())
        fail("argument must be iterable");
    std::vector<Value> items = itemsOf(interpreter, input);
    std::reverse(items.begin(), items.end());
    // Python's reversed() of a sequence is an iterator; a generator is made a list first.
    if (input.isIterator()) return makeList(budgetOf(interpreter), std::move(items));
    const char* type = input.isDict()                       ? "dict_reversekeyiterator"
                       : input.isList() && !input.isTuple() ? "list_reverseiterator"
                                                            : "reversed";
    return makeIterator(budgetOf(interpreter), std::move(items), type);
}

Value filterRound(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    const auto bound = bindArguments("round", {"precision", "method"}, 0, arguments);
    const int64_t precision = intArgument(bound[0], 0, "round's precision");
    const std::string method = strArgument(bound[1], "common", budgetOf(interpreter));
    if (method != "common" && method != "ceil" && method != "floor")
        fail("method must be common, ceil or floor");
    if (input.isUndefined()) failUndefined(input);
    if (!input.isNumber()) fail("type " + typeName(input) + " doesn't define __round__ method");
    if (method == "common" && input.isIntegral() && precision >= 0) return input.asInt();
    const double value = input.asFloat();
    if (!std::isfinite(value)) return value;
    const double scale =
        std::pow(10.0, static_cast<double>(std::clamp<int64_t>(precision, -400, 400)));
    if (method == "ceil") return std::ceil(value * scale) / scale;
    if (method == "floor") return std::floor(value * scale) / scale;
    if (precision < 0) return std::nearbyint(value * scale) / scale;
    // Python rounds the exact binary value half to even, as printf does.
    char buffer[512];
    std::snprintf(buffer, sizeof buffer, "%.*f",
                  static_cast<int>(std::min<int64_t>(precision, 330)), value);
    return std::strtod(buffer, nullptr);
}

Value filterSafe(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    bindArguments("safe", {}, 0, arguments);
    return Value(toStr(input, budgetOf(interpreter)));
}

Value filterString(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    bindArguments("string", {}, 0, arguments);
    return Value(toStr(input, budgetOf(interpreter)));
}

Value filterSum(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    const auto bound = bindArguments("sum", {"attribute", "start"}, 0, arguments);
    Budget& budget = budgetOf(interpreter);
    Value total = bound[1] ? *bound[1] : Value(int64_t{0});
    if (total.isString()) fail("sum() can't sum strings [use ''.join(seq) instead]");
    for (const Value& item : itemsOf(interpreter, input))
        total = applyBinary(BinaryOp::Add, total,
                            bound[0] && !bound[0]->isNone() ? attributePath(item, *bound[0], budget)
                                                            : item,
                            budget);
    return total;
}

Value filterTrim(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    const auto bound = bindArguments("trim", {"chars"}, 0, arguments);
    const std::string text = toStr(input, budgetOf(interpreter));
    if (bound[0] && !bound[0]->isNone())
        return Value(
            std::string(stripChars(text, toStr(*bound[0], budgetOf(interpreter)), true, true)));
    return Value(std::string(stripText(text, true, true)));
}

Value filterWordcount(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    bindArguments("wordcount", {}, 0, arguments);
    const std::string text = toStr(input, budgetOf(interpreter));
    int64_t words = 0;
    bool inWord = false;
    for (size_t i = 0; i < text.size();) {
        const bool word = isWordCharacter(nextCodePoint(text, i));
        if (word && !inWord) ++words;
        inWord = word;
    }
    return words;
}

} // namespace

FilterFunction findValueFilter(std::string_view name) {
    static const std::pair<std::string_view, FilterFunction> filters[] = {
        {"abs", filterAbs},
        {"attr", filterAttr},
        {"batch", filterBatch},
        {"capitalize", filterCapitalize},
        {"center", filterCenter},
        {"count", filterLength},
        {"d", filterDefault},
        {"default", filterDefault},
        {"e", filterEscape},
        {"escape", filterEscape},
        {"first", filterFirst},
        {"float", filterFloat},
        {"format", filterFormat},
        {"indent", filterIndent},
        {"int", filterInt},
        {"items", filterItems},
        {"join", filterJoin},
        {"last", filterLast},
        {"length", filterLength},
        {"list", filterList},
        {"lower", filterLower},
        {"replace", filterReplace},
        {"reverse", filterReverse},
        {"round", filterRound},
        {"safe", filterSafe},
        {"string", filterString},
        {"sum", filterSum},
        {"title", filterTitle},
        {"trim", filterTrim},
        {"upper", filterUpper},
        {"wordcount", filterWordcount},
    };
    for (const auto& [filterName, function] : filters)
        if (filterName == name) return function;
    return nullptr;
}

} // namespace sinkscope::jinja
