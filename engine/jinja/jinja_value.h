// Values of the Jinja interpreter, with Python's types: undefined (jinja2's Undefined, which
// remembers why it is undefined), None, bool, int (64-bit here), float, str, list and tuple, dict
// (insertion-ordered, keys compared with ==), namespace (the one mutable object), callables
// (macros, globals, bound methods) and a for loop's `loop`. Containers are immutable and shared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace sinkscope::jinja {

class Budget;
class Interpreter;
struct Arguments;
struct List;
struct Dict;
struct Namespace;
struct LoopInfo;
struct Iterator;
class Callable;

using ListPtr = std::shared_ptr<const List>;
using DictPtr = std::shared_ptr<const Dict>;

struct Undefined {
    std::shared_ptr<const std::string> reason; // the error raised when it is used
};
struct None {};

class Value {
public:
    enum class Kind {
        Undefined,
        None,
        Bool,
        Int,
        Float,
        String,
        List,
        Dict,
        Namespace,
        Callable,
        Loop,
        Iterator,
    };

    Value() : m_data(Undefined{}) {}
    Value(None) : m_data(None{}) {}
    Value(bool b) : m_data(b) {}
    Value(int64_t i) : m_data(i) {}
    Value(double f) : m_data(f) {}
    Value(std::string s) : m_data(std::make_shared<const std::string>(std::move(s))) {}
    Value(const char* s) : Value(std::string(s)) {}
    Value(std::shared_ptr<const std::string> s) : m_data(std::move(s)) {}
    Value(ListPtr list) : m_data(std::move(list)) {}
    Value(DictPtr dict) : m_data(std::move(dict)) {}
    Value(std::shared_ptr<Namespace> ns) : m_data(std::move(ns)) {}
    Value(std::shared_ptr<const Callable> callable) : m_data(std::move(callable)) {}
    Value(std::shared_ptr<const LoopInfo> loop) : m_data(std::move(loop)) {}
    Value(std::shared_ptr<const Iterator> iterator) : m_data(std::move(iterator)) {}
    static Value undefined(std::string reason);

    Kind kind() const { return static_cast<Kind>(m_data.index()); }
    bool isUndefined() const { return kind() == Kind::Undefined; }
    bool isNone() const { return kind() == Kind::None; }
    bool isBool() const { return kind() == Kind::Bool; }
    bool isInt() const { return kind() == Kind::Int; }
    bool isFloat() const { return kind() == Kind::Float; }
    bool isNumber() const { return isBool() || isInt() || isFloat(); } // Python: bool is an int
    bool isIntegral() const { return isBool() || isInt(); }
    bool isString() const { return kind() == Kind::String; }
    bool isList() const { return kind() == Kind::List; } // a list or a tuple
    bool isDict() const { return kind() == Kind::Dict; }
    bool isNamespace() const { return kind() == Kind::Namespace; }
    bool isCallable() const { return kind() == Kind::Callable; }
    bool isLoop() const { return kind() == Kind::Loop; }
    bool isIterator() const { return kind() == Kind::Iterator; }

    // Each requires the matching kind.
    const std::string& undefinedReason() const;
    bool asBool() const { return std::get<bool>(m_data); }
    int64_t asInt() const { return isBool() ? int64_t(asBool()) : std::get<int64_t>(m_data); }
    double asFloat() const { return isFloat() ? std::get<double>(m_data) : double(asInt()); }
    const std::string& asString() const { return *stringPtr(); }
    const std::shared_ptr<const std::string>& stringPtr() const {
        return std::get<std::shared_ptr<const std::string>>(m_data);
    }
    const ListPtr& asList() const { return std::get<ListPtr>(m_data); }
    const DictPtr& asDict() const { return std::get<DictPtr>(m_data); }
    const std::shared_ptr<Namespace>& asNamespace() const {
        return std::get<std::shared_ptr<Namespace>>(m_data);
    }
    const std::shared_ptr<const Callable>& asCallable() const {
        return std::get<std::shared_ptr<const Callable>>(m_data);
    }
    const std::shared_ptr<const LoopInfo>& asLoop() const {
        return std::get<std::shared_ptr<const LoopInfo>>(m_data);
    }
    const std::shared_ptr<const Iterator>& asIterator() const {
        return std::get<std::shared_ptr<const Iterator>>(m_data);
    }

    bool isTuple() const;
    // Containers nested inside this value, itself included: 0 for a scalar.
    int depth() const;
    // Whether a namespace is reachable from this value (namespaces may not hold one: no cycles).
    bool holdsNamespace() const;

private:
    std::variant<Undefined, None, bool, int64_t, double, std::shared_ptr<const std::string>,
                 ListPtr, DictPtr, std::shared_ptr<Namespace>, std::shared_ptr<const Callable>,
                 std::shared_ptr<const LoopInfo>, std::shared_ptr<const Iterator>>
        m_data;
};

struct List {
    std::vector<Value> items;
    bool isTuple = false;
    int depth = 1;
    bool holdsNamespace = false;
};

struct Dict {
    std::vector<std::pair<Value, Value>> entries; // in insertion order, keys distinct under ==
    std::unordered_map<std::string, size_t> stringKeys; // string key -> entry, for fast lookup
    int depth = 1;
    bool holdsNamespace = false;
    // Python's d.get(key): each key compared costs a step.
    const Value* find(const Value& key, Budget& budget) const;
    const Value* find(std::string_view key) const;
    size_t indexOf(const Value& key, Budget& budget) const; // npos when absent
};

struct Namespace {
    std::vector<std::pair<std::string, Value>> attributes;
    const Value* find(std::string_view name) const;
    void set(std::string_view name, Value value);
};

struct LoopInfo {
    ListPtr items; // what the loop walks, after its `if` filter
    size_t index = 0;
};

// What jinja2's map, select, unique, ... and reverse give: a Python iterator. It is always
// true, has no len(), and walking it uses it up (the position is shared by every reference, as
// in Python), so a second loop over it sees nothing.
struct Iterator {
    ListPtr items;
    const char* type = "generator"; // Python's type name: "generator", "list_reverseiterator"
    mutable size_t position = 0;
    // The items not yet walked; takes them all.
    std::vector<Value> take() const;
};
Value makeIterator(Budget& budget, std::vector<Value> items, const char* type = "generator");

struct Arguments {
    std::vector<Value> positional;
    std::vector<std::pair<std::string, Value>> keywords;
};

class Callable {
public:
    virtual ~Callable() = default;
    virtual std::string name() const = 0;
    virtual Value call(Interpreter& interpreter, Arguments arguments) const = 0;
};

// Containers built within the budget: the size is charged, the nesting checked against
// maxNesting. `items` of a dict may repeat keys under ==, as in Python the last value wins.
Value makeList(Budget& budget, std::vector<Value> items, bool isTuple = false);
Value makeDict(Budget& budget, std::vector<std::pair<Value, Value>> entries);
Value makeString(Budget& budget, std::string text);

// Python's bool(value).
bool truthy(const Value& value);
// Python's type name: "str", "int", "NoneType", "list", ..., "Undefined" for an undefined value.
std::string typeName(const Value& value);
// The phrase jinja2 uses in "'dict object' has no attribute 'x'".
std::string objectDescription(const Value& value);
// Raises the error an undefined value stands for when it is used in arithmetic, called or
// looked into.
[[noreturn]] void failUndefined(const Value& undefined);

} // namespace sinkscope::jinja
