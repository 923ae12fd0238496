// Tool schemas, presets and calls: every rule of the schema subset with its exact message and
// place, the warnings for what is left out, the call validator, and every shipped preset.
#include "tools/json_location.h"
#include "tools/tool_calls.h"
#include "tools/tool_preset.h"
#include "tools/tool_schema.h"

#include <QDir>
#include <QFile>
#include <QtTest>

using namespace sinkscope;

namespace {

// A tool "t" whose only property "x" has the schema `x`.
QByteArray toolWithProperty(const char* x) {
    return QByteArray(R"([{"name":"t","parameters":{"type":"object","properties":{"x":)") + x +
           "}}}]";
}

QStringList errorTexts(const std::vector<SchemaIssue>& issues) {
    QStringList texts;
    for (const SchemaIssue& issue : issues)
        texts << QString::fromStdString(issue.text());
    return texts;
}

constexpr const char* kSmartHome = R"([
  {"name": "set_light", "parameters": {"type": "object", "properties": {
      "room": {"type": "string", "minLength": 2},
      "on": {"type": "boolean"},
      "brightness": {"type": "integer", "minimum": 0, "maximum": 100}},
    "required": ["room", "on"]}},
  {"name": "set_thermostat", "parameters": {"type": "object", "properties": {
      "temperature": {"type": "number", "exclusiveMinimum": 5},
      "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
      "rooms": {"type": "array", "items": {"type": "string"}, "maxItems": 2}},
    "required": ["temperature"]}}
])";

QString presetDirectory() {
    return QFINDTESTDATA("../resources/presets");
}

} // namespace

class TestToolSchema : public QObject {
    Q_OBJECT

private slots:
    void rejectsWithExactMessage_data() {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("message");
        QTest::newRow("not an array")
            << QByteArray(R"({"name":"a"})") << "the tools must be a JSON array, not an object";
        QTest::newRow("not a tool")
            << QByteArray("[1]") << "/0: expected a tool object, got an integer";
        QTest::newRow("issue example")
            << QByteArray(
                   R"([{"name":"a"},{"name":"b"},{"name":"set","parameters":{"type":"object","properties":{"brightness":{"type":"int"}}}}])")
            << R"(/2/parameters/properties/brightness/type: unknown type "int")";
        QTest::newRow("duplicate name") << QByteArray(R"([{"name":"a"},{"name":"a"}])")
                                        << R"(/1/name: duplicate tool name "a" (first at /0))";
        QTest::newRow("duplicate wrapped")
            << QByteArray(R"([{"name":"a"},{"type":"function","function":{"name":"a"}}])")
            << R"(/1/function/name: duplicate tool name "a" (first at /0))";
        QTest::newRow("not an identifier")
            << QByteArray(R"([{"name":"set lights"}])")
            << R"(/0/name: "set lights" is not an identifier (letters, digits and _, not starting with a digit))";
        QTest::newRow("leading digit")
            << QByteArray(R"([{"name":"2fa"}])")
            << R"(/0/name: "2fa" is not an identifier (letters, digits and _, not starting with a digit))";
        QTest::newRow("missing name")
            << QByteArray(R"([{"description":"x"}])") << R"(/0: missing "name")";
        QTest::newRow("name not a string")
            << QByteArray(R"([{"name":3}])") << "/0/name: expected a string, got an integer";
        QTest::newRow("description not a string")
            << QByteArray(R"([{"name":"a","description":5}])")
            << "/0/description: expected a string, got an integer";
        QTest::newRow("wrapper type")
            << QByteArray(R"([{"type":"tool","function":{"name":"a"}}])")
            << R"(/0/type: unsupported tool type "tool" (only "function"))";
        QTest::newRow("wrapper function") << QByteArray(R"([{"type":"function","function":[]}])")
                                          << "/0/function: expected an object, got an array";
        QTest::newRow("parameters not object type")
            << QByteArray(R"([{"name":"a","parameters":{"type":"string"}}])")
            << R"(/0/parameters/type: parameters must be of type "object", not "string")";
        QTest::newRow("parameters typed by an enum (fuzz_call_grammar)")
            << QByteArray(R"([{"name":"a","parameters":{"enum":["positive","negative"]}}])")
            << R"(/0/parameters: parameters must be of type "object", not "string" (inferred from its values))";
        QTest::newRow("parameters typed by a const")
            << QByteArray(R"([{"name":"a","parameters":{"const":3}}])")
            << R"(/0/parameters: parameters must be of type "object", not "integer" (inferred from its values))";
        QTest::newRow("parameters not a schema")
            << QByteArray(R"([{"name":"a","parameters":[]}])")
            << "/0/parameters: expected a schema object, got an array";
        QTest::newRow("missing type") << toolWithProperty(R"({"description":"d"})")
                                      << R"(/0/parameters/properties/x: missing "type")";
        QTest::newRow("mixed enum, no type") << toolWithProperty(R"({"enum":["a",1]})")
                                             << R"(/0/parameters/properties/x: missing "type")";
        QTest::newRow("type union")
            << toolWithProperty(R"({"type":["string","null"]})")
            << "/0/parameters/properties/x/type: type unions are not supported";
        QTest::newRow("type null")
            << toolWithProperty(R"({"type":"null"})")
            << R"(/0/parameters/properties/x/type: type "null" is not supported)";
        QTest::newRow("type not a name")
            << toolWithProperty(R"({"type":4})")
            << "/0/parameters/properties/x/type: expected a type name, got an integer";
        QTest::newRow("array without items")
            << toolWithProperty(R"({"type":"array"})")
            << R"(/0/parameters/properties/x: an array needs "items")";
        QTest::newRow("tuple items")
            << toolWithProperty(R"({"type":"array","items":[{"type":"string"}]})")
            << "/0/parameters/properties/x/items: expected a schema object (tuple arrays are not "
               "supported)";
        QTest::newRow("bad item type")
            << toolWithProperty(R"({"type":"array","items":{"type":"float"}})")
            << R"(/0/parameters/properties/x/items/type: unknown type "float")";
        QTest::newRow("required undeclared")
            << QByteArray(
                   R"([{"name":"t","parameters":{"type":"object","properties":{"x":{"type":"string"}},"required":["y"]}}])")
            << R"(/0/parameters/required/0: "y" is not a declared property)";
        QTest::newRow("required not array")
            << QByteArray(
                   R"([{"name":"t","parameters":{"type":"object","properties":{},"required":"x"}}])")
            << "/0/parameters/required: expected an array of property names, got a string";
        QTest::newRow("properties not object")
            << QByteArray(R"([{"name":"t","parameters":{"type":"object","properties":[]}}])")
            << "/0/parameters/properties: expected an object, got an array";
        QTest::newRow("lengths crossed")
            << toolWithProperty(R"({"type":"string","minLength":5,"maxLength":3})")
            << "/0/parameters/properties/x: minLength 5 is greater than maxLength 3";
        QTest::newRow("items crossed")
            << toolWithProperty(
                   R"({"type":"array","items":{"type":"string"},"minItems":4,"maxItems":1})")
            << "/0/parameters/properties/x: minItems 4 is greater than maxItems 1";
        QTest::newRow("negative length")
            << toolWithProperty(R"({"type":"string","minLength":-1})")
            << "/0/parameters/properties/x/minLength: expected a non-negative integer, got -1";
        QTest::newRow("fractional length")
            << toolWithProperty(R"({"type":"string","maxLength":2.5})")
            << "/0/parameters/properties/x/maxLength: expected a non-negative integer, got 2.5";
        QTest::newRow("minimum not a number")
            << toolWithProperty(R"({"type":"number","minimum":"1"})")
            << "/0/parameters/properties/x/minimum: expected a number, got a string";
        QTest::newRow("no integer in bounds")
            << toolWithProperty(R"({"type":"integer","minimum":1.5,"maximum":1.9})")
            << "/0/parameters/properties/x: no integer of at most 15 digits satisfies the bounds";
        QTest::newRow("exclusive bounds meet")
            << toolWithProperty(R"({"type":"number","exclusiveMinimum":1,"exclusiveMaximum":1})")
            << "/0/parameters/properties/x: no number of at most 12 integer digits and 6 decimals "
               "satisfies the bounds";
        QTest::newRow("draft 4 exclusive")
            << toolWithProperty(
                   R"({"type":"integer","minimum":3,"maximum":3,"exclusiveMaximum":true})")
            << "/0/parameters/properties/x: no integer of at most 15 digits satisfies the bounds";
        QTest::newRow("empty enum")
            << toolWithProperty(R"({"type":"string","enum":[]})")
            << "/0/parameters/properties/x/enum: expected a non-empty array";
        QTest::newRow("enum of wrong type")
            << toolWithProperty(R"({"type":"string","enum":["a",3]})")
            << "/0/parameters/properties/x/enum/1: expected a string, got an integer";
        QTest::newRow("enum out of bounds")
            << toolWithProperty(R"({"type":"integer","minimum":0,"enum":[1,-2]})")
            << "/0/parameters/properties/x/enum/1: -2 is less than the minimum 0";
        QTest::newRow("const above maximum")
            << toolWithProperty(R"({"type":"integer","maximum":5,"const":7})")
            << "/0/parameters/properties/x/const: 7 is greater than the maximum 5";
        QTest::newRow("const outside enum")
            << toolWithProperty(R"({"type":"string","enum":["a"],"const":"b"})")
            << "/0/parameters/properties/x/const: the constant is not one of the enum values";
        QTest::newRow("default of wrong type")
            << toolWithProperty(R"({"type":"boolean","default":"yes"})")
            << "/0/parameters/properties/x/default: expected a boolean, got a string";
        QTest::newRow("default too long")
            << toolWithProperty(R"({"type":"string","maxLength":2,"default":"abc"})")
            << R"(/0/parameters/properties/x/default: "abc" has 3 characters, more than maxLength 2)";
        QTest::newRow("escaped pointer")
            << QByteArray(
                   R"([{"name":"t","parameters":{"type":"object","properties":{"a/b~c":{"type":"x"}}}}])")
            << R"(/0/parameters/properties/a~1b~0c/type: unknown type "x")";
        QTest::newRow("nested too deep")
            << toolWithProperty(
                   R"({"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"object","properties":{"c":{"type":"object","properties":{"d":{"type":"object","properties":{"e":{"type":"object","properties":{"f":{"type":"string"}}}}}}}}}}}}})")
            << "/0/parameters/properties/x/properties/a/properties/b/properties/c/properties/d/"
               "properties/e/properties/f: nesting deeper than 6 levels is not supported";
        QTest::newRow("arguments too long")
            << toolWithProperty(
                   R"({"type":"array","items":{"type":"array","items":{"type":"string","minLength":100},"minItems":100},"minItems":100})")
                   .replace(R"(}}}])", R"(},"required":["x"]}}])")
            << "/0/parameters: the shortest valid arguments are longer than 65536 bytes";
        QTest::newRow("invalid JSON")
            << QByteArray(R"([{"name":"a",}])")
            << "invalid JSON at line 1, column 14: syntax error while parsing object key - "
               "unexpected '}'; expected string literal";
        QTest::newRow("document too deep")
            << QByteArray(70, '[')
            << "invalid JSON at line 1, column 65: JSON nested deeper than 64 levels";
    }
    void rejectsWithExactMessage() {
        QFETCH(QByteArray, json);
        QFETCH(QString, message);
        const ToolsParseResult result = parseTools(json.toStdString());
        QVERIFY(!result.ok());
        QVERIFY(!result.tools);
        QCOMPARE(errorTexts(result.errors), QStringList{message});
    }

    void collectsEveryError() {
        const ToolsParseResult result = parseTools(
            R"([{"name":"a b"},{"name":"ok","parameters":{"type":"object","properties":{"n":{"type":"int"}}}},7])");
        QCOMPARE(
            errorTexts(result.errors),
            (QStringList{
                R"(/0/name: "a b" is not an identifier (letters, digits and _, not starting with a digit))",
                R"(/1/parameters/properties/n/type: unknown type "int")",
                "/2: expected a tool object, got an integer"}));
        QCOMPARE(result.errorSummary(), errorTexts(result.errors).join("; ").toStdString());
    }

    // Each issue is placed where an editor should mark it: the value its pointer names, or the
    // nearest enclosing one for a missing key.
    void placesIssuesInTheText_data() {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<int>("line");
        QTest::addColumn<int>("column");
        QTest::addColumn<int>("offset");
        // nlohmann reads the whole token that breaks the syntax: the mark is its last byte
        QTest::newRow("syntax") << QByteArray("[\n  {\"name\": \"a\"\n  \"x\"]") << 3 << 5 << 21;
        QTest::newRow("unknown type")
            << QByteArray("[\n {\"name\": \"t\", \"parameters\": {\"properties\": {\n   \"x\": "
                          "{\"type\": \"int\"}}}}\n]")
            << 3 << 18 << 65;
        QTest::newRow("missing name")
            << QByteArray("[\n  {\"name\": \"a\"},\n  {\"description\": \"d\"}\n]") << 3 << 3 << 21;
        QTest::newRow("root") << QByteArray("  {}") << 1 << 3 << 2;
    }
    void placesIssuesInTheText() {
        QFETCH(QByteArray, json);
        QFETCH(int, line);
        QFETCH(int, column);
        QFETCH(int, offset);
        const ToolsParseResult result = parseTools(json.toStdString());
        QCOMPARE(result.errors.size(), size_t(1));
        QCOMPARE(result.errors[0].line, line);
        QCOMPARE(result.errors[0].column, column);
        QCOMPARE(int(result.errors[0].offset), offset);
    }

    void acceptsTheSupportedForms() {
        const ToolsParseResult result = parseTools(R"([
            {"type": "function", "function": {"name": "wrapped", "description": "w",
              "parameters": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}}},
            {"type": "function", "name": "flat"},
            {"name": "bare", "parameters": {"properties": {
              "level": {"enum": [1, 2, 3]},
              "ratio": {"enum": [1, 2.5]},
              "mode": {"const": "auto"},
              "when": {"type": "integer", "minimum": 0, "exclusiveMinimum": true},
              "limit": {"type": "number", "minimum": 1, "exclusiveMinimum": 4},
              "tags": {"type": "array", "items": {"type": "string", "maxLength": 8}, "minItems": 1},
              "place": {"type": "object", "properties": {"lat": {"type": "number"}}, "required": ["lat"], "additionalProperties": false}}}}
        ])");
        QVERIFY2(result.ok(), result.errorSummary().c_str());
        QVERIFY(result.warnings.empty());
        const ToolSet& set = *result.tools;
        QCOMPARE(set.tools.size(), size_t(3));
        QCOMPARE(set.indexOf("flat"), 1);
        QCOMPARE(set.indexOf("nope"), -1);
        const ToolSchema& wrapped = *set.find("wrapped");
        QCOMPARE(wrapped.description, std::string("w"));
        QVERIFY(wrapped.parameters.properties[0].required);
        QCOMPARE(set.find("flat")->parameters.type, ValueType::Object);
        QVERIFY(set.find("flat")->parameters.properties.empty());
        // the block pins the definitions unwrapped, keys in their written order
        QVERIFY(set.compactJson().starts_with(
            R"([{"name":"wrapped","description":"w","parameters":{"type":"object",)"));
        QVERIFY(set.compactJson().find(R"({"name":"flat"})") != std::string::npos);
        const std::vector<PropertySchema>& p = set.find("bare")->parameters.properties;
        QCOMPARE(p[0].schema.type, ValueType::Integer); // inferred from the enum
        QCOMPARE(p[1].schema.type, ValueType::Number);
        QCOMPARE(p[2].schema.type, ValueType::String);
        QCOMPARE(p[2].schema.allowedValues().size(), size_t(1));
        QVERIFY(p[3].schema.minimum->exclusive);   // draft 4's boolean
        QCOMPARE(p[4].schema.minimum->value, 4.0); // the stricter of minimum and exclusiveMinimum
        QVERIFY(p[4].schema.minimum->exclusive);
        QCOMPARE(p[5].schema.items->maxLength.value(), int64_t(8));
        QVERIFY(p[6].schema.properties[0].required);
    }

    void warnsAboutWhatItLeavesOut() {
        const ToolsParseResult result =
            parseTools(R"([{"name":"t","strict":true,"parameters":{"type":"object",
            "properties":{"x":{"type":"string","pattern":"^a"},"n":{"type":"integer","minLength":2},
                          "o":{"type":"object","additionalProperties":true},"e":{"type":"boolean","exclusiveMinimum":true}},
            "required":["x","x"]}}])");
        QVERIFY2(result.ok(), result.errorSummary().c_str());
        QCOMPARE(
            errorTexts(result.warnings),
            (QStringList{
                R"(/0/strict: unsupported keyword "strict" (ignored))",
                R"(/0/parameters/properties/x/pattern: unsupported keyword "pattern" (ignored))",
                R"(/0/parameters/properties/n/minLength: keyword "minLength" does not apply to type "integer" (ignored))",
                "/0/parameters/properties/o/additionalProperties: only false is supported: "
                "undeclared properties are never generated",
                R"(/0/parameters/properties/e/exclusiveMinimum: keyword "exclusiveMinimum" does not apply to type "boolean" (ignored))",
                R"(/0/parameters/required/1: "x" is listed twice)"}));
    }

    void validatesCalls_data() {
        QTest::addColumn<QByteArray>("calls");
        QTest::addColumn<QStringList>("errors");
        QTest::addColumn<int>("parsedCalls");
        QTest::newRow("valid")
            << QByteArray(
                   R"([{"name":"set_light","arguments":{"room":"hall","on":true,"brightness":40}}])")
            << QStringList{} << 1;
        QTest::newRow("two calls, key order free")
            << QByteArray(
                   R"([{"name":"set_thermostat","arguments":{"unit":"celsius","temperature":21.5}},{"arguments":{"on":false,"room":"hall"},"name":"set_light"}])")
            << QStringList{} << 2;
        QTest::newRow("integral float is an integer")
            << QByteArray(
                   R"([{"name":"set_light","arguments":{"room":"hall","on":true,"brightness":40.0}}])")
            << QStringList{} << 1;
        QTest::newRow("undeclared tool")
            << QByteArray(R"([{"name":"open_window","arguments":{}}])")
            << QStringList{R"(/0/name: "open_window" is not a declared tool)"} << 1;
        QTest::newRow("missing required")
            << QByteArray(R"([{"name":"set_light","arguments":{"room":"hall"}}])")
            << QStringList{R"(/0/arguments: missing required property "on")"} << 1;
        QTest::newRow("wrong type")
            << QByteArray(R"([{"name":"set_light","arguments":{"room":1,"on":true}}])")
            << QStringList{"/0/arguments/room: expected a string, got an integer"} << 1;
        QTest::newRow("fraction for integer")
            << QByteArray(
                   R"([{"name":"set_light","arguments":{"room":"hall","on":true,"brightness":2.5}}])")
            << QStringList{"/0/arguments/brightness: expected an integer, got a number"} << 1;
        QTest::newRow("undeclared property")
            << QByteArray(R"([{"name":"set_light","arguments":{"room":"hall","on":true,"x":1}}])")
            << QStringList{"/0/arguments/x: not a declared property"} << 1;
        QTest::newRow("above maximum")
            << QByteArray(
                   R"([{"name":"set_light","arguments":{"room":"hall","on":true,"brightness":120}}])")
            << QStringList{"/0/arguments/brightness: 120 is greater than the maximum 100"} << 1;
        QTest::newRow("exclusive minimum")
            << QByteArray(R"([{"name":"set_thermostat","arguments":{"temperature":5}}])")
            << QStringList{"/0/arguments/temperature: 5 is not greater than the exclusive minimum "
                           "5"}
            << 1;
        QTest::newRow("not in enum")
            << QByteArray(
                   R"([{"name":"set_thermostat","arguments":{"temperature":20,"unit":"kelvin"}}])")
            << QStringList{R"(/0/arguments/unit: "kelvin" is not one of "celsius", "fahrenheit")"}
            << 1;
        QTest::newRow("too short")
            << QByteArray(R"([{"name":"set_light","arguments":{"room":"é","on":true}}])")
            << QStringList{R"(/0/arguments/room: "é" has 1 characters, fewer than minLength 2)"}
            << 1;
        QTest::newRow("too many items")
            << QByteArray(
                   R"([{"name":"set_thermostat","arguments":{"temperature":20,"rooms":["a","b",3]}}])")
            << QStringList{"/0/arguments/rooms: 3 items, more than maxItems 2",
                           "/0/arguments/rooms/2: expected a string, got an integer"}
            << 1;
        QTest::newRow("not an array")
            << QByteArray(R"({"name":"set_light","arguments":{}})")
            << QStringList{"expected a JSON array of calls, got object"} << 0;
        QTest::newRow("empty") << QByteArray("[]") << QStringList{"the array of calls is empty"}
                               << 0;
        QTest::newRow("no arguments") << QByteArray(R"([{"name":"set_light"}])")
                                      << QStringList{R"(/0: missing "arguments")"} << 0;
        QTest::newRow("extra member")
            << QByteArray(R"([{"name":"set_light","arguments":{"room":"hall","on":true},"id":7}])")
            << QStringList{"/0/id: not part of a call"} << 1;
        QTest::newRow("invalid JSON")
            << QByteArray(R"([{"name":"set_light",)")
            << QStringList{"invalid JSON at line 1, column 22: syntax error while parsing object "
                           "key - unexpected end of input; expected string literal"}
            << 0;
    }
    void validatesCalls() {
        QFETCH(QByteArray, calls);
        QFETCH(QStringList, errors);
        QFETCH(int, parsedCalls);
        const ToolSet tools = *parseTools(kSmartHome).tools;
        const CallsParseResult result = parseCalls(calls.toStdString(), tools);
        QStringList texts;
        for (const std::string& error : result.errors)
            texts << QString::fromStdString(error);
        QCOMPARE(texts, errors);
        QCOMPARE(int(result.calls.size()), parsedCalls);
    }

    void callsRoundTrip() {
        const ToolSet tools = *parseTools(kSmartHome).tools;
        const std::vector<FunctionCall> calls = {
            {"set_light", {{"room", "hall"}, {"on", true}}},
            {"set_thermostat", {{"temperature", 19.5}}},
        };
        const std::string text = callsJson(calls);
        QCOMPARE(
            text,
            std::string(
                R"([{"name":"set_light","arguments":{"room":"hall","on":true}},{"name":"set_thermostat","arguments":{"temperature":19.5}}])"));
        const CallsParseResult parsed = parseCalls(text, tools);
        QVERIFY(parsed.ok());
        QCOMPARE(parsed.calls[1].arguments, calls[1].arguments);
    }

    void responseHasNeedlesShape() {
        ToolResponse response;
        response.type = ResponseType::Call;
        response.functionCalls = {{"set_light", {{"room", "hall"}, {"on", true}}}};
        response.confidence = 0.5;
        response.attribution = {
            CallAttribution{{{"set_light", 0.75}, {"lock_door", 0.05}}, 0.2, 9}};
        const nlohmann::ordered_json json = response.toJson();
        QCOMPARE(
            json.dump(),
            std::string(
                R"({"type":"call","function_calls":[{"name":"set_light","arguments":{"room":"hall","on":true}}],"text":"","confidence":0.5,"prefill_tokens_per_s":0.0,"decode_tokens_per_s":0.0,"error":null,"attribution":[{"set_light":0.75,"lock_door":0.05,"other":0.2}]})"));
        response.error = "stopped";
        QCOMPARE(response.toJson()["error"], nlohmann::ordered_json("stopped"));
    }

    void locatesJsonPointers() {
        const std::string json = "{\n \"a/b\": [10, {\"c\": \"x,]}\"}, true],\n \"d\\\"e\": 2\n}";
        QCOMPARE(locateJsonPointer(json, "").value(), size_t(0));
        QCOMPARE(locateJsonPointer(json, "/a~1b").value(), json.find('['));
        QCOMPARE(locateJsonPointer(json, "/a~1b/0").value(), json.find("10"));
        QCOMPARE(locateJsonPointer(json, "/a~1b/1/c").value(), json.find("\"x"));
        QCOMPARE(locateJsonPointer(json, "/a~1b/2").value(), json.find("true"));
        QCOMPARE(locateJsonPointer(json, "/d\"e").value(), json.find('2'));
        QVERIFY(!locateJsonPointer(json, "/a~1b/3"));
        QVERIFY(!locateJsonPointer(json, "/a~1b/01"));
        QVERIFY(!locateJsonPointer(json, "/zz"));
        QVERIFY(!locateJsonPointer(json, "a"));
        QVERIFY(!locateJsonPointer(json, "/a~2b"));
        QCOMPARE(textPosition(json, json.find('2')).line, 3);
        QCOMPARE(textPosition(json, json.find('2')).column, 10);
        QCOMPARE(escapeJsonPointerToken("a/b~c"), std::string("a~1b~0c"));
        QCOMPARE(splitJsonPointer("/a~1b~0c/").value(), (std::vector<std::string>{"a/b~c", ""}));
    }

    void everyPresetParsesAndValidates() {
        const QDir dir(presetDirectory());
        const QStringList files = dir.entryList({"*.json"}, QDir::Files, QDir::Name);
        QVERIFY2(files.size() >= 13,
                 qPrintable(QString("%1 presets in %2").arg(files.size()).arg(dir.path())));
        QStringList names;
        int textOnly = 0;
        for (const QString& name : files) {
            QFile file(dir.filePath(name));
            QVERIFY(file.open(QIODevice::ReadOnly));
            const PresetParseResult result = parsePreset(file.readAll().toStdString());
            QVERIFY2(result.ok(), qPrintable(name + ": " + errorTexts(result.errors).join("; ")));
            QVERIFY2(result.warnings.empty(),
                     qPrintable(name + ": " + errorTexts(result.warnings).join("; ")));
            const ToolPreset& preset = *result.preset;
            QVERIFY2(!preset.name.empty() && !preset.query.empty() && !preset.tools.tools.empty(),
                     qPrintable(name));
            QVERIFY(!names.contains(QString::fromStdString(preset.name)));
            names << QString::fromStdString(preset.name);
            textOnly += preset.expectCall ? 0 : 1;
            for (const auto& [tool, result] : preset.results)
                QVERIFY(preset.tools.find(tool));
        }
        QCOMPARE(textOnly, 1); // the off-topic preset
    }

    void presetErrorsPointIntoTheFile() {
        const PresetParseResult bad = parsePreset(
            R"({"name":"x","tools":[{"name":"a","parameters":{"type":"object","properties":{"b":{"type":"int"}}}}],"results":{"zz":{}}})");
        QCOMPARE(errorTexts(bad.errors),
                 QStringList{R"(/tools/0/parameters/properties/b/type: unknown type "int")"});
        const PresetParseResult unknownResult =
            parsePreset(R"({"name":"x","tools":[{"name":"a"}],"results":{"zz":{}},"extra":1})");
        QCOMPARE(errorTexts(unknownResult.errors),
                 QStringList{R"(/results/zz: "zz" is not a declared tool)"});
        QCOMPARE(errorTexts(unknownResult.warnings),
                 QStringList{R"(/extra: unsupported keyword "extra" (ignored))"});
        QCOMPARE(errorTexts(parsePreset(R"({"tools":[]})").errors),
                 QStringList{R"(missing "name")"});
        QCOMPARE(errorTexts(parsePreset(R"({"name":"x","expect_call":1})").errors),
                 (QStringList{"/expect_call: expected true or false", R"(missing "tools")"}));
    }
};

QTEST_GUILESS_MAIN(TestToolSchema)
#include "test_tool_schema.moc"
