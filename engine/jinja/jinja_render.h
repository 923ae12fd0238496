// The evaluator: walks a parsed Program with a context, within a Budget. Scopes follow jinja2:
// the globals, then the context, then the template's own variables; each for-loop iteration,
// macro call and `with` block opens a scope whose `set`s vanish when it closes (an `if` opens
// none), and macros see their defining scope as it is when they are called.
#pragma once

#include "jinja/jinja_ast.h"
#include "jinja/jinja_budget.h"

#include <nlohmann/json.hpp>

#include <ctime>
#include <deque>
#include <memory>
#include <string>

namespace sinkscope::jinja {

struct Scope {
    std::shared_ptr<Scope> parent;
    std::vector<std::pair<std::string, Value>> variables;
    const Value* find(std::string_view name) const; // here or in a parent
    void set(std::string_view name, Value value);   // here
};

class Interpreter {
public:
    Interpreter(const Program& program, std::time_t now);

    // Throws Failure (its offset filled in from the node being evaluated).
    std::string render(const nlohmann::ordered_json& context);

    Budget& budget() { return m_budget; }
    std::time_t now() const { return m_now; }
    const Program& program() const { return m_program; }
    // What is being evaluated: the offset an error without its own is reported at.
    size_t offset() const { return m_offset; }

    Value callMacro(const MacroDefinition& macro, const std::weak_ptr<Scope>& defining,
                    Arguments arguments);
    Value applyFilter(std::string_view name, const Value& input, const Arguments& arguments);
    bool applyTest(std::string_view name, const Value& input, const Arguments& arguments);

private:
    enum class Flow { Normal, Break, Continue };
    class DepthGuard;
    class ScopeGuard;
    class CaptureGuard;
    TextBuilder& output() { return m_outputs.back(); }
    void appendValue(const Value& value);

    // Statements (jinja_render.cpp).
    Flow execute(const Body& body);
    Flow execute(const Node& node);
    Flow executeFor(const Node& node);
    Flow capture(const Body& body, std::string& text);
    void assign(const Target& target, const Value& value, Scope& scope);

    // Expressions (jinja_eval.cpp).
    Value evaluate(const Expr& expr);
    Value evaluateCompare(const Expr& expr);
    Value evaluateCall(const Expr& call, const Value* caller);
    Value evaluateFilter(const Expr& filter, const Value* blockText);
    Arguments evaluateArguments(const CallArguments& arguments);
    Value lookup(const std::string& name) const;

    const Program& m_program;
    Budget m_budget;
    std::time_t m_now;
    std::shared_ptr<Scope> m_root;  // the template's variables (above: context, globals)
    std::shared_ptr<Scope> m_scope; // innermost
    // Where text goes: the render, then the captures inside it. A deque, so that a capture opened
    // while a reference to the one below is held leaves that reference valid.
    std::deque<TextBuilder> m_outputs;
    size_t m_offset = 0;
    int m_depth = 0;     // evaluation recursion, at most 16 x maxNesting
    int m_callDepth = 0; // macro calls, at most maxNesting
};

// Counts evaluation recursion: expressions inside blocks inside macro calls.
class Interpreter::DepthGuard {
public:
    explicit DepthGuard(Interpreter& interpreter);
    ~DepthGuard() { --m_interpreter.m_depth; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

private:
    Interpreter& m_interpreter;
};

// Makes `scope` the innermost scope until it closes.
class Interpreter::ScopeGuard {
public:
    ScopeGuard(Interpreter& interpreter, std::shared_ptr<Scope> scope)
        : m_interpreter(interpreter), m_scope(std::move(interpreter.m_scope)) {
        interpreter.m_scope = std::move(scope);
    }
    ~ScopeGuard() { m_interpreter.m_scope = std::move(m_scope); }
    ScopeGuard(const ScopeGuard&) = delete;
    ScopeGuard& operator=(const ScopeGuard&) = delete;

private:
    Interpreter& m_interpreter;
    std::shared_ptr<Scope> m_scope;
};

// Sends output to a new capture until it closes; take() gives what was written.
class Interpreter::CaptureGuard {
public:
    explicit CaptureGuard(Interpreter& interpreter) : m_interpreter(interpreter) {
        interpreter.m_outputs.emplace_back(interpreter.m_budget);
    }
    ~CaptureGuard() { m_interpreter.m_outputs.pop_back(); }
    CaptureGuard(const CaptureGuard&) = delete;
    CaptureGuard& operator=(const CaptureGuard&) = delete;
    std::string take() { return m_interpreter.m_outputs.back().take(); }

private:
    Interpreter& m_interpreter;
};

// A JSON context value as an interpreter value (objects keep their key order).
Value valueFromJson(const nlohmann::ordered_json& json, Budget& budget, int depth = 0);

} // namespace sinkscope::jinja
