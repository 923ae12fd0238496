#include "jinja/builtins/jinja_format.h"

#include "jinja/builtins/jinja_text.h"
#include "jinja/jinja_ops.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>

namespace sinkscope::jinja {

std::string floatRepr(double value) {
    if (std::isnan(value)) return "nan";
    if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
    // The shortest digits that read back as `value`, then Python's layout: positional for
    // decimal exponents -4..15, otherwise d.ddde+XX.
    char buffer[64];
    const auto result =
        std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
    const std::string scientific(buffer, result.ptr);
    const size_t e = scientific.find('e');
    std::string mantissa = scientific.substr(0, e);
    const int exponent = std::stoi(scientific.substr(e + 1));
    std::string sign;
    if (mantissa[0] == '-') {
        sign = "-";
        mantissa.erase(0, 1);
    }
    std::string digits;
    for (const char c : mantissa)
        if (c != '.') digits += c;
    if (exponent >= -4 && exponent < 16) {
        std::string out;
        if (exponent < 0) {
            out = "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
        } else if (static_cast<size_t>(exponent) + 1 >= digits.size()) {
            out =
                digits + std::string(static_cast<size_t>(exponent) + 1 - digits.size(), '0') + ".0";
        } else {
            out = digits.substr(0, static_cast<size_t>(exponent) + 1) + "." +
                  digits.substr(static_cast<size_t>(exponent) + 1);
        }
        return sign + out;
    }
    std::string out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char exponentText[16];
    std::snprintf(exponentText, sizeof exponentText, "e%c%02d", exponent < 0 ? '-' : '+',
                  std::abs(exponent));
    return sign + out + exponentText;
}

namespace {

// Python's str.isprintable() for what repr() keeps as is: controls, separators other than the
// space, format characters and private use are written as escapes (an approximation of
// Unicode's categories, exact for ASCII and Latin-1).
bool isPrintable(char32_t c) {
    if (c < 0x20 || c == 0x7F) return false;
    if (c < 0x7F) return true;
    if (c <= 0xA0 || c == 0xAD) return false;
    if ((c >= 0x2000 && c <= 0x200F) || (c >= 0x2028 && c <= 0x202F) ||
        (c >= 0x205F && c <= 0x206F) || c == 0x3000 || c == 0xFEFF || c == 0x1680)
        return false;
    if ((c >= 0xE000 && c <= 0xF8FF) || (c >= 0xFFF0 && c <= 0xFFFF) || c >= 0xF0000) return false;
    return true;
}

void appendStringRepr(TextBuilder& out, const std::string& text) {
    const bool hasSingle = text.find('\'') != std::string::npos;
    const bool hasDouble = text.find('"') != std::string::npos;
    const char quote = hasSingle && !hasDouble ? '"' : '\'';
    std::string written(1, quote);
    for (size_t i = 0; i < text.size();) {
        const size_t start = i;
        const char32_t c = nextCodePoint(text, i);
        if (c == static_cast<char32_t>(quote) || c == '\\') {
            written += '\\';
            written += static_cast<char>(c);
        } else if (c == '\n') {
            written += "\\n";
        } else if (c == '\r') {
            written += "\\r";
        } else if (c == '\t') {
            written += "\\t";
        } else if (!isPrintable(c)) {
            char escape[16];
            if (c <= 0xFF)
                std::snprintf(escape, sizeof escape, "\\x%02x", static_cast<unsigned>(c));
            else if (c <= 0xFFFF)
                std::snprintf(escape, sizeof escape, "\\u%04x", static_cast<unsigned>(c));
            else
                std::snprintf(escape, sizeof escape, "\\U%08x", static_cast<unsigned>(c));
            written += escape;
        } else {
            written.append(text, start, i - start);
        }
    }
    written += quote;
    out.append(written);
}

void appendItems(TextBuilder& out, const List& list) {
    out.append(list.isTuple ? '(' : '[');
    for (size_t i = 0; i < list.items.size(); ++i) {
        if (i > 0) out.append(", ");
        appendRepr(out, list.items[i]);
    }
    if (list.isTuple && list.items.size() == 1) out.append(',');
    out.append(list.isTuple ? ')' : ']');
}

void appendEntries(TextBuilder& out, const std::vector<std::pair<Value, Value>>& entries) {
    out.append('{');
    for (size_t i = 0; i < entries.size(); ++i) {
        if (i > 0) out.append(", ");
        appendRepr(out, entries[i].first);
        out.append(": ");
        appendRepr(out, entries[i].second);
    }
    out.append('}');
}

} // namespace

void appendRepr(TextBuilder& out, const Value& value) {
    switch (value.kind()) {
    case Value::Kind::Undefined:
        out.append("Undefined");
        return;
    case Value::Kind::String:
        appendStringRepr(out, value.asString());
        return;
    default:
        appendStr(out, value);
        return;
    }
}

void appendStr(TextBuilder& out, const Value& value) {
    switch (value.kind()) {
    case Value::Kind::Undefined:
        return;
    case Value::Kind::None:
        out.append("None");
        return;
    case Value::Kind::Bool:
        out.append(value.asBool() ? "True" : "False");
        return;
    case Value::Kind::Int:
        out.append(std::to_string(value.asInt()));
        return;
    case Value::Kind::Float:
        out.append(floatRepr(value.asFloat()));
        return;
    case Value::Kind::String:
        out.append(value.asString());
        return;
    case Value::Kind::List:
        appendItems(out, *value.asList());
        return;
    case Value::Kind::Dict:
        appendEntries(out, value.asDict()->entries);
        return;
    case Value::Kind::Namespace: {
        std::vector<std::pair<Value, Value>> entries;
        for (const auto& [name, attribute] : value.asNamespace()->attributes)
            entries.emplace_back(Value(name), attribute);
        out.append("<Namespace ");
        appendEntries(out, entries);
        out.append('>');
        return;
    }
    case Value::Kind::Callable:
        out.append("<function " + value.asCallable()->name() + ">");
        return;
    case Value::Kind::Loop:
        out.append("<LoopContext>");
        return;
    case Value::Kind::Iterator:
        out.append(std::string("<") + value.asIterator()->type + " object>");
        return;
    }
}

std::string toStr(const Value& value, Budget& budget) {
    if (value.isString()) return value.asString();
    TextBuilder out(budget);
    appendStr(out, value);
    return out.take();
}

namespace {

void appendJsonString(TextBuilder& out, const std::string& text, bool ensureAscii) {
    std::string written = "\"";
    for (size_t i = 0; i < text.size();) {
        const size_t start = i;
        const char32_t c = nextCodePoint(text, i);
        char escape[16];
        switch (c) {
        case '"':
            written += "\\\"";
            break;
        case '\\':
            written += "\\\\";
            break;
        case '\n':
            written += "\\n";
            break;
        case '\r':
            written += "\\r";
            break;
        case '\t':
            written += "\\t";
            break;
        case '\b':
            written += "\\b";
            break;
        case '\f':
            written += "\\f";
            break;
        default:
            if (c < 0x20 || (ensureAscii && c >= 0x7F)) {
                if (c >= 0x10000) {
                    const char32_t v = c - 0x10000;
                    std::snprintf(escape, sizeof escape, "\\u%04x\\u%04x",
                                  static_cast<unsigned>(0xD800 | (v >> 10)),
                                  static_cast<unsigned>(0xDC00 | (v & 0x3FF)));
                } else {
                    std::snprintf(escape, sizeof escape, "\\u%04x", static_cast<unsigned>(c));
                }
                written += escape;
            } else {
                written.append(text, start, i - start);
            }
        }
    }
    written += '"';
    out.append(written);
}

void appendJsonFloat(TextBuilder& out, double value) {
    if (std::isnan(value))
        out.append("NaN");
    else if (std::isinf(value))
        out.append(value < 0 ? "-Infinity" : "Infinity");
    else
        out.append(floatRepr(value));
}

[[noreturn]] void notSerializable(const Value& value) {
    fail("Object of type " + typeName(value) + " is not JSON serializable");
}

std::string jsonKey(const Value& key) {
    switch (key.kind()) {
    case Value::Kind::String:
        return key.asString();
    case Value::Kind::None:
        return "null";
    case Value::Kind::Bool:
        return key.asBool() ? "true" : "false";
    case Value::Kind::Int:
        return std::to_string(key.asInt());
    case Value::Kind::Float: {
        const double f = key.asFloat();
        if (std::isnan(f)) return "NaN";
        if (std::isinf(f)) return f < 0 ? "-Infinity" : "Infinity";
        return floatRepr(f);
    }
    default:
        fail("keys must be str, int, float, bool or None, not " + typeName(key));
    }
}

void newline(TextBuilder& out, const JsonOptions& options, int level) {
    out.append('\n');
    out.appendRepeated(options.indent, static_cast<size_t>(level));
}

void appendJsonAt(TextBuilder& out, const Value& value, const JsonOptions& options, Budget& budget,
                  int level);

void appendJsonDict(TextBuilder& out, const Dict& dict, const JsonOptions& options, Budget& budget,
                    int level) {
    if (dict.entries.empty()) {
        out.append("{}");
        return;
    }
    std::vector<std::pair<std::string, const Value*>> entries;
    for (const auto& [key, item] : dict.entries)
        entries.emplace_back(jsonKey(key), &item);
    if (options.sortKeys) {
        budget.step(static_cast<int64_t>(entries.size()) * 8);
        std::stable_sort(entries.begin(), entries.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
    }
    out.append('{');
    for (size_t i = 0; i < entries.size(); ++i) {
        if (i > 0) out.append(options.itemSeparator);
        if (options.indented) newline(out, options, level + 1);
        appendJsonString(out, entries[i].first, options.ensureAscii);
        out.append(options.keySeparator);
        appendJsonAt(out, *entries[i].second, options, budget, level + 1);
    }
    if (options.indented) newline(out, options, level);
    out.append('}');
}

void appendJsonAt(TextBuilder& out, const Value& value, const JsonOptions& options, Budget& budget,
                  int level) {
    budget.step();
    switch (value.kind()) {
    case Value::Kind::None:
        out.append("null");
        return;
    case Value::Kind::Bool:
        out.append(value.asBool() ? "true" : "false");
        return;
    case Value::Kind::Int:
        out.append(std::to_string(value.asInt()));
        return;
    case Value::Kind::Float:
        appendJsonFloat(out, value.asFloat());
        return;
    case Value::Kind::String:
        appendJsonString(out, value.asString(), options.ensureAscii);
        return;
    case Value::Kind::List: {
        const auto& items = value.asList()->items;
        if (items.empty()) {
            out.append("[]");
            return;
        }
        out.append('[');
        for (size_t i = 0; i < items.size(); ++i) {
            if (i > 0) out.append(options.itemSeparator);
            if (options.indented) newline(out, options, level + 1);
            appendJsonAt(out, items[i], options, budget, level + 1);
        }
        if (options.indented) newline(out, options, level);
        out.append(']');
        return;
    }
    case Value::Kind::Dict:
        appendJsonDict(out, *value.asDict(), options, budget, level);
        return;
    default:
        notSerializable(value);
    }
}

} // namespace

void appendJson(TextBuilder& out, const Value& value, const JsonOptions& options, Budget& budget) {
    appendJsonAt(out, value, options, budget, 0);
}

} // namespace sinkscope::jinja
