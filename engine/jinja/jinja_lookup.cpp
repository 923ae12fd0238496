#include "jinja/jinja_lookup.h"

#include "jinja/builtins/jinja_builtins.h"
#include "jinja/builtins/jinja_format.h"
#include "jinja/builtins/jinja_text.h"
#include "jinja/jinja_budget.h"

#include <algorithm>

namespace sinkscope::jinja {

ListPtr iterate(const Value& value, Budget& budget) {
    static const ListPtr empty = std::make_shared<const List>();
    switch (value.kind()) {
    case Value::Kind::Undefined:
        return empty;
    case Value::Kind::List:
        return value.asList();
    case Value::Kind::Iterator:
        return makeList(budget, value.asIterator()->take()).asList();
    case Value::Kind::Dict: {
        std::vector<Value> keys;
        for (const auto& entry : value.asDict()->entries)
            keys.push_back(entry.first);
        return makeList(budget, std::move(keys)).asList();
    }
    case Value::Kind::String: {
        const std::string& text = value.asString();
        budget.chargeItems(codePointCount(text));
        std::vector<Value> characters;
        for (size_t i = 0; i < text.size();) {
            const size_t start = i;
            nextCodePoint(text, i);
            characters.emplace_back(text.substr(start, i - start));
        }
        return makeList(budget, std::move(characters)).asList();
    }
    default:
        fail("'" + typeName(value) + "' object is not iterable");
    }
}

std::optional<size_t> lengthOf(const Value& value) {
    switch (value.kind()) {
    case Value::Kind::Undefined:
        return 0;
    case Value::Kind::String:
        return codePointCount(value.asString());
    case Value::Kind::List:
        return value.asList()->items.size();
    case Value::Kind::Dict:
        return value.asDict()->entries.size();
    default:
        return std::nullopt;
    }
}

namespace {

Value missingAttribute(const Value& object, std::string_view name) {
    return Value::undefined("'" + objectDescription(object) + "' has no attribute '" +
                            std::string(name) + "'");
}

std::optional<Value> loopAttribute(const LoopInfo& loop, std::string_view name) {
    const auto& items = loop.items->items;
    const auto index = static_cast<int64_t>(loop.index);
    const auto length = static_cast<int64_t>(items.size());
    if (name == "index") return index + 1;
    if (name == "index0") return index;
    if (name == "revindex") return length - index;
    if (name == "revindex0") return length - index - 1;
    if (name == "first") return index == 0;
    if (name == "last") return index == length - 1;
    if (name == "length") return length;
    if (name == "depth") return int64_t{1};
    if (name == "depth0") return int64_t{0};
    if (name == "previtem")
        return index > 0 ? items[loop.index - 1] : Value::undefined("there is no previous item");
    if (name == "nextitem")
        return index + 1 < length ? items[loop.index + 1]
                                  : Value::undefined("there is no next item");
    return std::nullopt;
}

} // namespace

Value getAttribute(const Value& object, std::string_view name, Budget& budget) {
    budget.step();
    if (object.isUndefined()) failUndefined(object);
    if (auto method = findMethod(object, name)) return *method;
    if (object.isDict()) {
        if (const Value* value = object.asDict()->find(name)) return *value;
    } else if (object.isNamespace()) {
        if (const Value* value = object.asNamespace()->find(name)) return *value;
    } else if (object.isLoop()) {
        if (auto value = loopAttribute(*object.asLoop(), name)) return *value;
    }
    return missingAttribute(object, name);
}

Value getItem(const Value& object, const Value& key, Budget& budget) {
    budget.step();
    if (object.isUndefined()) failUndefined(object);
    if (object.isDict() && !key.isList() && !key.isDict() && !key.isNamespace()) {
        if (const Value* value = object.asDict()->find(key, budget)) return *value;
    } else if ((object.isList() || object.isString()) && key.isIntegral()) {
        const size_t length = *lengthOf(object);
        int64_t index = key.asInt();
        if (index < 0) index += static_cast<int64_t>(length);
        if (index >= 0 && static_cast<size_t>(index) < length) {
            if (object.isList()) return object.asList()->items[static_cast<size_t>(index)];
            const std::string& text = object.asString();
            const std::vector<size_t> starts = codePointStarts(text);
            budget.chargeText(text.size());
            const size_t begin = starts[static_cast<size_t>(index)];
            return Value(text.substr(begin, starts[static_cast<size_t>(index) + 1] - begin));
        }
    }
    if (key.isString()) {
        if (object.isNamespace() || object.isLoop())
            return getAttribute(object, key.asString(), budget);
        if (auto method = findMethod(object, key.asString())) return *method;
        return missingAttribute(object, key.asString());
    }
    TextBuilder keyText(budget);
    appendRepr(keyText, key);
    return Value::undefined(objectDescription(object) + " has no element " + keyText.take());
}

namespace {

std::optional<int64_t> sliceBound(const Value& bound) {
    if (bound.isNone()) return std::nullopt;
    return bound.asInt();
}

} // namespace

Value sliceValue(const Value& object, const Value& start, const Value& stop, const Value& step,
                 Budget& budget) {
    if (object.isUndefined()) failUndefined(object);
    // jinja2 writes slices as Python subscripts, so a wrong object or bound is an error (an item
    // lookup would give an undefined value instead).
    for (const Value* bound : {&start, &stop, &step})
        if (!bound->isNone() && !bound->isIntegral())
            fail("slice indices must be integers or None or have an __index__ method");
    if (object.isDict()) fail("unhashable type: 'slice'");
    if (!object.isList() && !object.isString())
        fail("'" + typeName(object) + "' object is not subscriptable");
    const auto length = static_cast<int64_t>(*lengthOf(object));
    const int64_t stride =
        std::clamp<int64_t>(sliceBound(step).value_or(1), -(int64_t{1} << 62), int64_t{1} << 62);
    if (stride == 0) fail("slice step cannot be zero");
    const auto adjust = [&](std::optional<int64_t> bound, int64_t fallback) {
        if (!bound) return fallback;
        int64_t index = *bound;
        if (index < 0) {
            index = std::max(index, -length - 1) + length;
            if (index < 0) index = stride < 0 ? -1 : 0;
        } else if (index >= length) {
            index = stride < 0 ? length - 1 : length;
        }
        return index;
    };
    const int64_t first = adjust(sliceBound(start), stride < 0 ? length - 1 : 0);
    const int64_t end = adjust(sliceBound(stop), stride < 0 ? -1 : length);
    const int64_t count = stride > 0 ? (end > first ? (end - first - 1) / stride + 1 : 0)
                                     : (end < first ? (first - end - 1) / -stride + 1 : 0);
    if (object.isList()) {
        budget.chargeItems(static_cast<size_t>(count));
        std::vector<Value> items;
        items.reserve(static_cast<size_t>(count));
        for (int64_t k = 0; k < count; ++k)
            items.push_back(object.asList()->items[static_cast<size_t>(first + k * stride)]);
        return makeList(budget, std::move(items), object.isTuple());
    }
    const std::string& text = object.asString();
    const std::vector<size_t> starts = codePointStarts(text);
    budget.chargeText(text.size());
    TextBuilder out(budget);
    for (int64_t k = 0; k < count; ++k) {
        const auto at = static_cast<size_t>(first + k * stride);
        out.append(std::string_view(text).substr(starts[at], starts[at + 1] - starts[at]));
    }
    return Value(out.take());
}

} // namespace sinkscope::jinja
