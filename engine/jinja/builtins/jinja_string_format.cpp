// Python's two format-string languages: printf-style `format % arguments` (the % operator and
// jinja2's format filter) and str.format with its format-spec mini-language.
#include "jinja/builtins/jinja_format.h"
#include "jinja/builtins/jinja_text.h"
#include "jinja/jinja_budget.h"
#include "jinja/jinja_lookup.h"
#include "jinja/jinja_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

namespace sinkscope::jinja {

namespace {

struct Conversion {
    std::string flags; // of "-+ #0"
    size_t width = 0;
    std::optional<int> precision;
    char type = 's';
};

// Takes the next argument of a printf-style format: one of a tuple's items, or the one value.
class FormatArguments {
public:
    explicit FormatArguments(const Value& arguments) : m_arguments(arguments) {
        if (arguments.isTuple()) m_items = &arguments.asList()->items;
    }
    const Value& next() {
        if (!m_items) {
            if (m_used++ > 0) fail("not enough arguments for format string");
            return m_arguments;
        }
        if (m_used >= m_items->size()) fail("not enough arguments for format string");
        return (*m_items)[m_used++];
    }
    bool allUsed() const { return m_items ? m_used == m_items->size() : m_used == 1; }
    const Value& whole() const { return m_arguments; }

private:
    const Value& m_arguments;
    const std::vector<Value>* m_items = nullptr;
    size_t m_used = 0;
};

std::string formatNumber(const Conversion& conversion, const Value& argument) {
    const char type = conversion.type;
    if (argument.isUndefined()) failUndefined(argument);
    if (!argument.isNumber())
        fail(std::string("%") + type + " format: a real number is required, not " +
             typeName(argument));
    std::string spec = "%";
    for (const char flag : conversion.flags)
        if (flag == '+' || flag == ' ' || flag == '#') spec += flag;
    if (conversion.precision) spec += "." + std::to_string(*conversion.precision);
    char buffer[512];
    if (type == 'd' || type == 'i' || type == 'x' || type == 'X' || type == 'o') {
        const auto integer = argument.isFloat()
                                 ? static_cast<long long>(std::trunc(argument.asFloat()))
                                 : static_cast<long long>(argument.asInt());
        if (argument.isFloat() && !std::isfinite(argument.asFloat()))
            fail("cannot convert float infinity or NaN to integer");
        if (type == 'd' || type == 'i') {
            std::snprintf(buffer, sizeof buffer, (spec + "lld").c_str(), integer);
        } else {
            // Python writes negative hex and octal with a sign, C as two's complement.
            const unsigned long long magnitude =
                integer < 0 ? 0ull - static_cast<unsigned long long>(integer)
                            : static_cast<unsigned long long>(integer);
            std::snprintf(buffer, sizeof buffer, (spec + "ll" + type).c_str(), magnitude);
            if (type == 'o' && spec.find('#') != std::string::npos) {
                std::string octal = buffer;
                if (octal.size() > 1 && octal[0] == '0') octal.insert(1, "o");
                return (integer < 0 ? "-" : "") + octal;
            }
            if (integer < 0) return std::string("-") + buffer;
        }
        return buffer;
    }
    std::snprintf(buffer, sizeof buffer, (spec + type).c_str(), argument.asFloat());
    return buffer;
}

void appendPadded(TextBuilder& out, const Conversion& conversion, std::string body, bool numeric) {
    const size_t length = codePointCount(body);
    const size_t padding = conversion.width > length ? conversion.width - length : 0;
    const bool left = conversion.flags.find('-') != std::string::npos;
    if (padding > 0 && !left && numeric && conversion.flags.find('0') != std::string::npos) {
        size_t digitsAt = body.find_first_not_of("+- ");
        if (body.compare(digitsAt, 2, "0x") == 0 || body.compare(digitsAt, 2, "0X") == 0 ||
            body.compare(digitsAt, 2, "0o") == 0)
            digitsAt += 2;
        out.append(std::string_view(body).substr(0, digitsAt));
        out.appendRepeated("0", padding);
        out.append(std::string_view(body).substr(digitsAt));
        return;
    }
    if (!left) out.appendRepeated(" ", padding);
    out.append(body);
    if (left) out.appendRepeated(" ", padding);
}

size_t readNumber(const std::string& format, size_t& i) {
    size_t number = 0;
    while (i < format.size() && format[i] >= '0' && format[i] <= '9') {
        number = number * 10 + static_cast<size_t>(format[i++] - '0');
        if (number > (size_t{1} << 30)) fail("width or precision too big in a format string");
    }
    return number;
}

} // namespace

Value percentFormat(const std::string& format, const Value& arguments, Budget& budget) {
    TextBuilder out(budget);
    FormatArguments next(arguments);
    bool usedMapping = false;
    for (size_t i = 0; i < format.size();) {
        const size_t percent = format.find('%', i);
        out.append(std::string_view(format).substr(i, percent - i));
        if (percent == std::string::npos) break;
        i = percent + 1;
        if (i >= format.size()) fail("incomplete format");
        const Value* argument = nullptr;
        if (format[i] == '(') {
            const size_t close = format.find(')', i);
            if (close == std::string::npos) fail("incomplete format key");
            if (!arguments.isDict()) fail("format requires a mapping");
            const Value* found = arguments.asDict()->find(format.substr(i + 1, close - i - 1));
            if (!found) fail("KeyError: '" + format.substr(i + 1, close - i - 1) + "'");
            argument = found;
            usedMapping = true;
            i = close + 1;
        }
        Conversion conversion;
        while (i < format.size() && std::string_view("-+ #0").find(format[i]) != std::string::npos)
            conversion.flags += format[i++];
        if (i < format.size() && format[i] == '*') {
            conversion.width =
                static_cast<size_t>(std::max<int64_t>(0, toInteger(next.next(), "* width")));
            ++i;
        } else {
            conversion.width = readNumber(format, i);
        }
        if (i < format.size() && format[i] == '.') {
            ++i;
            conversion.precision = static_cast<int>(std::min<size_t>(readNumber(format, i), 400));
        }
        if (i >= format.size()) fail("incomplete format");
        conversion.type = format[i++];
        if (conversion.type == '%') {
            out.append('%');
            continue;
        }
        const Value& value = argument ? *argument : next.next();
        switch (conversion.type) {
        case 's':
        case 'r': {
            TextBuilder text(budget);
            if (conversion.type == 's')
                appendStr(text, value);
            else
                appendRepr(text, value);
            std::string body = text.take();
            if (conversion.precision) {
                const std::vector<size_t> starts = codePointStarts(body);
                if (static_cast<size_t>(*conversion.precision) + 1 < starts.size())
                    body.resize(starts[static_cast<size_t>(*conversion.precision)]);
            }
            appendPadded(out, conversion, std::move(body), false);
            break;
        }
        case 'c': {
            std::string body;
            if (value.isString() && codePointCount(value.asString()) == 1)
                body = value.asString();
            else if (value.isIntegral() && value.asInt() >= 0 && value.asInt() <= 0x10FFFF &&
                     (value.asInt() < 0xD800 || value.asInt() > 0xDFFF))
                appendCodePoint(body, static_cast<char32_t>(value.asInt()));
            else
                fail("%c requires an int or a unicode character");
            appendPadded(out, conversion, std::move(body), false);
            break;
        }
        case 'd':
        case 'i':
        case 'x':
        case 'X':
        case 'o':
        case 'f':
        case 'F':
        case 'e':
        case 'E':
        case 'g':
        case 'G':
            appendPadded(out, conversion, formatNumber(conversion, value), true);
            break;
        default:
            fail(std::string("unsupported format character '") + conversion.type + "'");
        }
    }
    // Python takes anything with [] (a dict, a list, jinja2's Undefined) as a mapping of which
    // the format may use nothing.
    const bool mappingLike = arguments.isDict() || (arguments.isList() && !arguments.isTuple()) ||
                             arguments.isUndefined();
    if (!usedMapping && !mappingLike && !next.allUsed())
        fail("not all arguments converted during string formatting");
    return Value(out.take());
}

namespace {

struct FormatSpec {
    std::string fill = " ";
    char align = 0; // '<' '>' '^' '=' or 0 for the type's default
    char sign = '-';
    bool alternate = false;
    size_t width = 0;
    std::optional<int> precision;
    char type = 0;
};

FormatSpec parseSpec(const std::string& spec) {
    FormatSpec parsed;
    size_t i = 0;
    const auto isAlign = [](char c) { return c == '<' || c == '>' || c == '^' || c == '='; };
    size_t afterFirst = 0;
    if (!spec.empty()) {
        afterFirst = 0;
        nextCodePoint(spec, afterFirst);
    }
    if (afterFirst > 0 && afterFirst < spec.size() && isAlign(spec[afterFirst])) {
        parsed.fill = spec.substr(0, afterFirst);
        parsed.align = spec[afterFirst];
        i = afterFirst + 1;
    } else if (!spec.empty() && isAlign(spec[0])) {
        parsed.align = spec[0];
        i = 1;
    }
    if (i < spec.size() && (spec[i] == '+' || spec[i] == '-' || spec[i] == ' '))
        parsed.sign = spec[i++];
    if (i < spec.size() && spec[i] == '#') {
        parsed.alternate = true;
        ++i;
    }
    if (i < spec.size() && spec[i] == '0') {
        if (!parsed.align) {
            parsed.fill = "0";
            parsed.align = '=';
        }
        ++i;
    }
    while (i < spec.size() && spec[i] >= '0' && spec[i] <= '9') {
        parsed.width = parsed.width * 10 + static_cast<size_t>(spec[i++] - '0');
        if (parsed.width > (size_t{1} << 30)) fail("Too many decimal digits in format string");
    }
    if (i < spec.size() && (spec[i] == ',' || spec[i] == '_'))
        fail("digit grouping in format specs is not supported");
    if (i < spec.size() && spec[i] == '.') {
        ++i;
        int precision = 0;
        if (i >= spec.size() || spec[i] < '0' || spec[i] > '9')
            fail("Format specifier missing precision");
        while (i < spec.size() && spec[i] >= '0' && spec[i] <= '9')
            precision = std::min(400, precision * 10 + (spec[i++] - '0'));
        parsed.precision = precision;
    }
    if (i < spec.size()) parsed.type = spec[i++];
    if (i < spec.size()) fail("Invalid format specifier '" + spec + "'");
    return parsed;
}

std::string formatNumberSpec(const FormatSpec& spec, const Value& value) {
    char type = spec.type;
    const bool integral =
        value.isIntegral() &&
        (type == 0 || std::string_view("dbxXoc").find(type) != std::string_view::npos);
    char buffer[512];
    std::string body;
    bool negative = false;
    if (integral) {
        const int64_t number = value.asInt();
        negative = number < 0;
        const unsigned long long magnitude = negative
                                                 ? 0ull - static_cast<unsigned long long>(number)
                                                 : static_cast<unsigned long long>(number);
        if (type == 'b') {
            for (unsigned long long m = magnitude; m > 0 || body.empty(); m >>= 1)
                body.insert(body.begin(), static_cast<char>('0' + (m & 1)));
            if (spec.alternate) body = "0b" + body;
        } else if (type == 'c') {
            if (negative || magnitude > 0x10FFFF || (magnitude >= 0xD800 && magnitude <= 0xDFFF))
                fail("%c arg not in range(0x110000) or a surrogate");
            appendCodePoint(body, static_cast<char32_t>(magnitude));
        } else {
            const char conversion = type == 'x' || type == 'X' || type == 'o' ? type : 'u';
            std::snprintf(
                buffer, sizeof buffer,
                (std::string(spec.alternate && conversion != 'u' ? "%#ll" : "%ll") + conversion)
                    .c_str(),
                magnitude);
            body = buffer;
            if (conversion == 'o' && spec.alternate && body.size() > 1) body.insert(1, "o");
        }
    } else {
        if (!value.isNumber())
            fail(std::string("Unknown format code '") + type + "' for object of type '" +
                 typeName(value) + "'");
        double number = value.asFloat();
        negative = std::signbit(number) && !std::isnan(number);
        number = std::fabs(number);
        if (type == 0 && !spec.precision) {
            body = floatRepr(number);
        } else {
            const bool percent = type == '%';
            if (percent) number *= 100;
            const char conversion = type == 0 || type == 'n' ? 'g' : percent ? 'f' : type;
            if (std::string_view("eEfFgG").find(conversion) == std::string_view::npos)
                fail(std::string("Unknown format code '") + type + "' for object of type 'float'");
            std::snprintf(buffer, sizeof buffer,
                          (std::string(spec.alternate ? "%#." : "%.") +
                           std::to_string(spec.precision.value_or(6)) + conversion)
                              .c_str(),
                          number);
            body = buffer;
            if (percent) body += '%';
        }
    }
    const std::string sign = negative ? "-" : spec.sign == '+' ? "+" : spec.sign == ' ' ? " " : "";
    return sign + body;
}

std::string applySpec(const Value& value, const std::string& specText, Budget& budget) {
    if (specText.empty()) return toStr(value, budget);
    const FormatSpec spec = parseSpec(specText);
    std::string body;
    bool numeric = false;
    if (value.isString()) {
        if (spec.type && spec.type != 's')
            fail(std::string("Unknown format code '") + spec.type + "' for object of type 'str'");
        body = value.asString();
        if (spec.precision) {
            const std::vector<size_t> starts = codePointStarts(body);
            if (static_cast<size_t>(*spec.precision) + 1 < starts.size())
                body.resize(starts[static_cast<size_t>(*spec.precision)]);
        }
    } else if (value.isNumber()) {
        body = formatNumberSpec(spec, value);
        numeric = true;
    } else {
        fail("unsupported format string passed to " + typeName(value) + ".__format__");
    }
    const size_t length = codePointCount(body);
    if (spec.width <= length) return body;
    const size_t padding = spec.width - length;
    const char align = spec.align ? spec.align : numeric ? '>' : '<';
    TextBuilder out(budget);
    const size_t left = align == '>'   ? padding
                        : align == '^' ? padding / 2
                        : align == '=' ? padding
                                       : 0;
    if (align == '=') {
        const size_t signLength =
            !body.empty() && (body[0] == '-' || body[0] == '+' || body[0] == ' ') ? 1 : 0;
        out.append(std::string_view(body).substr(0, signLength));
        out.appendRepeated(spec.fill, left);
        out.append(std::string_view(body).substr(signLength));
        return out.take();
    }
    out.appendRepeated(spec.fill, left);
    out.append(body);
    out.appendRepeated(spec.fill, padding - left);
    return out.take();
}

// A replacement field's value: an index or a name, then .attribute and [key] steps.
Value fieldValue(const std::string& field, size_t& autoIndex, const Arguments& arguments,
                 Budget& budget) {
    size_t end = field.find_first_of(".[");
    const std::string head = field.substr(0, end);
    Value value;
    if (head.empty() || head.find_first_not_of("0123456789") == std::string::npos) {
        const size_t index =
            head.empty() ? autoIndex++ : static_cast<size_t>(std::stoul(head.substr(0, 9)));
        if (index >= arguments.positional.size())
            fail("Replacement index " + std::to_string(index) +
                 " out of range for positional args tuple");
        value = arguments.positional[index];
    } else {
        const auto found = std::find_if(arguments.keywords.begin(), arguments.keywords.end(),
                                        [&](const auto& keyword) { return keyword.first == head; });
        if (found == arguments.keywords.end()) fail("KeyError: '" + head + "'");
        value = found->second;
    }
    while (end != std::string::npos) {
        if (field[end] == '.') {
            const size_t next = field.find_first_of(".[", end + 1);
            value = getAttribute(
                value, field.substr(end + 1, next == std::string::npos ? next : next - end - 1),
                budget);
            end = next;
        } else {
            const size_t close = field.find(']', end);
            if (close == std::string::npos) fail("Missing ']' in format string");
            const std::string key = field.substr(end + 1, close - end - 1);
            const bool digits = !key.empty() && key.size() < 18 &&
                                key.find_first_not_of("0123456789") == std::string::npos;
            value = getItem(
                value, digits ? Value(static_cast<int64_t>(std::stoll(key))) : Value(key), budget);
            end = close + 1 < field.size() ? close + 1 : std::string::npos;
        }
    }
    return value;
}

} // namespace

Value strFormat(const std::string& format, const Arguments& arguments, Budget& budget) {
    TextBuilder out(budget);
    size_t autoIndex = 0;
    for (size_t i = 0; i < format.size(); ++i) {
        const char c = format[i];
        if (c == '}') {
            if (i + 1 < format.size() && format[i + 1] == '}') {
                out.append('}');
                ++i;
                continue;
            }
            fail("Single '}' encountered in format string");
        }
        if (c != '{') {
            out.append(c);
            continue;
        }
        if (i + 1 < format.size() && format[i + 1] == '{') {
            out.append('{');
            ++i;
            continue;
        }
        const size_t close = format.find('}', i);
        if (close == std::string::npos) fail("Single '{' encountered in format string");
        std::string field = format.substr(i + 1, close - i - 1);
        if (field.find('{') != std::string::npos)
            fail("nested replacement fields in format specs are not supported");
        std::string spec;
        if (const size_t colon = field.find(':'); colon != std::string::npos) {
            spec = field.substr(colon + 1);
            field.resize(colon);
        }
        char conversion = 0;
        if (const size_t bang = field.find('!'); bang != std::string::npos) {
            if (bang + 2 != field.size() ||
                std::string_view("rsa").find(field[bang + 1]) == std::string_view::npos)
                fail("Unknown conversion specifier in format string");
            conversion = field[bang + 1];
            field.resize(bang);
        }
        Value value = fieldValue(field, autoIndex, arguments, budget);
        if (conversion) {
            TextBuilder converted(budget);
            if (conversion == 's')
                appendStr(converted, value);
            else
                appendRepr(converted, value);
            value = Value(converted.take());
        }
        out.append(applySpec(value, spec, budget));
        i = close;
    }
    return Value(out.take());
}

} // namespace sinkscope::jinja
