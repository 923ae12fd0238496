// Methods of str, dict and list, as jinja2's immutable sandbox lets a template call them: the
// ones that change a list or dict (append, pop, update, ...) are refused when called, with the
// sandbox's message. The loop's cycle() is here too.
#include "jinja/builtins/jinja_builtins.h"
#include "jinja/jinja_lookup.h"

#include "jinja/builtins/jinja_format.h"
#include "jinja/builtins/jinja_text.h"
#include "jinja/jinja_ops.h"
#include "jinja/jinja_render.h"

#include <charconv>
#include <cmath>

namespace sinkscope::jinja {

// Python's float(text): surrounding whitespace, sign, digits with single underscores, an
// exponent, inf / infinity / nan in any case.
std::optional<double> parsePythonFloat(std::string_view text) {
    text = stripText(text, true, true);
    std::string digits;
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '_') {
            const bool between = i > 0 && i + 1 < text.size() &&
                                 std::isdigit(static_cast<unsigned char>(text[i - 1])) &&
                                 std::isdigit(static_cast<unsigned char>(text[i + 1]));
            if (!between) return std::nullopt;
            continue;
        }
        digits += text[i];
    }
    std::string_view body = digits;
    const bool negative = !body.empty() && body[0] == '-';
    if (!body.empty() && (body[0] == '-' || body[0] == '+')) body.remove_prefix(1);
    std::string lower = lowerText(body);
    if (lower == "inf" || lower == "infinity") return negative ? -HUGE_VAL : HUGE_VAL;
    if (lower == "nan") return std::nan("");
    if (body.empty() || !(std::isdigit(static_cast<unsigned char>(body[0])) || body[0] == '.'))
        return std::nullopt;
    double value = 0;
    const auto result = std::from_chars(body.data(), body.data() + body.size(), value);
    if (result.ptr != body.data() + body.size()) return std::nullopt;
    if (result.ec == std::errc::result_out_of_range)
        value = lower.find("e-") != std::string::npos ? 0.0 : HUGE_VAL;
    return negative ? -value : value;
}

Value replaceText(const std::string& text, const std::string& old, const std::string& with,
                  int64_t count, Budget& budget) {
    TextBuilder out(budget);
    if (old.empty()) {
        // Python puts the replacement before every character and at the end.
        int64_t done = 0;
        for (size_t i = 0; i < text.size();) {
            if (count < 0 || done < count) {
                out.append(with);
                ++done;
            }
            const size_t start = i;
            nextCodePoint(text, i);
            out.append(std::string_view(text).substr(start, i - start));
        }
        if (count < 0 || done < count) out.append(with);
        return Value(out.take());
    }
    size_t position = 0;
    for (int64_t done = 0; count < 0 || done < count; ++done) {
        const size_t found = text.find(old, position);
        if (found == std::string::npos) break;
        out.append(std::string_view(text).substr(position, found - position));
        out.append(with);
        position = found + old.size();
    }
    out.append(std::string_view(text).substr(position));
    return Value(out.take());
}

namespace {

using MethodBody = Value (*)(Interpreter&, const Value& self, const Arguments&);

class BoundMethod : public Callable {
public:
    BoundMethod(Value self, std::string_view name, MethodBody body)
        : m_self(std::move(self)), m_name(name), m_body(body) {}
    std::string name() const override { return m_name; }
    Value call(Interpreter& interpreter, Arguments arguments) const override {
        return m_body(interpreter, m_self, arguments);
    }

private:
    Value m_self;
    std::string m_name;
    MethodBody m_body;
};

const std::string& text(const Value& self) {
    return self.asString();
}

std::string strParameter(Interpreter& interpreter, const std::optional<Value>& value,
                         std::string_view method) {
    if (!value->isString())
        fail(std::string(method) + "() argument must be str, not " + typeName(*value));
    (void)interpreter;
    return value->asString();
}

// The code points text[start:end] as byte offsets, with slice semantics for the bounds.
std::pair<size_t, size_t> byteRange(const std::string& string, const std::optional<Value>& start,
                                    const std::optional<Value>& end) {
    const std::vector<size_t> starts = codePointStarts(string);
    const auto length = static_cast<int64_t>(starts.size() - 1);
    const auto clamp = [length](const std::optional<Value>& bound, int64_t fallback) {
        if (!bound || bound->isNone()) return fallback;
        int64_t index = toInteger(*bound, "slice indices");
        if (index < 0) index = std::max<int64_t>(0, index + length);
        return std::min(index, length);
    };
    const int64_t first = clamp(start, 0);
    const int64_t last = std::max(first, clamp(end, length));
    return {starts[static_cast<size_t>(first)], starts[static_cast<size_t>(last)]};
}

Value strip(Interpreter& interpreter, const Value& self, const Arguments& arguments, bool left,
            bool right, std::string_view name) {
    const auto bound = bindArguments(name, {"chars"}, 0, arguments);
    if (bound[0] && !bound[0]->isNone())
        return Value(std::string(
            stripChars(text(self), strParameter(interpreter, bound[0], name), left, right)));
    return Value(std::string(stripText(text(self), left, right)));
}

Value methodStrip(Interpreter& i, const Value& self, const Arguments& a) {
    return strip(i, self, a, true, true, "strip");
}
Value methodLstrip(Interpreter& i, const Value& self, const Arguments& a) {
    return strip(i, self, a, true, false, "lstrip");
}
Value methodRstrip(Interpreter& i, const Value& self, const Arguments& a) {
    return strip(i, self, a, false, true, "rstrip");
}

// Byte spans of the runs of non-whitespace, for split() without a separator.
std::vector<std::pair<size_t, size_t>> words(const std::string& string) {
    std::vector<std::pair<size_t, size_t>> spans;
    size_t i = 0;
    while (i < string.size()) {
        const size_t start = i;
        const bool space = isPythonSpace(nextCodePoint(string, i));
        if (space) continue;
        if (!spans.empty() && spans.back().second == start)
            spans.back().second = i;
        else
            spans.emplace_back(start, i);
    }
    return spans;
}

// str.split and str.rsplit: by a separator, or by runs of whitespace (then no empty pieces;
// past maxsplit the rest is one piece, whitespace and all).
Value split(Interpreter& interpreter, const Value& self, const Arguments& arguments,
            bool fromRight) {
    const auto bound =
        bindArguments(fromRight ? "rsplit" : "split", {"sep", "maxsplit"}, 0, arguments);
    Budget& budget = interpreter.budget();
    const std::string& string = text(self);
    const int64_t maxSplits = intArgument(bound[1], -1, "maxsplit");
    std::vector<std::string_view> pieces;
    const std::string_view whole = string;
    if (bound[0] && !bound[0]->isNone()) {
        const std::string separator = strParameter(interpreter, bound[0], "split");
        if (separator.empty()) fail("empty separator");
        std::string_view rest = whole;
        for (int64_t done = 0; maxSplits < 0 || done < maxSplits; ++done) {
            const size_t at = fromRight ? rest.rfind(separator) : rest.find(separator);
            if (at == std::string_view::npos) break;
            pieces.push_back(fromRight ? rest.substr(at + separator.size()) : rest.substr(0, at));
            rest = fromRight ? rest.substr(0, at) : rest.substr(at + separator.size());
        }
        pieces.push_back(rest);
        if (fromRight) std::reverse(pieces.begin(), pieces.end());
    } else {
        const auto spans = words(string);
        const size_t count = spans.size();
        const size_t whole_words = maxSplits < 0 || static_cast<size_t>(maxSplits) + 1 >= count
                                       ? count
                                       : static_cast<size_t>(maxSplits);
        if (whole_words == count) {
            for (const auto& [begin, end] : spans)
                pieces.push_back(whole.substr(begin, end - begin));
        } else if (!fromRight) {
            for (size_t i = 0; i < whole_words; ++i)
                pieces.push_back(whole.substr(spans[i].first, spans[i].second - spans[i].first));
            pieces.push_back(whole.substr(spans[whole_words].first));
        } else {
            pieces.push_back(whole.substr(0, spans[count - 1 - whole_words].second));
            for (size_t i = count - whole_words; i < count; ++i)
                pieces.push_back(whole.substr(spans[i].first, spans[i].second - spans[i].first));
        }
    }
    std::vector<Value> values;
    budget.chargeItems(pieces.size());
    for (const std::string_view piece : pieces)
        values.push_back(makeString(budget, std::string(piece)));
    return makeList(budget, std::move(values));
}

Value methodSplit(Interpreter& i, const Value& self, const Arguments& a) {
    return split(i, self, a, false);
}
Value methodRsplit(Interpreter& i, const Value& self, const Arguments& a) {
    return split(i, self, a, true);
}

Value methodSplitlines(Interpreter& interpreter, const Value& self, const Arguments& arguments) {
    bindArguments("splitlines", {}, 0, arguments);
    std::vector<Value> lines;
    for (const std::string_view line : splitLines(text(self)))
        lines.emplace_back(std::string(line));
    return makeList(interpreter.budget(), std::move(lines));
}

Value affix(Interpreter& interpreter, const Value& self, const Arguments& arguments, bool prefix) {
    const std::string_view name = prefix ? "startswith" : "endswith";
    const auto bound = bindArguments(name, {"affix", "start", "end"}, 1, arguments);
    const auto [begin, end] = byteRange(text(self), bound[1], bound[2]);
    const std::string_view range = std::string_view(text(self)).substr(begin, end - begin);
    std::vector<Value> candidates;
    if (bound[0]->isTuple())
        candidates = bound[0]->asList()->items;
    else
        candidates.push_back(*bound[0]);
    for (const Value& candidate : candidates) {
        if (!candidate.isString())
            fail(std::string(name) + " first arg must be str or a tuple of str, not " +
                 typeName(candidate));
        const std::string& affixText = candidate.asString();
        if (affixText.size() <= range.size() &&
            range.compare(prefix ? 0 : range.size() - affixText.size(), affixText.size(),
                          affixText) == 0)
            return true;
    }
    (void)interpreter;
    return false;
}

Value methodStartswith(Interpreter& i, const Value& self, const Arguments& a) {
    return affix(i, self, a, true);
}
Value methodEndswith(Interpreter& i, const Value& self, const Arguments& a) {
    return affix(i, self, a, false);
}

template <std::string (*Transform)(std::string_view)>
Value transformed(Interpreter& interpreter, const Value& self, const Arguments& arguments) {
    bindArguments("str method", {}, 0, arguments);
    return makeString(interpreter.budget(), Transform(text(self)));
}

Value methodReplace(Interpreter& interpreter, const Value& self, const Arguments& arguments) {
    const auto bound = bindArguments("replace", {"old", "new", "count"}, 2, arguments);
    return replaceText(text(self), strParameter(interpreter, bound[0], "replace"),
                       strParameter(interpreter, bound[1], "replace"),
                       intArgument(bound[2], -1, "replace's count"), interpreter.budget());
}

// find, rfind and count, in code points like Python.
Value search(Interpreter& interpreter, const Value& self, const Arguments& arguments,
             std::string_view name) {
    const auto bound = bindArguments(name, {"sub", "start", "end"}, 1, arguments);
    const std::string sub = strParameter(interpreter, bound[0], name);
    const auto [begin, end] = byteRange(text(self), bound[1], bound[2]);
    const std::string_view range = std::string_view(text(self)).substr(begin, end - begin);
    interpreter.budget().chargeText(range.size());
    if (name == "count") {
        if (sub.empty()) return static_cast<int64_t>(codePointCount(range) + 1);
        int64_t count = 0;
        for (size_t at = range.find(sub); at != std::string_view::npos;
             at = range.find(sub, at + sub.size()))
            ++count;
        return count;
    }
    const size_t at = name == "find" ? range.find(sub) : range.rfind(sub);
    if (at == std::string_view::npos) return int64_t{-1};
    return static_cast<int64_t>(codePointsBetween(text(self), 0, begin + at));
}

Value methodFind(Interpreter& i, const Value& self, const Arguments& a) {
    return search(i, self, a, "find");
}
Value methodRfind(Interpreter& i, const Value& self, const Arguments& a) {
    return search(i, self, a, "rfind");
}
Value methodCount(Interpreter& i, const Value& self, const Arguments& a) {
    return search(i, self, a, "count");
}

Value methodJoin(Interpreter& interpreter, const Value& self, const Arguments& arguments) {
    const auto bound = bindArguments("join", {"iterable"}, 1, arguments);
    TextBuilder out(interpreter.budget());
    const ListPtr items = iterate(*bound[0], interpreter.budget());
    for (size_t i = 0; i < items->items.size(); ++i) {
        const Value& item = items->items[i];
        if (!item.isString())
            fail("sequence item " + std::to_string(i) + ": expected str instance, " +
                 typeName(item) + " found");
        if (i > 0) out.append(text(self));
        out.append(item.asString());
    }
    return Value(out.take());
}

template <bool (*Predicate)(char32_t)>
Value characterClass(Interpreter&, const Value& self, const Arguments& arguments) {
    bindArguments("str method", {}, 0, arguments);
    const std::string& string = text(self);
    if (string.empty()) return false;
    for (size_t i = 0; i < string.size();)
        if (!Predicate(nextCodePoint(string, i))) return false;
    return true;
}

bool isDigitCharacter(char32_t c) {
    return c >= '0' && c <= '9';
}
bool isAlphaCharacter(char32_t c) {
    return isWordCharacter(c) && c != '_' && !isDigitCharacter(c);
}
bool isAlnumCharacter(char32_t c) {
    return isWordCharacter(c) && c != '_';
}

template <bool (*Predicate)(std::string_view)>
Value textClass(Interpreter&, const Value& self, const Arguments& arguments) {
    bindArguments("str method", {}, 0, arguments);
    return Predicate(text(self));
}

std::string titleOf(std::string_view s) {
    return titleText(s);
}
std::string upperOf(std::string_view s) {
    return upperText(s);
}
std::string lowerOf(std::string_view s) {
    return lowerText(s);
}
std::string capitalizeOf(std::string_view s) {
    return capitalizeText(s);
}

} // namespace

namespace {

Value methodFormat(Interpreter& interpreter, const Value& self, const Arguments& arguments) {
    return strFormat(text(self), arguments, interpreter.budget());
}

Value methodItems(Interpreter& interpreter, const Value& self, const Arguments& arguments) {
    bindArguments("items", {}, 0, arguments);
    std::vector<Value> pairs;
    for (const auto& [key, value] : self.asDict()->entries)
        pairs.push_back(makeList(interpreter.budget(), {key, value}, true));
    return makeList(interpreter.budget(), std::move(pairs));
}

Value methodKeys(Interpreter& interpreter, const Value& self, const Arguments& arguments) {
    bindArguments("keys", {}, 0, arguments);
    return Value(iterate(self, interpreter.budget()));
}

Value methodValues(Interpreter& interpreter, const Value& self, const Arguments& arguments) {
    bindArguments("values", {}, 0, arguments);
    std::vector<Value> values;
    for (const auto& entry : self.asDict()->entries)
        values.push_back(entry.second);
    return makeList(interpreter.budget(), std::move(values));
}

Value methodGet(Interpreter& interpreter, const Value& self, const Arguments& arguments) {
    const auto bound = bindArguments("get", {"key", "default"}, 1, arguments);
    if (bound[0]->isList() || bound[0]->isDict() || bound[0]->isNamespace())
        fail("unhashable type: '" + typeName(*bound[0]) + "'");
    if (const Value* found = self.asDict()->find(*bound[0], interpreter.budget())) return *found;
    return bound[1] ? *bound[1] : Value(None{});
}

Value methodIndex(Interpreter& interpreter, const Value& self, const Arguments& arguments) {
    const auto bound = bindArguments("index", {"value"}, 1, arguments);
    const auto& items = self.asList()->items;
    for (size_t i = 0; i < items.size(); ++i)
        if (equals(items[i], *bound[0], interpreter.budget())) return static_cast<int64_t>(i);
    fail("the value is not in the " + typeName(self));
}

Value methodListCount(Interpreter& interpreter, const Value& self, const Arguments& arguments) {
    const auto bound = bindArguments("count", {"value"}, 1, arguments);
    int64_t count = 0;
    for (const Value& item : self.asList()->items)
        if (equals(item, *bound[0], interpreter.budget())) ++count;
    return count;
}

Value methodCycle(Interpreter&, const Value& self, const Arguments& arguments) {
    if (!arguments.keywords.empty()) fail("cycle() takes no keyword arguments");
    if (arguments.positional.empty()) fail("no items for cycling given");
    return arguments.positional[self.asLoop()->index % arguments.positional.size()];
}

struct Method {
    std::string_view name;
    MethodBody body;
};

const Method kStringMethods[] = {
    {"capitalize", transformed<capitalizeOf>},
    {"count", methodCount},
    {"endswith", methodEndswith},
    {"find", methodFind},
    {"format", methodFormat},
    {"isalnum", characterClass<isAlnumCharacter>},
    {"isalpha", characterClass<isAlphaCharacter>},
    {"isdigit", characterClass<isDigitCharacter>},
    {"islower", textClass<isLowerText>},
    {"isspace", characterClass<isPythonSpace>},
    {"isupper", textClass<isUpperText>},
    {"join", methodJoin},
    {"lower", transformed<lowerOf>},
    {"lstrip", methodLstrip},
    {"replace", methodReplace},
    {"rfind", methodRfind},
    {"rsplit", methodRsplit},
    {"rstrip", methodRstrip},
    {"split", methodSplit},
    {"splitlines", methodSplitlines},
    {"startswith", methodStartswith},
    {"strip", methodStrip},
    {"title", transformed<titleOf>},
    {"upper", transformed<upperOf>},
};
const Method kDictMethods[] = {
    {"get", methodGet}, {"items", methodItems}, {"keys", methodKeys}, {"values", methodValues}};
const Method kListMethods[] = {{"count", methodListCount}, {"index", methodIndex}};
const std::string_view kMutatingDictMethods[] = {"clear", "pop", "popitem", "setdefault", "update"};
const std::string_view kMutatingListMethods[] = {"append", "clear",  "extend",  "insert",
                                                 "pop",    "remove", "reverse", "sort"};

template <size_t N>
std::optional<Value> bind(const Value& self, std::string_view name, const Method (&methods)[N]) {
    for (const Method& method : methods)
        if (method.name == name)
            return Value(std::shared_ptr<const Callable>(
                std::make_shared<BoundMethod>(self, name, method.body)));
    return std::nullopt;
}

template <size_t N>
std::optional<Value> refuse(const Value& self, std::string_view name,
                            const std::string_view (&methods)[N]) {
    for (const std::string_view method : methods)
        if (method == name)
            return Value::undefined("access to attribute '" + std::string(name) + "' of '" +
                                    typeName(self) + "' object is unsafe.");
    return std::nullopt;
}

} // namespace

std::optional<Value> findMethod(const Value& object, std::string_view name) {
    switch (object.kind()) {
    case Value::Kind::String:
        return bind(object, name, kStringMethods);
    case Value::Kind::Dict:
        if (auto method = bind(object, name, kDictMethods)) return method;
        return refuse(object, name, kMutatingDictMethods);
    case Value::Kind::List:
        if (auto method = bind(object, name, kListMethods)) return method;
        if (object.isTuple()) return std::nullopt;
        return refuse(object, name, kMutatingListMethods);
    case Value::Kind::Loop:
        if (name == "cycle")
            return Value(std::shared_ptr<const Callable>(
                std::make_shared<BoundMethod>(object, name, methodCycle)));
        return std::nullopt;
    default:
        return std::nullopt;
    }
}

} // namespace sinkscope::jinja
