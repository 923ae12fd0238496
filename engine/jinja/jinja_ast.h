// The syntax tree of a parsed template. Nodes keep the byte offset of their source so that
// errors while rendering can say where (line and column are worked out only then).
#pragma once

#include "jinja/jinja_ops.h"
#include "jinja/jinja_template.h"
#include "jinja/jinja_value.h"

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace sinkscope::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct CallArguments {
    std::vector<ExprPtr> positional;
    std::vector<std::pair<std::string, ExprPtr>> keywords;
};

enum class ExprKind {
    Literal,     // value
    Name,        // name
    List,        // operands: the items
    Tuple,       // operands: the items
    Dict,        // operands: key, value, key, value, ...
    Not,         // operands[0]
    Negate,      // operands[0]
    Plus,        // operands[0]
    Binary,      // op, operands[0] and [1]
    And,         // operands[0] and [1], Python's short circuit
    Or,          // operands[0] and [1]
    Compare,     // operands[0] compareOps[0] operands[1] compareOps[1] ... (a < b < c)
    Conditional, // operands: value, condition, otherwise (may be null)
    Attribute,   // operands[0].name
    Item,        // operands[0][operands[1]]
    Slice,       // operands[0][operands[1]:operands[2]:operands[3]], each bound may be null
    Call,        // operands[0](arguments)
    Filter,      // operands[0] | name(arguments); operands[0] null for a filter block's text
    Test,        // operands[0] is [not] name(arguments)
};

struct Expr {
    ExprKind kind = ExprKind::Literal;
    size_t offset = 0;
    int depth = 1; // of the tree below and including this node
    Value value;
    std::string name;
    BinaryOp op = BinaryOp::Add;
    bool negated = false;
    std::vector<ExprPtr> operands;
    std::vector<BinaryOp> compareOps;
    CallArguments arguments;
};

struct Node;
using Body = std::vector<std::unique_ptr<Node>>;

// Where `for` and `set` put values: one name, several (unpacking), or a namespace attribute.
struct Target {
    std::vector<std::string> names;
    std::string attribute; // set ns.attribute = ...: names holds the one namespace name
};

struct MacroDefinition {
    std::string name;
    std::vector<std::string> parameters;
    std::vector<ExprPtr> defaults; // one per parameter, null where none
    Body body;
    // A macro takes extra positional or keyword arguments only when its body reads them.
    bool readsVarargs = false;
    bool readsKwargs = false;
    bool readsCaller = false;
};

enum class NodeKind {
    Text,        // text
    Output,      // {{ expression }}
    If,          // branches: (condition, body); a last else branch has no condition
    For,         // for target in expression [if condition] body [else otherwise]
    Set,         // set target = expression
    SetBlock,    // set target [| filter] body endset: expression is the filter chain or null
    Macro,       // macro
    CallBlock,   // call(macro's parameters) expression: macro holds the caller body
    FilterBlock, // filter expression (a Filter chain ending in a null operand) body
    With,        // with assignments body
    Break,
    Continue,
    Scope, // HF's {% generation %}: renders its body as it is
};

struct Node {
    NodeKind kind = NodeKind::Text;
    size_t offset = 0;
    std::string text;
    ExprPtr expression;
    ExprPtr condition;
    Target target;
    Body body;
    Body otherwise;
    std::vector<std::pair<ExprPtr, Body>> branches;
    std::vector<std::pair<Target, ExprPtr>> assignments;
    std::unique_ptr<MacroDefinition> macro;
};

struct Program {
    std::string source; // normalized, for turning offsets into lines and columns
    Body body;
    JinjaLimits limits;
};

} // namespace sinkscope::jinja
