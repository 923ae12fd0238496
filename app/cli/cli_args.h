// Command-line parsing for sinkscope-cli: each command declares its options, and the parser
// rejects anything else, so a typo is an error naming the option rather than a silent default.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace sinkscope::cli {

// Bad usage: exit status 2.
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A model or input file that cannot be used: exit status 3.
class InputError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct OptionSpec {
    std::string_view name; // with its dashes: "--model", "-p"
    bool takesValue = true;
};

class ParsedArgs {
public:
    // Accepts "--name value", "--name=value" and flags; throws UsageError for an unknown option,
    // a missing value, a repeated option, or a stray positional argument.
    static ParsedArgs parse(std::string_view command, std::span<const OptionSpec> specs,
                            std::span<const std::string_view> args);

    bool has(std::string_view name) const { return m_values.contains(name); }
    std::optional<std::string> value(std::string_view name) const;
    std::string required(std::string_view name) const;
    // Whole numbers in [min, max]; throws UsageError naming the option otherwise.
    int64_t integer(std::string_view name, int64_t fallback, int64_t min, int64_t max) const;
    double real(std::string_view name, double fallback, double min, double max) const;

private:
    std::string m_command;
    std::map<std::string, std::string, std::less<>> m_values; // option -> value ("" for flags)
};

int64_t parseInteger(std::string_view option, std::string_view text, int64_t min, int64_t max);
double parseReal(std::string_view option, std::string_view text, double min, double max);

// One spelling of an enumerated option value, e.g. {"neox", RopeStyle::HalfSplit}.
template <typename Value> struct Choice {
    std::string_view text;
    Value value;
};

// "option '--type': 'q5' is not one of f32, f16, q8_0, q4_0" for a value outside `choices`.
[[noreturn]] void throwNotAChoice(std::string_view option, std::string_view text,
                                  const std::string& allowed);

template <typename Value, size_t N>
Value parseChoice(std::string_view option, std::string_view text,
                  const Choice<Value> (&choices)[N]) {
    std::string allowed;
    for (const Choice<Value>& choice : choices) {
        if (choice.text == text) return choice.value;
        allowed += (allowed.empty() ? "" : ", ") + std::string(choice.text);
    }
    throwNotAChoice(option, text, allowed);
}

template <typename Value, size_t N>
std::string choiceText(Value value, const Choice<Value> (&choices)[N]) {
    for (const Choice<Value>& choice : choices)
        if (choice.value == value) return std::string(choice.text);
    return "unknown";
}

} // namespace sinkscope::cli
