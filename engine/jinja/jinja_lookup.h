// What jinja2 does to look into a value: `x.name` and `x[key]` (slices included), the items a
// for loop walks, and Python's len().
#pragma once

#include "jinja/jinja_value.h"

#include <optional>
#include <string_view>

namespace sinkscope::jinja {

// The items a for loop walks: a list's items, a dict's keys, a string's characters; undefined
// walks nothing. Anything else is an error ("'int' object is not iterable").
ListPtr iterate(const Value& value, Budget& budget);
// Python's len(); nullopt for values without one.
std::optional<size_t> lengthOf(const Value& value);

// jinja2's getattr (x.name: methods first, then items) and getitem (x[key]: items first,
// then methods for a string key). A miss is an undefined value that says what was missing.
Value getAttribute(const Value& object, std::string_view name, Budget& budget);
Value getItem(const Value& object, const Value& key, Budget& budget);
// x[start:stop:step], each bound optional.
Value sliceValue(const Value& object, const Value& start, const Value& stop, const Value& step,
                 Budget& budget);

} // namespace sinkscope::jinja
