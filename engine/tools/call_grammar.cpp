#include "tools/call_grammar.h"

#include "tools/json_text.h"

#include <algorithm>
#include <numeric>

namespace sinkscope {

namespace {

using Json = nlohmann::ordered_json;

} // namespace

CallGrammar::CallGrammar(const ToolSet& tools, const CallGrammarOptions& options)
    : m_options(options), m_toolCount(static_cast<int>(tools.tools.size())),
      m_blockClosing("\n" + options.terminator), m_blockReopening("\n" + options.reopening) {
    const CallFormat& format = options.format;
    GrammarRule call;
    call.kind = RuleKind::Call;
    std::vector<std::string> headers;
    std::vector<int> tags;
    const std::string separator = format.spaced ? ", " : ",";
    const std::string colon = format.spaced ? ": " : ":";
    for (size_t i = 0; i < tools.tools.size(); ++i) {
        const ToolSchema& tool = tools.tools[i];
        headers.push_back("{\"name\"" + colon + jsonText(tool.name, false) + separator +
                          jsonText(format.argumentsKey, false) + colon);
        tags.push_back(static_cast<int>(i));
        call.toolArguments.push_back(compileObject(tool.parameters.properties));
    }
    call.choice = addChoice(std::move(headers), std::move(tags));
    m_callRule = addRule(std::move(call));
    GrammarRule calls;
    calls.kind = RuleKind::Array;
    calls.item = m_callRule;
    calls.minItems = 1;
    if (format.maxCalls > 0) calls.maxItems = format.maxCalls;
    m_callsRule = addRule(std::move(calls));
}

int CallGrammar::compileValue(const ValueSchema& schema) {
    GrammarRule rule;
    const std::vector<Json> allowed = schema.allowedValues();
    if (!allowed.empty() || schema.type == ValueType::Boolean) {
        std::vector<std::string> texts;
        for (const Json& value : allowed)
            texts.push_back(jsonText(value, m_options.format.spaced));
        if (allowed.empty()) texts = {"false", "true"};
        rule.kind = RuleKind::Choice;
        rule.choice = addChoice(texts, std::vector<int>(texts.size(), -1));
        return addRule(std::move(rule));
    }
    switch (schema.type) {
    case ValueType::String:
        rule.kind = RuleKind::String;
        rule.minChars = schema.minLength.value_or(0);
        rule.maxChars = schema.maxLength.value_or(INT64_MAX);
        break;
    case ValueType::Integer:
        rule.kind = RuleKind::Integer;
        rule.range = integerGridRange(schema.minimum, schema.maximum);
        break;
    case ValueType::Number:
        rule.kind = RuleKind::Number;
        rule.range = numberGridRange(schema.minimum, schema.maximum);
        break;
    case ValueType::Array:
        rule.kind = RuleKind::Array;
        rule.item = compileValue(*schema.items);
        rule.minItems = schema.minItems.value_or(0);
        rule.maxItems = schema.maxItems.value_or(INT64_MAX);
        break;
    case ValueType::Object:
        return compileObject(schema.properties);
    case ValueType::Boolean:
        break; // a choice, above
    }
    return addRule(std::move(rule));
}

int CallGrammar::compileObject(const std::vector<PropertySchema>& properties) {
    GrammarRule rule;
    rule.kind = RuleKind::Object;
    const int count = static_cast<int>(properties.size());
    for (const PropertySchema& property : properties)
        rule.propertyRules.push_back(compileValue(property.schema));
    rule.firstRequiredAt.assign(static_cast<size_t>(count) + 1, count);
    for (int i = count - 1; i >= 0; --i)
        rule.firstRequiredAt[i] = properties[i].required ? i : rule.firstRequiredAt[i + 1];
    // At property i the next key may be any from i up to the first required one: the ones
    // between are optional and skipped.
    rule.keyChoices.assign(2 * (static_cast<size_t>(count) + 1), -1);
    const std::string separator = m_options.format.spaced ? ", " : ",";
    const std::string colon = m_options.format.spaced ? ": " : ":";
    for (int i = 0; i < count; ++i) {
        for (const bool afterFirst : {false, true}) {
            std::vector<std::string> texts;
            std::vector<int> tags;
            for (int j = i; j <= std::min(rule.firstRequiredAt[i], count - 1); ++j) {
                texts.push_back((afterFirst ? separator : "") +
                                jsonText(properties[j].name, false) + colon);
                tags.push_back(j);
            }
            rule.keyChoices[2 * i + (afterFirst ? 1 : 0)] =
                addChoice(std::move(texts), std::move(tags));
        }
    }
    return addRule(std::move(rule));
}

int CallGrammar::addChoice(std::vector<std::string> texts, std::vector<int> tags) {
    std::vector<size_t> order(texts.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return texts[a] < texts[b]; });
    LiteralChoice choice;
    for (const size_t i : order) {
        if (!choice.texts.empty() && choice.texts.back() == texts[i]) continue; // enum [1, 1]
        choice.texts.push_back(texts[i]);
        choice.tags.push_back(tags[i]);
    }
    m_choices.push_back(std::move(choice));
    return static_cast<int>(m_choices.size()) - 1;
}

int CallGrammar::addRule(GrammarRule rule) {
    m_rules.push_back(std::move(rule));
    return static_cast<int>(m_rules.size()) - 1;
}

} // namespace sinkscope
