// The global functions, and the argument helpers every builtin shares.
#include "jinja/builtins/jinja_builtins.h"
#include "jinja/jinja_lookup.h"

#include "jinja/builtins/jinja_format.h"
#include "jinja/builtins/jinja_text.h"
#include "jinja/jinja_ops.h"
#include "jinja/jinja_render.h"

#include <array>
#include <cmath>

namespace sinkscope::jinja {

std::vector<std::optional<Value>> bindArguments(std::string_view callee,
                                                std::initializer_list<std::string_view> parameters,
                                                size_t required, const Arguments& arguments) {
    const std::vector<std::string_view> names(parameters);
    if (arguments.positional.size() > names.size())
        fail(std::string(callee) + "() takes at most " + std::to_string(names.size()) +
             " argument(s) (" + std::to_string(arguments.positional.size()) + " given)");
    std::vector<std::optional<Value>> slots(names.size());
    for (size_t i = 0; i < arguments.positional.size(); ++i)
        slots[i] = arguments.positional[i];
    for (const auto& [name, value] : arguments.keywords) {
        size_t index = 0;
        while (index < names.size() && names[index] != name)
            ++index;
        if (index == names.size())
            fail(std::string(callee) + "() got an unexpected keyword argument '" + name + "'");
        if (slots[index])
            fail(std::string(callee) + "() got multiple values for argument '" + name + "'");
        slots[index] = value;
    }
    for (size_t i = 0; i < required; ++i)
        if (!slots[i])
            fail(std::string(callee) + "() missing required argument '" + std::string(names[i]) +
                 "'");
    return slots;
}

bool boolArgument(const std::optional<Value>& argument, bool fallback) {
    return argument ? truthy(*argument) : fallback;
}

int64_t intArgument(const std::optional<Value>& argument, int64_t fallback, std::string_view what) {
    if (!argument || argument->isNone()) return fallback;
    return toInteger(*argument, what);
}

std::string strArgument(const std::optional<Value>& argument, std::string fallback,
                        Budget& budget) {
    return argument ? toStr(*argument, budget) : std::move(fallback);
}

Value attributePath(const Value& item, const Value& path, Budget& budget) {
    if (!path.isString()) return getItem(item, path, budget);
    Value current = item;
    const std::string& text = path.asString();
    size_t start = 0;
    while (true) {
        const size_t dot = text.find('.', start);
        const std::string part = text.substr(start, dot == std::string::npos ? dot : dot - start);
        const bool digits =
            !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
        if (digits && part.size() < 18)
            current = getItem(current, Value(static_cast<int64_t>(std::stoll(part))), budget);
        else
            current = getItem(current, Value(part), budget);
        if (dot == std::string::npos) return current;
        start = dot + 1;
    }
}

Value caseFolded(const Value& value, bool caseSensitive) {
    if (caseSensitive || !value.isString()) return value;
    return Value(lowerText(value.asString()));
}

namespace {

using GlobalBody = Value (*)(Interpreter&, Arguments&);

class GlobalFunction : public Callable {
public:
    GlobalFunction(std::string name, GlobalBody body) : m_name(std::move(name)), m_body(body) {}
    std::string name() const override { return m_name; }
    Value call(Interpreter& interpreter, Arguments arguments) const override {
        return m_body(interpreter, arguments);
    }

private:
    std::string m_name;
    GlobalBody m_body;
};

// Hugging Face's raise_exception: the message, exactly as the template wrote it.
Value raiseException(Interpreter& interpreter, Arguments& arguments) {
    const auto bound = bindArguments("raise_exception", {"message"}, 1, arguments);
    fail(toStr(*bound[0], interpreter.budget()));
}

// strftime in the C locale whatever the process locale is, as Python's datetime writes it
// for a naive time (%Z and %z are empty).
std::string formatTime(std::string_view format, const std::tm& t) {
    static const std::array<const char*, 7> days = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                                    "Thursday", "Friday", "Saturday"};
    static const std::array<const char*, 12> months = {
        "January", "February", "March",     "April",   "May",      "June",
        "July",    "August",   "September", "October", "November", "December"};
    const auto number = [](int value, int width, char pad = '0') {
        std::string text = std::to_string(value);
        if (static_cast<int>(text.size()) < width)
            text.insert(0, static_cast<size_t>(width) - text.size(), pad);
        return text;
    };
    const int hour12 = t.tm_hour % 12 == 0 ? 12 : t.tm_hour % 12;
    std::string out;
    for (size_t i = 0; i < format.size(); ++i) {
        if (format[i] != '%' || i + 1 == format.size()) {
            out += format[i];
            continue;
        }
        const char c = format[++i];
        switch (c) {
        case 'a':
            out += std::string(days[static_cast<size_t>(t.tm_wday)]).substr(0, 3);
            break;
        case 'A':
            out += days[static_cast<size_t>(t.tm_wday)];
            break;
        case 'b':
        case 'h':
            out += std::string(months[static_cast<size_t>(t.tm_mon)]).substr(0, 3);
            break;
        case 'B':
            out += months[static_cast<size_t>(t.tm_mon)];
            break;
        case 'd':
            out += number(t.tm_mday, 2);
            break;
        case 'e':
            out += number(t.tm_mday, 2, ' ');
            break;
        case 'H':
            out += number(t.tm_hour, 2);
            break;
        case 'I':
            out += number(hour12, 2);
            break;
        case 'j':
            out += number(t.tm_yday + 1, 3);
            break;
        case 'm':
            out += number(t.tm_mon + 1, 2);
            break;
        case 'M':
            out += number(t.tm_min, 2);
            break;
        case 'p':
            out += t.tm_hour < 12 ? "AM" : "PM";
            break;
        case 'S':
            out += number(t.tm_sec, 2);
            break;
        case 'y':
            out += number(t.tm_year % 100, 2);
            break;
        case 'Y':
            out += std::to_string(t.tm_year + 1900);
            break;
        case 'u':
            out += std::to_string(t.tm_wday == 0 ? 7 : t.tm_wday);
            break;
        case 'w':
            out += std::to_string(t.tm_wday);
            break;
        case 'U':
            out += number((t.tm_yday + 7 - t.tm_wday) / 7, 2);
            break;
        case 'W':
            out += number((t.tm_yday + 7 - (t.tm_wday + 6) % 7) / 7, 2);
            break;
        case 'D':
            out += formatTime("%m/%d/%y", t);
            break;
        case 'F':
            out += formatTime("%Y-%m-%d", t);
            break;
        case 'T':
            out += formatTime("%H:%M:%S", t);
            break;
        case 'R':
            out += formatTime("%H:%M", t);
            break;
        case 'c':
            out += formatTime("%a %b %e %H:%M:%S %Y", t);
            break;
        case 'x':
            out += formatTime("%m/%d/%y", t);
            break;
        case 'X':
            out += formatTime("%H:%M:%S", t);
            break;
        case 'n':
            out += '\n';
            break;
        case 't':
            out += '\t';
            break;
        case '%':
            out += '%';
            break;
        case 'Z':
        case 'z':
            break;
        default:
            out += '%';
            out += c;
        }
    }
    return out;
}

Value strftimeNow(Interpreter& interpreter, Arguments& arguments) {
    const auto bound = bindArguments("strftime_now", {"format"}, 1, arguments);
    if (!bound[0]->isString())
        fail("strftime() argument 1 must be str, not " + typeName(*bound[0]));
    const std::time_t now = interpreter.now();
    std::tm utc{};
    gmtime_r(&now, &utc);
    return makeString(interpreter.budget(), formatTime(bound[0]->asString(), utc));
}

Value makeNamespace(Interpreter& interpreter, Arguments& arguments) {
    if (arguments.positional.size() > 1) fail("namespace() takes at most one positional argument");
    auto ns = std::make_shared<Namespace>();
    if (!arguments.positional.empty()) {
        const Value& initial = arguments.positional.front();
        if (!initial.isDict()) fail("namespace() takes a dict as its positional argument");
        for (const auto& [key, value] : initial.asDict()->entries)
            ns->set(toStr(key, interpreter.budget()), value);
    }
    for (auto& [name, value] : arguments.keywords)
        ns->set(name, std::move(value));
    for (const auto& [name, value] : ns->attributes)
        if (value.holdsNamespace()) fail("a namespace cannot hold a namespace");
    return Value(std::move(ns));
}

// jinja2's sandbox refuses ranges of more than 100,000 numbers; so does this one.
Value range(Interpreter& interpreter, Arguments& arguments) {
    const auto bound = bindArguments("range", {"start", "stop", "step"}, 1, arguments);
    int64_t start = 0;
    int64_t stop = toInteger(*bound[0], "range()'s arguments");
    if (bound[1]) {
        start = stop;
        stop = toInteger(*bound[1], "range()'s arguments");
    }
    const int64_t step = bound[2] ? toInteger(*bound[2], "range()'s arguments") : 1;
    if (step == 0) fail("range() arg 3 must not be zero");
    const long double span = static_cast<long double>(stop) - static_cast<long double>(start);
    const long double count = std::ceil(span / static_cast<long double>(step));
    if (count > 100000)
        fail("Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
    std::vector<Value> numbers;
    for (int64_t k = 0; k < static_cast<int64_t>(count); ++k)
        numbers.emplace_back(start + k * step);
    return makeList(interpreter.budget(), std::move(numbers));
}

Value dict(Interpreter& interpreter, Arguments& arguments) {
    if (!arguments.positional.empty()) fail("dict() takes keyword arguments only here");
    std::vector<std::pair<Value, Value>> entries;
    for (auto& [name, value] : arguments.keywords)
        entries.emplace_back(Value(name), std::move(value));
    return makeDict(interpreter.budget(), std::move(entries));
}

} // namespace

std::vector<std::pair<std::string, Value>> globalFunctions() {
    std::vector<std::pair<std::string, Value>> globals;
    const auto add = [&globals](const char* name, GlobalBody body) {
        globals.emplace_back(name, Value(std::shared_ptr<const Callable>(
                                       std::make_shared<GlobalFunction>(name, body))));
    };
    add("raise_exception", raiseException);
    add("strftime_now", strftimeNow);
    add("namespace", makeNamespace);
    add("range", range);
    add("dict", dict);
    return globals;
}

} // namespace sinkscope::jinja
