// The statement half of the evaluator, and the context's conversion from JSON.
#include "jinja/jinja_render.h"
#include "jinja/jinja_lookup.h"

#include "jinja/builtins/jinja_builtins.h"
#include "jinja/builtins/jinja_format.h"
#include "jinja/builtins/jinja_text.h"

namespace sinkscope::jinja {

const Value* Scope::find(std::string_view name) const {
    for (const Scope* scope = this; scope; scope = scope->parent.get())
        for (const auto& [variable, value] : scope->variables)
            if (variable == name) return &value;
    return nullptr;
}

void Scope::set(std::string_view name, Value value) {
    for (auto& [variable, current] : variables) {
        if (variable == name) {
            current = std::move(value);
            return;
        }
    }
    variables.emplace_back(std::string(name), std::move(value));
}

Value valueFromJson(const nlohmann::ordered_json& json, Budget& budget, int depth) {
    if (depth > budget.limits().maxNesting)
        fail("the context nests deeper than " + std::to_string(budget.limits().maxNesting) +
             " levels");
    switch (json.type()) {
    case nlohmann::ordered_json::value_t::null:
        return None{};
    case nlohmann::ordered_json::value_t::boolean:
        return json.get<bool>();
    case nlohmann::ordered_json::value_t::number_integer:
        return json.get<int64_t>();
    case nlohmann::ordered_json::value_t::number_unsigned: {
        const auto value = json.get<uint64_t>();
        if (value > static_cast<uint64_t>(INT64_MAX))
            fail("an integer of the context is outside the 64-bit range");
        return static_cast<int64_t>(value);
    }
    case nlohmann::ordered_json::value_t::number_float:
        return json.get<double>();
    case nlohmann::ordered_json::value_t::string: {
        const auto& text = json.get_ref<const std::string&>();
        if (invalidUtf8Offset(text) != std::string::npos)
            fail("a string of the context is not valid UTF-8");
        return makeString(budget, text);
    }
    case nlohmann::ordered_json::value_t::array: {
        std::vector<Value> items;
        items.reserve(json.size());
        for (const auto& item : json)
            items.push_back(valueFromJson(item, budget, depth + 1));
        return makeList(budget, std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
        std::vector<std::pair<Value, Value>> entries;
        entries.reserve(json.size());
        for (const auto& [key, item] : json.items()) {
            if (invalidUtf8Offset(key) != std::string::npos)
                fail("a key of the context is not valid UTF-8");
            entries.emplace_back(Value(key), valueFromJson(item, budget, depth + 1));
        }
        return makeDict(budget, std::move(entries));
    }
    default:
        fail("the context holds a value JSON cannot write (binary or discarded)");
    }
}

Interpreter::DepthGuard::DepthGuard(Interpreter& interpreter) : m_interpreter(interpreter) {
    const int limit = 16 * std::max(1, interpreter.m_program.limits.maxNesting);
    if (++m_interpreter.m_depth > limit)
        fail("rendering nests deeper than " + std::to_string(limit) +
             " levels (recursive macros?)");
}

Interpreter::Interpreter(const Program& program, std::time_t now)
    : m_program(program), m_budget(program.limits), m_now(now) {}

std::string Interpreter::render(const nlohmann::ordered_json& context) {
    if (!context.is_object()) fail("the context must be a JSON object of variables");
    auto globals = std::make_shared<Scope>();
    for (auto& [name, function] : globalFunctions())
        globals->set(name, std::move(function));
    auto variables = std::make_shared<Scope>();
    variables->parent = std::move(globals);
    for (const auto& [name, value] : context.items())
        variables->set(name, valueFromJson(value, m_budget, 1));
    m_root = std::make_shared<Scope>();
    m_root->parent = std::move(variables);
    m_scope = m_root;
    CaptureGuard output(*this);
    execute(m_program.body);
    return output.take();
}

Interpreter::Flow Interpreter::execute(const Body& body) {
    for (const auto& node : body) {
        const Flow flow = execute(*node);
        if (flow != Flow::Normal) return flow;
    }
    return Flow::Normal;
}

Interpreter::Flow Interpreter::capture(const Body& body, std::string& text) {
    CaptureGuard captured(*this);
    const Flow flow = execute(body);
    text = captured.take();
    return flow;
}

namespace {

class MacroCallable : public Callable {
public:
    MacroCallable(const MacroDefinition& macro, std::weak_ptr<Scope> scope)
        : m_macro(macro), m_scope(std::move(scope)) {}
    std::string name() const override { return m_macro.name; }
    Value call(Interpreter& interpreter, Arguments arguments) const override {
        return interpreter.callMacro(m_macro, m_scope, std::move(arguments));
    }

private:
    const MacroDefinition& m_macro;
    std::weak_ptr<Scope>
        m_scope; // weak: a scope may hold the macro, and must not be kept alive by it
};

} // namespace

// Evaluated before the output is looked up: evaluating may open and close captures.
void Interpreter::appendValue(const Value& value) {
    appendStr(output(), value);
}

Interpreter::Flow Interpreter::execute(const Node& node) {
    const DepthGuard guard(*this);
    m_budget.step();
    m_offset = node.offset;
    switch (node.kind) {
    case NodeKind::Text:
        output().append(node.text);
        break;
    case NodeKind::Output:
        appendValue(evaluate(*node.expression));
        break;
    case NodeKind::If:
        for (const auto& [condition, body] : node.branches)
            if (!condition || truthy(evaluate(*condition))) return execute(body);
        break;
    case NodeKind::For:
        return executeFor(node);
    case NodeKind::Set:
        assign(node.target, evaluate(*node.expression), *m_scope);
        break;
    case NodeKind::SetBlock: {
        std::string text;
        if (const Flow flow = capture(node.body, text); flow != Flow::Normal) return flow;
        Value value(std::move(text));
        if (node.expression) value = evaluateFilter(*node.expression, &value);
        assign(node.target, value, *m_scope);
        break;
    }
    case NodeKind::Macro:
        m_scope->set(node.macro->name, Value(std::shared_ptr<const Callable>(
                                           std::make_shared<MacroCallable>(*node.macro, m_scope))));
        break;
    case NodeKind::CallBlock: {
        const Value caller(
            std::shared_ptr<const Callable>(std::make_shared<MacroCallable>(*node.macro, m_scope)));
        appendValue(evaluateCall(*node.expression, &caller));
        break;
    }
    case NodeKind::FilterBlock: {
        std::string text;
        if (const Flow flow = capture(node.body, text); flow != Flow::Normal) return flow;
        const Value value(std::move(text));
        appendValue(evaluateFilter(*node.expression, &value));
        break;
    }
    case NodeKind::With: {
        auto scope = std::make_shared<Scope>();
        scope->parent = m_scope;
        for (const auto& [target, expression] : node.assignments)
            assign(target, evaluate(*expression), *scope);
        const ScopeGuard scoped(*this, std::move(scope));
        return execute(node.body);
    }
    case NodeKind::Break:
        return Flow::Break;
    case NodeKind::Continue:
        return Flow::Continue;
    case NodeKind::Scope:
        return execute(node.body);
    }
    return Flow::Normal;
}

Interpreter::Flow Interpreter::executeFor(const Node& node) {
    ListPtr items = iterate(evaluate(*node.expression), m_budget);
    if (node.condition) {
        std::vector<Value> kept;
        for (const Value& item : items->items) {
            m_budget.iteration();
            auto scope = std::make_shared<Scope>();
            scope->parent = m_scope;
            assign(node.target, item, *scope);
            const ScopeGuard scoped(*this, std::move(scope));
            if (truthy(evaluate(*node.condition))) kept.push_back(item);
        }
        items = makeList(m_budget, std::move(kept)).asList();
    }
    if (items->items.empty()) return execute(node.otherwise);
    for (size_t index = 0; index < items->items.size(); ++index) {
        m_budget.iteration();
        auto scope = std::make_shared<Scope>();
        scope->parent = m_scope;
        assign(node.target, items->items[index], *scope);
        scope->set("loop", Value(std::make_shared<const LoopInfo>(LoopInfo{items, index})));
        const ScopeGuard scoped(*this, std::move(scope));
        if (execute(node.body) == Flow::Break) break;
    }
    return Flow::Normal;
}

void Interpreter::assign(const Target& target, const Value& value, Scope& scope) {
    if (!target.attribute.empty()) {
        const Value* object = m_scope->find(target.names.front());
        if (!object || !object->isNamespace())
            fail("Cannot assign attribute on non-namespace object");
        if (value.holdsNamespace()) fail("a namespace cannot hold a namespace");
        object->asNamespace()->set(target.attribute, value);
        return;
    }
    if (target.names.size() == 1) {
        scope.set(target.names.front(), value);
        return;
    }
    const ListPtr parts = iterate(value, m_budget);
    const size_t expected = target.names.size();
    if (parts->items.size() > expected)
        fail("too many values to unpack (expected " + std::to_string(expected) + ")");
    if (parts->items.size() < expected)
        fail("not enough values to unpack (expected " + std::to_string(expected) + ", got " +
             std::to_string(parts->items.size()) + ")");
    for (size_t i = 0; i < expected; ++i)
        scope.set(target.names[i], parts->items[i]);
}

} // namespace sinkscope::jinja
