#include "jinja/jinja_value.h"

#include "jinja/jinja_budget.h"
#include "jinja/jinja_ops.h"

#include <algorithm>

namespace sinkscope::jinja {

Value Value::undefined(std::string reason) {
    Value value;
    value.m_data = Undefined{std::make_shared<const std::string>(std::move(reason))};
    return value;
}

const std::string& Value::undefinedReason() const {
    static const std::string unnamed = "the value is undefined";
    const auto& reason = std::get<Undefined>(m_data).reason;
    return reason ? *reason : unnamed;
}

bool Value::isTuple() const {
    return isList() && asList()->isTuple;
}

int Value::depth() const {
    switch (kind()) {
    case Kind::List:
        return asList()->depth;
    case Kind::Dict:
        return asDict()->depth;
    case Kind::Namespace:
        return 1;
    case Kind::Iterator:
        return asIterator()->items->depth + 1;
    default:
        return 0;
    }
}

bool Value::holdsNamespace() const {
    switch (kind()) {
    case Kind::List:
        return asList()->holdsNamespace;
    case Kind::Dict:
        return asDict()->holdsNamespace;
    case Kind::Namespace:
        return true;
    case Kind::Iterator:
        return asIterator()->items->holdsNamespace;
    default:
        return false;
    }
}

size_t Dict::indexOf(const Value& key, Budget& budget) const {
    if (key.isString()) {
        const auto found = stringKeys.find(key.asString());
        return found == stringKeys.end() ? std::string::npos : found->second;
    }
    for (size_t i = 0; i < entries.size(); ++i)
        if (!entries[i].first.isString() && equals(entries[i].first, key, budget)) return i;
    return std::string::npos;
}

const Value* Dict::find(const Value& key, Budget& budget) const {
    const size_t index = indexOf(key, budget);
    return index == std::string::npos ? nullptr : &entries[index].second;
}

const Value* Dict::find(std::string_view key) const {
    const auto found = stringKeys.find(std::string(key));
    return found == stringKeys.end() ? nullptr : &entries[found->second].second;
}

const Value* Namespace::find(std::string_view name) const {
    for (const auto& [attribute, value] : attributes)
        if (attribute == name) return &value;
    return nullptr;
}

void Namespace::set(std::string_view name, Value value) {
    for (auto& [attribute, current] : attributes) {
        if (attribute == name) {
            current = std::move(value);
            return;
        }
    }
    attributes.emplace_back(std::string(name), std::move(value));
}

namespace {

void checkNesting(Budget& budget, int depth) {
    if (depth > budget.limits().maxNesting)
        fail("a value of the template nests deeper than " +
             std::to_string(budget.limits().maxNesting) + " levels");
}

} // namespace

Value makeList(Budget& budget, std::vector<Value> items, bool isTuple) {
    budget.chargeItems(items.size());
    auto list = std::make_shared<List>();
    list->isTuple = isTuple;
    for (const Value& item : items) {
        list->depth = std::max(list->depth, item.depth() + 1);
        list->holdsNamespace = list->holdsNamespace || item.holdsNamespace();
    }
    checkNesting(budget, list->depth);
    list->items = std::move(items);
    return Value(ListPtr(std::move(list)));
}

Value makeDict(Budget& budget, std::vector<std::pair<Value, Value>> entries) {
    budget.chargeItems(entries.size());
    auto dict = std::make_shared<Dict>();
    dict->entries.reserve(entries.size());
    for (auto& [key, value] : entries) {
        if (key.isList() || key.isDict() || key.isNamespace() || key.isUndefined())
            fail("unhashable type: '" + typeName(key) + "'");
        dict->depth = std::max({dict->depth, key.depth() + 1, value.depth() + 1});
        dict->holdsNamespace = dict->holdsNamespace || value.holdsNamespace();
        if (const size_t existing = dict->indexOf(key, budget); existing != std::string::npos) {
            dict->entries[existing].second = std::move(value);
            continue;
        }
        if (key.isString()) dict->stringKeys.emplace(key.asString(), dict->entries.size());
        dict->entries.emplace_back(std::move(key), std::move(value));
    }
    checkNesting(budget, dict->depth);
    return Value(DictPtr(std::move(dict)));
}

std::vector<Value> Iterator::take() const {
    const auto& all = items->items;
    std::vector<Value> rest(
        all.begin() + static_cast<std::ptrdiff_t>(std::min(position, all.size())), all.end());
    position = all.size();
    return rest;
}

Value makeIterator(Budget& budget, std::vector<Value> items, const char* type) {
    auto iterator = std::make_shared<Iterator>();
    iterator->items = makeList(budget, std::move(items)).asList();
    iterator->type = type;
    return Value(std::shared_ptr<const Iterator>(std::move(iterator)));
}

Value makeString(Budget& budget, std::string text) {
    budget.chargeText(text.size());
    return Value(std::move(text));
}

bool truthy(const Value& value) {
    switch (value.kind()) {
    case Value::Kind::Undefined:
    case Value::Kind::None:
        return false;
    case Value::Kind::Bool:
        return value.asBool();
    case Value::Kind::Int:
        return value.asInt() != 0;
    case Value::Kind::Float:
        return value.asFloat() != 0.0;
    case Value::Kind::String:
        return !value.asString().empty();
    case Value::Kind::List:
        return !value.asList()->items.empty();
    case Value::Kind::Dict:
        return !value.asDict()->entries.empty();
    default:
        return true;
    }
}

std::string typeName(const Value& value) {
    switch (value.kind()) {
    case Value::Kind::Undefined:
        return "Undefined";
    case Value::Kind::None:
        return "NoneType";
    case Value::Kind::Bool:
        return "bool";
    case Value::Kind::Int:
        return "int";
    case Value::Kind::Float:
        return "float";
    case Value::Kind::String:
        return "str";
    case Value::Kind::List:
        return value.isTuple() ? "tuple" : "list";
    case Value::Kind::Dict:
        return "dict";
    case Value::Kind::Namespace:
        return "Namespace";
    case Value::Kind::Callable:
        return "function";
    case Value::Kind::Loop:
        return "LoopContext";
    case Value::Kind::Iterator:
        return value.asIterator()->type;
    }
    return "object";
}

std::string objectDescription(const Value& value) {
    if (value.isNone()) return "None";
    return typeName(value) + " object";
}

void failUndefined(const Value& undefined) {
    fail(undefined.undefinedReason());
}

} // namespace sinkscope::jinja
