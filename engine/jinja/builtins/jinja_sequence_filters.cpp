// jinja2's filters on sequences (map, select and reject with their attribute forms, sort,
// unique, min, max) and Hugging Face's tojson. map, select, reject and unique give generators,
// as in jinja2 (jinja_value.h's Iterator).
#include "jinja/builtins/jinja_builtins.h"
#include "jinja/jinja_lookup.h"

#include "jinja/builtins/jinja_format.h"
#include "jinja/builtins/jinja_text.h"
#include "jinja/jinja_ops.h"
#include "jinja/jinja_render.h"

#include <algorithm>

namespace sinkscope::jinja {

namespace {

// A stable merge sort that stays in bounds whatever the comparison answers (std::sort may not
// when a comparison is inconsistent, as comparisons with NaN are). Charges n log n steps.
template <typename Less> void stableSort(std::vector<Value>& items, Budget& budget, Less less) {
    std::vector<Value> buffer(items.size());
    for (size_t width = 1; width < items.size(); width *= 2) {
        budget.step(static_cast<int64_t>(items.size()));
        for (size_t start = 0; start < items.size(); start += 2 * width) {
            const size_t middle = std::min(start + width, items.size());
            const size_t end = std::min(start + 2 * width, items.size());
            size_t left = start;
            size_t right = middle;
            size_t out = start;
            while (left < middle && right < end)
                buffer[out++] = less(items[right], items[left]) ? items[right++] : items[left++];
            while (left < middle)
                buffer[out++] = items[left++];
            while (right < end)
                buffer[out++] = items[right++];
        }
        items.swap(buffer);
    }
}

// The sort key of an item: the item, an attribute, or a list of attributes ("age,name").
Value sortKey(const Value& item, const std::optional<Value>& attribute, bool caseSensitive,
              Budget& budget) {
    if (!attribute || attribute->isNone()) return caseFolded(item, caseSensitive);
    if (!attribute->isString() || attribute->asString().find(',') == std::string::npos)
        return caseFolded(attributePath(item, *attribute, budget), caseSensitive);
    std::vector<Value> keys;
    const std::string& paths = attribute->asString();
    for (size_t start = 0;;) {
        const size_t comma = paths.find(',', start);
        const Value path(paths.substr(start, comma == std::string::npos ? comma : comma - start));
        keys.push_back(caseFolded(attributePath(item, path, budget), caseSensitive));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return makeList(budget, std::move(keys));
}

Value filterSort(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    const auto bound =
        bindArguments("sort", {"reverse", "case_sensitive", "attribute"}, 0, arguments);
    Budget& budget = interpreter.budget();
    const bool reverse = boolArgument(bound[0], false);
    const bool caseSensitive = boolArgument(bound[1], false);
    std::vector<Value> items = iterate(input, budget)->items;
    std::vector<Value> keyed;
    for (const Value& item : items)
        keyed.push_back(
            makeList(budget, {sortKey(item, bound[2], caseSensitive, budget), item}, true));
    stableSort(keyed, budget, [&](const Value& a, const Value& b) {
        const int order = compare(a.asList()->items[0], b.asList()->items[0], budget);
        return reverse ? order > 0 : order < 0;
    });
    for (size_t i = 0; i < items.size(); ++i)
        items[i] = keyed[i].asList()->items[1];
    return makeList(budget, std::move(items));
}

Value filterDictsort(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    const auto bound = bindArguments("dictsort", {"case_sensitive", "by", "reverse"}, 0, arguments);
    if (!input.isDict()) fail("dictsort needs a mapping, not " + typeName(input));
    Budget& budget = interpreter.budget();
    const bool caseSensitive = boolArgument(bound[0], false);
    const std::string by = strArgument(bound[1], "key", budget);
    if (by != "key" && by != "value") fail("You can only sort by either \"key\" or \"value\"");
    const size_t position = by == "key" ? 0 : 1;
    std::vector<Value> pairs;
    for (const auto& [key, value] : input.asDict()->entries)
        pairs.push_back(makeList(budget, {key, value}, true));
    const bool reverse = boolArgument(bound[2], false);
    stableSort(pairs, budget, [&](const Value& a, const Value& b) {
        const int order = compare(caseFolded(a.asList()->items[position], caseSensitive),
                                  caseFolded(b.asList()->items[position], caseSensitive), budget);
        return reverse ? order > 0 : order < 0;
    });
    return makeList(budget, std::move(pairs));
}

Value filterUnique(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    const auto bound = bindArguments("unique", {"case_sensitive", "attribute"}, 0, arguments);
    Budget& budget = interpreter.budget();
    const bool caseSensitive = boolArgument(bound[0], false);
    std::vector<Value> seen;
    std::vector<Value> kept;
    const ListPtr items = iterate(input, budget); // held: iterating a string makes a new list
    for (const Value& item : items->items) {
        const Value key = sortKey(item, bound[1], caseSensitive, budget);
        if (key.isList() || key.isDict()) fail("unhashable type: '" + typeName(key) + "'");
        if (std::any_of(seen.begin(), seen.end(),
                        [&](const Value& other) { return equals(other, key, budget); }))
            continue;
        seen.push_back(key);
        kept.push_back(item);
    }
    return makeIterator(budget, std::move(kept));
}

Value extreme(Interpreter& interpreter, const Value& input, const Arguments& arguments, bool max) {
    const auto bound =
        bindArguments(max ? "max" : "min", {"case_sensitive", "attribute"}, 0, arguments);
    Budget& budget = interpreter.budget();
    const bool caseSensitive = boolArgument(bound[0], false);
    const ListPtr items = iterate(input, budget);
    if (items->items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
    const Value* best = &items->items.front();
    Value bestKey = sortKey(*best, bound[1], caseSensitive, budget);
    for (size_t i = 1; i < items->items.size(); ++i) {
        const Value& item = items->items[i];
        Value key = sortKey(item, bound[1], caseSensitive, budget);
        const int order = compare(key, bestKey, budget);
        if (max ? order > 0 : order < 0) {
            best = &item;
            bestKey = std::move(key);
        }
    }
    return *best;
}

Value filterMin(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    return extreme(interpreter, input, arguments, false);
}

Value filterMax(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    return extreme(interpreter, input, arguments, true);
}

Value filterMap(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    Budget& budget = interpreter.budget();
    std::vector<Value> mapped;
    if (!truthy(input)) return makeIterator(budget, {});
    const ListPtr items = iterate(input, budget);
    if (arguments.positional.empty()) {
        std::optional<Value> attribute;
        std::optional<Value> fallback;
        for (const auto& [name, value] : arguments.keywords) {
            if (name == "attribute")
                attribute = value;
            else if (name == "default")
                fallback = value;
            else
                fail("Unexpected keyword argument '" + name + "'");
        }
        if (!attribute) fail("map requires a filter argument");
        for (const Value& item : items->items) {
            Value value = attributePath(item, *attribute, budget);
            if (value.isUndefined() && fallback && !fallback->isNone()) value = *fallback;
            mapped.push_back(std::move(value));
        }
        return makeIterator(budget, std::move(mapped));
    }
    const std::string name = toStr(arguments.positional.front(), budget);
    Arguments rest{{arguments.positional.begin() + 1, arguments.positional.end()},
                   arguments.keywords};
    for (const Value& item : items->items)
        mapped.push_back(interpreter.applyFilter(name, item, rest));
    return makeIterator(budget, std::move(mapped));
}

// select, reject, selectattr, rejectattr: [attribute,] test name, the test's arguments.
Value selectOrReject(Interpreter& interpreter, const Value& input, const Arguments& arguments,
                     bool byAttribute, bool keep) {
    Budget& budget = interpreter.budget();
    if (!truthy(input)) return makeIterator(budget, {});
    const ListPtr items = iterate(input, budget);
    size_t next = 0;
    std::optional<Value> attribute;
    if (byAttribute) {
        if (arguments.positional.empty()) fail("Missing parameter for attribute name");
        attribute = arguments.positional[next++];
    }
    std::optional<std::string> test;
    if (next < arguments.positional.size()) test = toStr(arguments.positional[next++], budget);
    Arguments rest{{arguments.positional.begin() + static_cast<std::ptrdiff_t>(next),
                    arguments.positional.end()},
                   arguments.keywords};
    std::vector<Value> kept;
    for (const Value& item : items->items) {
        const Value subject = attribute ? attributePath(item, *attribute, budget) : item;
        const bool passes = test ? interpreter.applyTest(*test, subject, rest) : truthy(subject);
        if (passes == keep) kept.push_back(item);
    }
    return makeIterator(budget, std::move(kept));
}

Value filterSelect(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    return selectOrReject(interpreter, input, arguments, false, true);
}

Value filterReject(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    return selectOrReject(interpreter, input, arguments, false, false);
}

Value filterSelectattr(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    return selectOrReject(interpreter, input, arguments, true, true);
}

Value filterRejectattr(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    return selectOrReject(interpreter, input, arguments, true, false);
}

// Hugging Face's tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False).
Value filterTojson(Interpreter& interpreter, const Value& input, const Arguments& arguments) {
    const auto bound = bindArguments(
        "tojson", {"ensure_ascii", "indent", "separators", "sort_keys"}, 0, arguments);
    Budget& budget = interpreter.budget();
    JsonOptions options;
    options.ensureAscii = boolArgument(bound[0], false);
    options.sortKeys = boolArgument(bound[3], false);
    if (bound[1] && !bound[1]->isNone()) {
        options.indented = true;
        options.itemSeparator = ",";
        if (bound[1]->isString()) {
            options.indent = bound[1]->asString();
        } else {
            TextBuilder spaces(budget);
            spaces.appendRepeated(" ", static_cast<size_t>(std::max<int64_t>(
                                           0, toInteger(*bound[1], "tojson's indent"))));
            options.indent = spaces.take();
        }
    }
    if (bound[2] && !bound[2]->isNone()) {
        const Value& separators = *bound[2];
        if (!separators.isList() || separators.asList()->items.size() != 2 ||
            !separators.asList()->items[0].isString() || !separators.asList()->items[1].isString())
            fail("tojson's separators must be an (item_separator, key_separator) tuple");
        options.itemSeparator = separators.asList()->items[0].asString();
        options.keySeparator = separators.asList()->items[1].asString();
    }
    TextBuilder out(budget);
    appendJson(out, input, options, budget);
    return Value(out.take());
}

} // namespace

FilterFunction findSequenceFilter(std::string_view name) {
    static const std::pair<std::string_view, FilterFunction> filters[] = {
        {"dictsort", filterDictsort}, {"map", filterMap},
        {"max", filterMax},           {"min", filterMin},
        {"reject", filterReject},     {"rejectattr", filterRejectattr},
        {"select", filterSelect},     {"selectattr", filterSelectattr},
        {"sort", filterSort},         {"tojson", filterTojson},
        {"unique", filterUnique},
    };
    for (const auto& [filterName, function] : filters)
        if (filterName == name) return function;
    return nullptr;
}

FilterFunction findFilter(std::string_view name) {
    if (const FilterFunction filter = findValueFilter(name)) return filter;
    return findSequenceFilter(name);
}

} // namespace sinkscope::jinja
