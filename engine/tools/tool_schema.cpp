#include "tools/tool_schema.h"

#include "tools/json_location.h"
#include "tools/numeric_range.h"
#include "tools/schema_messages.h"
#include "tools/value_validation.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace sinkscope {

namespace {

using Json = nlohmann::ordered_json;
using namespace schema_messages;

constexpr int kMaxSchemaDepth = 6; // nested objects/arrays below "parameters"
// The shortest valid arguments of a tool: what the call grammar writes when it wraps a call up.
constexpr double kMaxShortestArguments = 65536; // bytes

struct TypeName {
    std::string_view text;
    ValueType type;
};

constexpr TypeName kTypeNames[] = {
    {"string", ValueType::String},   {"integer", ValueType::Integer}, {"number", ValueType::Number},
    {"boolean", ValueType::Boolean}, {"array", ValueType::Array},     {"object", ValueType::Object},
};

// The keywords each type understands, beside those every type does.
bool appliesTo(std::string_view keyword, ValueType type) {
    static const std::set<std::string_view, std::less<>> numeric = {
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"};
    if (numeric.contains(keyword)) return type == ValueType::Integer || type == ValueType::Number;
    if (keyword == "minLength" || keyword == "maxLength") return type == ValueType::String;
    if (keyword == "minItems" || keyword == "maxItems" || keyword == "items")
        return type == ValueType::Array;
    if (keyword == "properties" || keyword == "required" || keyword == "additionalProperties")
        return type == ValueType::Object;
    return false;
}

bool isKnownKeyword(std::string_view keyword) {
    static const std::set<std::string_view, std::less<>> common = {"type", "description", "enum",
                                                                   "const", "default"};
    if (common.contains(keyword)) return true;
    for (const TypeName& name : kTypeNames)
        if (appliesTo(keyword, name.type)) return true;
    return false;
}

bool isIdentifier(std::string_view name) {
    if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_';
    });
}

std::optional<int64_t> nonNegativeInteger(const Json& value) {
    if (value.is_number_unsigned())
        return static_cast<int64_t>(std::min<uint64_t>(value.get<uint64_t>(), INT64_MAX));
    if (value.is_number_integer() && value.get<int64_t>() >= 0) return value.get<int64_t>();
    return std::nullopt;
}

// The value type every enum/const value shares, when they share one.
std::optional<ValueType> inferType(const std::vector<Json>& values) {
    std::optional<ValueType> shared;
    for (const Json& value : values) {
        ValueType type;
        if (value.is_string())
            type = ValueType::String;
        else if (value.is_boolean())
            type = ValueType::Boolean;
        else if (value.is_number_integer())
            type = ValueType::Integer;
        else if (value.is_number())
            type = ValueType::Number;
        else
            return std::nullopt;
        if (shared && *shared != type) {
            const bool numeric = (*shared == ValueType::Integer || *shared == ValueType::Number) &&
                                 (type == ValueType::Integer || type == ValueType::Number);
            if (!numeric) return std::nullopt;
            type = ValueType::Number;
        }
        shared = type;
    }
    return shared;
}

// A lower bound on the bytes of the shortest value the schema admits (compact JSON), in doubles
// so that absurd minItems/minLength products cannot overflow.
double shortestJsonBytes(const ValueSchema& schema) {
    const std::vector<Json> allowed = schema.allowedValues();
    if (!allowed.empty()) {
        double shortest = INFINITY;
        for (const Json& value : allowed)
            shortest = std::min(shortest, static_cast<double>(value.dump().size()));
        return shortest;
    }
    switch (schema.type) {
    case ValueType::String:
        return 2.0 + static_cast<double>(schema.minLength.value_or(0));
    case ValueType::Array:
        return 2.0 + static_cast<double>(schema.minItems.value_or(0)) *
                         (shortestJsonBytes(*schema.items) + 1.0);
    case ValueType::Object: {
        double bytes = 2;
        for (const PropertySchema& property : schema.properties)
            if (property.required)
                bytes += static_cast<double>(property.name.size()) + 4.0 +
                         shortestJsonBytes(property.schema);
        return bytes;
    }
    default:
        return 1; // a digit, or false/true (4 bytes) as the bound's floor
    }
}

// Reads a document of tools, collecting every issue rather than stopping at the first.
class ToolsReader {
public:
    ToolsReader(std::string_view sourceText, std::string_view pointerPrefix)
        : m_sourceText(sourceText), m_prefix(pointerPrefix) {}

    ToolsParseResult read(const Json& root) {
        ToolSet set;
        if (!root.is_array()) {
            error("", "the tools must be a JSON array, not " + withArticle(jsonTypeName(root)));
        } else {
            std::map<std::string, std::string, std::less<>> firstPlace; // name -> pointer
            for (size_t i = 0; i < root.size(); ++i) {
                const std::string pointer = "/" + std::to_string(i);
                std::optional<ToolSchema> tool = readTool(root[i], pointer);
                if (!tool) continue;
                const auto [found, inserted] = firstPlace.emplace(tool->name, pointer);
                if (!inserted) {
                    error(namePointer(root[i], pointer), "duplicate tool name " +
                                                             quotedJson(tool->name) +
                                                             " (first at " + found->second + ")");
                    continue;
                }
                set.tools.push_back(std::move(*tool));
            }
        }
        ToolsParseResult result;
        result.errors = std::move(m_errors);
        result.warnings = std::move(m_warnings);
        if (result.errors.empty()) result.tools = std::move(set);
        return result;
    }

private:
    SchemaIssue issue(const std::string& pointer, std::string message) const {
        if (m_sourceText.empty()) return SchemaIssue{m_prefix + pointer, std::move(message)};
        return locatedIssue(m_sourceText, m_prefix + pointer, std::move(message));
    }
    void error(const std::string& pointer, std::string message) {
        m_errors.push_back(issue(pointer, std::move(message)));
    }
    void warning(const std::string& pointer, std::string message) {
        m_warnings.push_back(issue(pointer, std::move(message)));
    }
    void unsupportedKeyword(const std::string& pointer, std::string_view key) {
        warning(pointer + "/" + escapeJsonPointerToken(key),
                "unsupported keyword " + quotedJson(key) + " (ignored)");
    }

    static std::string namePointer(const Json& entry, const std::string& pointer) {
        return entry.contains("function") ? pointer + "/function/name" : pointer + "/name";
    }

    std::optional<ToolSchema> readTool(const Json& entry, const std::string& pointer) {
        if (!entry.is_object()) {
            error(pointer, "expected a tool object, got " + withArticle(jsonTypeName(entry)));
            return std::nullopt;
        }
        if (!entry.contains("type") && !entry.contains("function"))
            return readFunction(entry, pointer, false);
        const auto type = entry.find("type");
        if (type != entry.end() && *type != "function") {
            error(pointer + "/type",
                  "unsupported tool type " + type->dump() + " (only \"function\")");
            return std::nullopt;
        }
        const auto function = entry.find("function");
        if (function == entry.end()) return readFunction(entry, pointer, true); // flat form
        for (const auto& [key, value] : entry.items())
            if (key != "type" && key != "function") unsupportedKeyword(pointer, key);
        if (!function->is_object()) {
            error(pointer + "/function",
                  "expected an object, got " + withArticle(jsonTypeName(*function)));
            return std::nullopt;
        }
        return readFunction(*function, pointer + "/function", false);
    }

    // The tool object itself; `flatTyped` when it carries "type": "function" beside its name.
    std::optional<ToolSchema> readFunction(const Json& object, const std::string& pointer,
                                           bool flatTyped) {
        ToolSchema tool;
        tool.definition = object;
        if (flatTyped) tool.definition.erase("type");
        bool ok = true;
        const auto name = object.find("name");
        if (name == object.end()) {
            error(pointer, "missing \"name\"");
            ok = false;
        } else if (!name->is_string()) {
            error(pointer + "/name", "expected a string, got " + withArticle(jsonTypeName(*name)));
            ok = false;
        } else if (!isIdentifier(name->get<std::string>())) {
            error(pointer + "/name",
                  name->dump() +
                      " is not an identifier (letters, digits and _, not starting with a digit)");
            ok = false;
        } else {
            tool.name = name->get<std::string>();
        }
        for (const auto& [key, value] : object.items()) {
            if (key == "name" || (flatTyped && key == "type")) continue;
            if (key == "description") {
                if (value.is_string())
                    tool.description = value.get<std::string>();
                else {
                    error(pointer + "/description",
                          "expected a string, got " + withArticle(jsonTypeName(value)));
                    ok = false;
                }
            } else if (key == "parameters") {
                std::optional<ValueSchema> parameters =
                    readParameters(value, pointer + "/parameters");
                if (parameters)
                    tool.parameters = std::move(*parameters);
                else
                    ok = false;
            } else {
                unsupportedKeyword(pointer, key);
            }
        }
        if (!object.contains("parameters")) tool.parameters.type = ValueType::Object;
        if (ok && shortestJsonBytes(tool.parameters) > kMaxShortestArguments) {
            error(pointer + "/parameters", "the shortest valid arguments are longer than " +
                                               formatNumber(kMaxShortestArguments) + " bytes");
            ok = false;
        }
        if (!ok) return std::nullopt;
        return tool;
    }

    std::optional<ValueSchema> readParameters(const Json& node, const std::string& pointer) {
        if (node.is_object()) {
            const auto type = node.find("type");
            if (type != node.end() && *type != "object") {
                error(pointer + "/type",
                      "parameters must be of type \"object\", not " + type->dump());
                return std::nullopt;
            }
        }
        // Without "type", an enum or const would type the schema by its values: still not an
        // object, and the call grammar can only write arguments as an object.
        std::optional<ValueSchema> parameters = readValue(node, pointer, 0, ValueType::Object);
        if (parameters && parameters->type != ValueType::Object) {
            error(pointer, std::string("parameters must be of type \"object\", not \"") +
                               valueTypeName(parameters->type) + "\" (inferred from its values)");
            return std::nullopt;
        }
        return parameters;
    }

    // The node's type: written, or inferred from enum/const, or `fallback`.
    std::optional<ValueType> readType(const Json& node, const std::string& pointer,
                                      std::optional<ValueType> fallback) {
        const auto type = node.find("type");
        if (type == node.end()) {
            std::vector<Json> values;
            if (const auto e = node.find("enum"); e != node.end() && e->is_array())
                values.assign(e->begin(), e->end());
            if (const auto c = node.find("const"); c != node.end()) values.push_back(*c);
            std::optional<ValueType> inferred = values.empty() ? fallback : inferType(values);
            if (!inferred) error(pointer, "missing \"type\"");
            return inferred;
        }
        if (type->is_array()) {
            error(pointer + "/type", "type unions are not supported");
            return std::nullopt;
        }
        if (!type->is_string()) {
            error(pointer + "/type",
                  "expected a type name, got " + withArticle(jsonTypeName(*type)));
            return std::nullopt;
        }
        const std::string text = type->get<std::string>();
        for (const TypeName& name : kTypeNames)
            if (name.text == text) return name.type;
        error(pointer + "/type", text == "null" ? "type \"null\" is not supported"
                                                : "unknown type " + quotedJson(text));
        return std::nullopt;
    }

    std::optional<ValueSchema> readValue(const Json& node, const std::string& pointer, int depth,
                                         std::optional<ValueType> fallbackType = {}) {
        if (!node.is_object()) {
            error(pointer, "expected a schema object, got " + withArticle(jsonTypeName(node)));
            return std::nullopt;
        }
        if (depth > kMaxSchemaDepth) {
            error(pointer, "nesting deeper than " + std::to_string(kMaxSchemaDepth) +
                               " levels is not supported");
            return std::nullopt;
        }
        const std::optional<ValueType> type = readType(node, pointer, fallbackType);
        if (!type) return std::nullopt;
        ValueSchema schema;
        schema.type = *type;
        const size_t errorsBefore = m_errors.size();
        for (const auto& [key, value] : node.items()) {
            const std::string at = pointer + "/" + escapeJsonPointerToken(key);
            if (!isKnownKeyword(key)) {
                unsupportedKeyword(pointer, key);
            } else if (key == "type" || key == "required") {
                continue; // read above / after the properties
            } else if (key == "description" || key == "enum" || key == "const" ||
                       key == "default") {
                readCommonKeyword(key, value, at, schema);
            } else if (!appliesTo(key, schema.type)) {
                warning(at, "keyword " + quotedJson(key) + " does not apply to type \"" +
                                valueTypeName(schema.type) + "\" (ignored)");
            } else {
                readTypedKeyword(key, value, at, depth, schema);
            }
        }
        if (schema.type == ValueType::Object) readRequired(node, pointer, schema);
        if (schema.type == ValueType::Array && !schema.items && !node.contains("items"))
            error(pointer, "an array needs \"items\"");
        if (m_errors.size() != errorsBefore) return std::nullopt;
        checkSatisfiable(pointer, schema);
        checkChoices(pointer, schema);
        if (m_errors.size() != errorsBefore) return std::nullopt;
        return schema;
    }

    void readCommonKeyword(std::string_view key, const Json& value, const std::string& at,
                           ValueSchema& schema) {
        if (key == "description") {
            if (value.is_string())
                schema.description = value.get<std::string>();
            else
                error(at, "expected a string, got " + withArticle(jsonTypeName(value)));
        } else if (key == "enum") {
            if (!value.is_array() || value.empty())
                error(at, "expected a non-empty array");
            else
                schema.enumValues.assign(value.begin(), value.end());
        } else if (key == "const") {
            schema.constValue = value;
        } else {
            schema.defaultValue = value;
        }
    }

    void readTypedKeyword(std::string_view key, const Json& value, const std::string& at, int depth,
                          ValueSchema& schema) {
        if (key == "minimum" || key == "maximum" || key == "exclusiveMinimum" ||
            key == "exclusiveMaximum") {
            readBound(key, value, at, schema);
        } else if (key == "items") {
            if (!value.is_object()) {
                error(at, "expected a schema object (tuple arrays are not supported)");
                return;
            }
            if (std::optional<ValueSchema> items = readValue(value, at, depth + 1))
                schema.items = std::make_shared<const ValueSchema>(std::move(*items));
        } else if (key == "properties") {
            readProperties(value, at, depth, schema);
        } else if (key == "additionalProperties") {
            if (value != false)
                warning(at, "only false is supported: undeclared properties are never generated");
        } else {
            const std::optional<int64_t> count = nonNegativeInteger(value);
            if (!count) {
                error(at, "expected a non-negative integer, got " + briefJson(value));
                return;
            }
            if (key == "minLength") schema.minLength = count;
            if (key == "maxLength") schema.maxLength = count;
            if (key == "minItems") schema.minItems = count;
            if (key == "maxItems") schema.maxItems = count;
        }
    }

    // minimum/maximum set the bound; exclusive* as a number (draft 6+) replaces it when stricter,
    // as a boolean (draft 4) makes the written minimum/maximum exclusive.
    void readBound(std::string_view key, const Json& value, const std::string& at,
                   ValueSchema& schema) {
        const bool lower = key == "minimum" || key == "exclusiveMinimum";
        const bool exclusive = key.starts_with("exclusive");
        std::optional<NumericBound>& bound = lower ? schema.minimum : schema.maximum;
        if (exclusive && value.is_boolean()) {
            if (!value.get<bool>()) return;
            if (!bound) {
                warning(at, std::string("true without \"") + (lower ? "minimum" : "maximum") +
                                "\" (ignored)");
                return;
            }
            bound->exclusive = true;
            return;
        }
        if (!value.is_number()) {
            error(at, "expected a number, got " + withArticle(jsonTypeName(value)));
            return;
        }
        const NumericBound read{value.get<double>(), exclusive};
        const bool stricter =
            !bound ||
            (lower ? read.value > bound->value || (read.value == bound->value && exclusive)
                   : read.value < bound->value || (read.value == bound->value && exclusive));
        if (stricter) bound = read;
    }

    void readProperties(const Json& value, const std::string& at, int depth, ValueSchema& schema) {
        if (!value.is_object()) {
            error(at, "expected an object, got " + withArticle(jsonTypeName(value)));
            return;
        }
        for (const auto& [name, node] : value.items()) {
            std::optional<ValueSchema> property =
                readValue(node, at + "/" + escapeJsonPointerToken(name), depth + 1);
            if (property) schema.properties.push_back({name, std::move(*property), false});
        }
    }

    void readRequired(const Json& node, const std::string& pointer, ValueSchema& schema) {
        const auto required = node.find("required");
        if (required == node.end()) return;
        const std::string at = pointer + "/required";
        if (!required->is_array()) {
            error(at, "expected an array of property names, got " +
                          withArticle(jsonTypeName(*required)));
            return;
        }
        for (size_t i = 0; i < required->size(); ++i) {
            const Json& name = (*required)[i];
            const std::string itemAt = at + "/" + std::to_string(i);
            if (!name.is_string()) {
                error(itemAt, "expected a property name, got " + withArticle(jsonTypeName(name)));
                continue;
            }
            const auto property = std::ranges::find(schema.properties, name.get<std::string>(),
                                                    &PropertySchema::name);
            if (property == schema.properties.end()) {
                // A property that failed to parse has its own error; do not add a second one.
                const auto properties = node.find("properties");
                if (properties == node.end() || !properties->is_object() ||
                    !properties->contains(name.get<std::string>()))
                    error(itemAt, name.dump() + " is not a declared property");
            } else if (property->required) {
                warning(itemAt, name.dump() + " is listed twice");
            } else {
                property->required = true;
            }
        }
    }

    void checkSatisfiable(const std::string& pointer, const ValueSchema& s) {
        const auto exceeds = [&](const char* low, std::optional<int64_t> a, const char* high,
                                 std::optional<int64_t> b) {
            if (a && b && *a > *b)
                error(pointer, std::string(low) + " " + std::to_string(*a) + " is greater than " +
                                   high + " " + std::to_string(*b));
        };
        exceeds("minLength", s.minLength, "maxLength", s.maxLength);
        exceeds("minItems", s.minItems, "maxItems", s.maxItems);
        if (!s.allowedValues().empty()) return; // the listed values are what is written
        if (s.type == ValueType::Integer && integerGridRange(s.minimum, s.maximum).empty())
            error(pointer, "no integer of at most " + std::to_string(kMaxIntegerDigits) +
                               " digits satisfies the bounds");
        if (s.type == ValueType::Number && numberGridRange(s.minimum, s.maximum).empty())
            error(pointer, "no number of at most " + std::to_string(kMaxNumberIntegerDigits) +
                               " integer digits and " + std::to_string(kMaxNumberFractionDigits) +
                               " decimals satisfies the bounds");
    }

    // enum, const and default values must themselves satisfy the schema.
    void checkChoices(const std::string& pointer, const ValueSchema& schema) {
        ValueSchema unrestricted = schema;
        unrestricted.enumValues.clear();
        unrestricted.constValue.reset();
        std::vector<ValueProblem> problems;
        const auto check = [&](const ValueSchema& against, const Json& value,
                               const std::string& at) {
            problems.clear();
            validateValue(against, value, at, problems);
            for (ValueProblem& problem : problems)
                error(problem.pointer, std::move(problem.message));
        };
        for (size_t i = 0; i < schema.enumValues.size(); ++i)
            check(unrestricted, schema.enumValues[i], pointer + "/enum/" + std::to_string(i));
        if (schema.constValue) {
            check(unrestricted, *schema.constValue, pointer + "/const");
            if (!schema.enumValues.empty() &&
                std::ranges::find(schema.enumValues, *schema.constValue) == schema.enumValues.end())
                error(pointer + "/const", "the constant is not one of the enum values");
        }
        if (schema.defaultValue) check(schema, *schema.defaultValue, pointer + "/default");
    }

    std::string_view m_sourceText;
    std::string m_prefix;
    std::vector<SchemaIssue> m_errors;
    std::vector<SchemaIssue> m_warnings;
};

} // namespace

const char* valueTypeName(ValueType type) {
    for (const TypeName& name : kTypeNames)
        if (name.type == type) return name.text.data();
    return "?";
}

std::vector<nlohmann::ordered_json> ValueSchema::allowedValues() const {
    if (constValue) return {*constValue};
    return enumValues;
}

const ToolSchema* ToolSet::find(std::string_view name) const {
    const int index = indexOf(name);
    return index < 0 ? nullptr : &tools[static_cast<size_t>(index)];
}

int ToolSet::indexOf(std::string_view name) const {
    for (size_t i = 0; i < tools.size(); ++i)
        if (tools[i].name == name) return static_cast<int>(i);
    return -1;
}

std::string ToolSet::compactJson() const {
    Json array = Json::array();
    for (const ToolSchema& tool : tools)
        array.push_back(tool.definition);
    return array.dump();
}

std::string ToolsParseResult::errorSummary() const {
    std::string summary;
    for (const SchemaIssue& issue : errors)
        summary += (summary.empty() ? "" : "; ") + issue.text();
    return summary;
}

ToolsParseResult parseTools(std::string_view json) {
    JsonDocument document = parseJsonDocument(json);
    if (document.syntaxError) {
        ToolsParseResult result;
        result.errors.push_back(std::move(*document.syntaxError));
        return result;
    }
    return parseToolsValue(document.value, json);
}

ToolsParseResult parseToolsValue(const nlohmann::ordered_json& value, std::string_view sourceText,
                                 std::string_view pointerPrefix) {
    return ToolsReader(sourceText, pointerPrefix).read(value);
}

} // namespace sinkscope
