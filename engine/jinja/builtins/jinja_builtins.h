// The library a template can call: jinja2's filters and tests, the methods of str, dict and
// list that chat templates use, and the globals Hugging Face provides (raise_exception,
// strftime_now) besides jinja2's namespace() and range().
#pragma once

#include "jinja/jinja_value.h"

#include <ctime>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sinkscope::jinja {

using FilterFunction = Value (*)(Interpreter&, const Value& input, const Arguments& arguments);
using TestFunction = bool (*)(Interpreter&, const Value& input, const Arguments& arguments);

// nullptr for a name jinja2 (as Hugging Face sets it up) does not have.
FilterFunction findFilter(std::string_view name);
TestFunction findTest(std::string_view name);

// `object.name` as a method: a bound callable, an undefined value for a method the immutable
// sandbox refuses (list.append: calling it is the error), or nullopt for no such method.
std::optional<Value> findMethod(const Value& object, std::string_view name);

// The globals, by name.
std::vector<std::pair<std::string, Value>> globalFunctions();

// Binds call arguments to named parameters as Python does: one slot per parameter, empty when
// not given. Errors name `callee`: too many arguments, an unknown or repeated keyword, a
// missing required one (the first `required` parameters).
std::vector<std::optional<Value>> bindArguments(std::string_view callee,
                                                std::initializer_list<std::string_view> parameters,
                                                size_t required, const Arguments& arguments);

// Python's truth, int and str of an optional argument, or `fallback` when it was not given.
bool boolArgument(const std::optional<Value>& argument, bool fallback);
int64_t intArgument(const std::optional<Value>& argument, int64_t fallback, std::string_view what);
std::string strArgument(const std::optional<Value>& argument, std::string fallback, Budget& budget);

// Python's str.replace (a negative count replaces every occurrence) and float(text).
Value replaceText(const std::string& text, const std::string& old, const std::string& with,
                  int64_t count, Budget& budget);
std::optional<double> parsePythonFloat(std::string_view text);

// The filters of each part of the library (findFilter asks them in turn).
FilterFunction findValueFilter(std::string_view name);
FilterFunction findSequenceFilter(std::string_view name);

// Looks up an attribute path as the attribute= arguments do ("address.city", "items.0").
Value attributePath(const Value& item, const Value& path, Budget& budget);
// Lower-cases strings for the case-insensitive comparisons of sort, unique, min and max.
Value caseFolded(const Value& value, bool caseSensitive);

} // namespace sinkscope::jinja
