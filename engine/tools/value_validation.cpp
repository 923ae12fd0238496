#include "tools/value_validation.h"

#include "tools/json_location.h"
#include "tools/schema_messages.h"

#include <algorithm>
#include <cmath>

namespace sinkscope {

using Json = nlohmann::ordered_json;
using namespace schema_messages;

namespace {

void appendError(std::vector<ValueProblem>& errors, const std::string& pointer,
                 std::string message) {
    errors.push_back({pointer, std::move(message)});
}

void validateNumber(const ValueSchema& schema, const Json& value, const std::string& pointer,
                    std::vector<ValueProblem>& errors) {
    const double number = value.get<double>();
    const std::string text = value.dump();
    if (const auto& low = schema.minimum) {
        if (low->exclusive && number <= low->value)
            appendError(errors, pointer,
                        text + " is not greater than the exclusive minimum " +
                            formatNumber(low->value));
        else if (!low->exclusive && number < low->value)
            appendError(errors, pointer,
                        text + " is less than the minimum " + formatNumber(low->value));
    }
    if (const auto& high = schema.maximum) {
        if (high->exclusive && number >= high->value)
            appendError(errors, pointer,
                        text + " is not less than the exclusive maximum " +
                            formatNumber(high->value));
        else if (!high->exclusive && number > high->value)
            appendError(errors, pointer,
                        text + " is greater than the maximum " + formatNumber(high->value));
    }
}

void validateObject(const ValueSchema& schema, const Json& value, const std::string& pointer,
                    std::vector<ValueProblem>& errors) {
    for (const PropertySchema& property : schema.properties)
        if (property.required && !value.contains(property.name))
            appendError(errors, pointer, "missing required property " + quotedJson(property.name));
    for (const auto& [key, member] : value.items()) {
        const std::string at = pointer + "/" + escapeJsonPointerToken(key);
        const auto property = std::ranges::find(schema.properties, key, &PropertySchema::name);
        if (property == schema.properties.end())
            appendError(errors, at, "not a declared property");
        else
            validateValue(property->schema, member, at, errors);
    }
}

bool hasType(const Json& value, ValueType type) {
    switch (type) {
    case ValueType::String:
        return value.is_string();
    case ValueType::Integer:
        return value.is_number_integer() ||
               (value.is_number_float() && std::floor(value.get<double>()) == value.get<double>());
    case ValueType::Number:
        return value.is_number();
    case ValueType::Boolean:
        return value.is_boolean();
    case ValueType::Array:
        return value.is_array();
    case ValueType::Object:
        return value.is_object();
    }
    return false;
}

} // namespace

bool validateValue(const ValueSchema& schema, const Json& value, const std::string& pointer,
                   std::vector<ValueProblem>& errors) {
    const size_t before = errors.size();
    const std::vector<Json> allowed = schema.allowedValues();
    if (!allowed.empty() && std::ranges::find(allowed, value) == allowed.end()) {
        std::string list;
        for (const Json& choice : allowed)
            list += (list.empty() ? "" : ", ") + briefJson(choice);
        appendError(errors, pointer,
                    briefJson(value) +
                        (schema.constValue ? " is not the constant " : " is not one of ") + list);
        return false;
    }
    if (!hasType(value, schema.type)) {
        appendError(errors, pointer,
                    "expected " + withArticle(valueTypeName(schema.type)) + ", got " +
                        withArticle(jsonTypeName(value)));
        return false;
    }
    switch (schema.type) {
    case ValueType::Integer:
    case ValueType::Number:
        validateNumber(schema, value, pointer, errors);
        break;
    case ValueType::String: {
        const int64_t length = utf8Length(value.get_ref<const std::string&>());
        if (schema.minLength && length < *schema.minLength)
            appendError(errors, pointer,
                        briefJson(value) + " has " + std::to_string(length) +
                            " characters, fewer than minLength " +
                            std::to_string(*schema.minLength));
        if (schema.maxLength && length > *schema.maxLength)
            appendError(errors, pointer,
                        briefJson(value) + " has " + std::to_string(length) +
                            " characters, more than maxLength " +
                            std::to_string(*schema.maxLength));
        break;
    }
    case ValueType::Array: {
        const auto count = static_cast<int64_t>(value.size());
        if (schema.minItems && count < *schema.minItems)
            appendError(errors, pointer,
                        std::to_string(count) + " items, fewer than minItems " +
                            std::to_string(*schema.minItems));
        if (schema.maxItems && count > *schema.maxItems)
            appendError(errors, pointer,
                        std::to_string(count) + " items, more than maxItems " +
                            std::to_string(*schema.maxItems));
        if (schema.items)
            for (size_t i = 0; i < value.size(); ++i)
                validateValue(*schema.items, value[i], pointer + "/" + std::to_string(i), errors);
        break;
    }
    case ValueType::Object:
        validateObject(schema, value, pointer, errors);
        break;
    case ValueType::Boolean:
        break;
    }
    return errors.size() == before;
}

bool validateValue(const ValueSchema& schema, const nlohmann::ordered_json& value,
                   const std::string& pointer, std::vector<std::string>& errors) {
    std::vector<ValueProblem> problems;
    const bool ok = validateValue(schema, value, pointer, problems);
    for (const ValueProblem& problem : problems)
        errors.push_back(problem.pointer + ": " + problem.message);
    return ok;
}

int64_t utf8Length(std::string_view text) {
    return std::ranges::count_if(text,
                                 [](char c) { return (static_cast<uint8_t>(c) & 0xC0) != 0x80; });
}
} // namespace sinkscope
