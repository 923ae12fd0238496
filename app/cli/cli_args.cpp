#include "cli_args.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

namespace sinkscope::cli {

namespace {

std::string quoted(std::string_view text) {
    return "'" + std::string(text) + "'";
}

const OptionSpec* findSpec(std::span<const OptionSpec> specs, std::string_view name) {
    const auto found = std::ranges::find(specs, name, &OptionSpec::name);
    return found == specs.end() ? nullptr : &*found;
}

bool looksLikeOption(std::string_view arg) {
    return arg.size() > 1 && arg.front() == '-';
}

template <typename Number> std::string rangeText(Number min, Number max) {
    std::ostringstream text;
    text << "[" << min << ", " << max << "]";
    return text.str();
}

UsageError outOfRange(std::string_view option, std::string_view text, const std::string& range) {
    return UsageError("option " + quoted(option) + ": " + quoted(text) + " is out of range " +
                      range);
}

} // namespace

ParsedArgs ParsedArgs::parse(std::string_view command, std::span<const OptionSpec> specs,
                             std::span<const std::string_view> args) {
    ParsedArgs parsed;
    parsed.m_command = command;
    for (size_t i = 0; i < args.size(); ++i) {
        std::string_view name = args[i];
        std::optional<std::string_view> inlineValue;
        if (name.starts_with("--")) {
            if (const size_t equals = name.find('='); equals != std::string_view::npos) {
                inlineValue = name.substr(equals + 1);
                name = name.substr(0, equals);
            }
        }
        if (!looksLikeOption(name))
            throw UsageError("unexpected argument " + quoted(name) + " for '" +
                             std::string(command) + "'");
        const OptionSpec* spec = findSpec(specs, name);
        if (!spec)
            throw UsageError("unknown option " + quoted(name) + " for '" + std::string(command) +
                             "'");
        if (parsed.has(name)) throw UsageError("option " + quoted(name) + " given more than once");
        std::string value;
        if (spec->takesValue) {
            if (inlineValue)
                value = *inlineValue;
            else if (i + 1 < args.size())
                value = args[++i];
            else
                throw UsageError("option " + quoted(name) + " needs a value");
        } else if (inlineValue) {
            throw UsageError("option " + quoted(name) + " takes no value");
        }
        parsed.m_values.emplace(std::string(name), std::move(value));
    }
    return parsed;
}

std::optional<std::string> ParsedArgs::value(std::string_view name) const {
    const auto found = m_values.find(name);
    if (found == m_values.end()) return std::nullopt;
    return found->second;
}

std::string ParsedArgs::required(std::string_view name) const {
    std::optional<std::string> found = value(name);
    if (!found) throw UsageError("'" + m_command + "' needs option " + quoted(name));
    return *found;
}

int64_t ParsedArgs::integer(std::string_view name, int64_t fallback, int64_t min,
                            int64_t max) const {
    const std::optional<std::string> found = value(name);
    return found ? parseInteger(name, *found, min, max) : fallback;
}

double ParsedArgs::real(std::string_view name, double fallback, double min, double max) const {
    const std::optional<std::string> found = value(name);
    return found ? parseReal(name, *found, min, max) : fallback;
}

int64_t parseInteger(std::string_view option, std::string_view text, int64_t min, int64_t max) {
    int64_t number = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (error == std::errc::result_out_of_range)
        throw outOfRange(option, text, rangeText(min, max));
    if (text.empty() || error != std::errc() || end != text.data() + text.size())
        throw UsageError("option " + quoted(option) + ": " + quoted(text) +
                         " is not a whole number");
    if (number < min || number > max) throw outOfRange(option, text, rangeText(min, max));
    return number;
}

double parseReal(std::string_view option, std::string_view text, double min, double max) {
    double number = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (text.empty() || error == std::errc::invalid_argument || end != text.data() + text.size() ||
        !std::isfinite(number))
        throw UsageError("option " + quoted(option) + ": " + quoted(text) + " is not a number");
    if (error == std::errc::result_out_of_range || number < min || number > max)
        throw outOfRange(option, text, rangeText(min, max));
    return number;
}

void throwNotAChoice(std::string_view option, std::string_view text, const std::string& allowed) {
    throw UsageError("option " + quoted(option) + ": " + quoted(text) + " is not one of " +
                     allowed);
}

} // namespace sinkscope::cli
