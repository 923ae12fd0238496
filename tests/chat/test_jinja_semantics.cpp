// The Jinja interpreter's Python semantics, row by row: literals, operators, undefined and none,
// str() of values, subscripts and slices, every filter, test and method chat templates use,
// statements with jinja2's scoping, and trim_blocks / lstrip_blocks whitespace. Each expected
// text is what Python's jinja2 3.1.6 renders with Hugging Face's settings (trim_blocks,
// lstrip_blocks, loopcontrols, the immutable sandbox, HF's tojson, the reference clock).
#include "jinja_test_support.h"

#include <QtTest>

using namespace sinkscope;
using namespace sinkscope::test;

class TestJinjaSemantics : public QObject {
    Q_OBJECT

private slots:
    void semantics_data();
    void semantics();
};

void TestJinjaSemantics::semantics_data() {
    QTest::addColumn<QByteArray>("source");
    QTest::addColumn<QByteArray>("context");
    QTest::addColumn<QByteArray>("expected");
    QTest::newRow("string escapes")
        << QByteArray("{{ \"a\\tb|\\x41|\\u00e9|\\U0001F600|\\\\|\\q|\\'\" }}") << QByteArray("{}")
        << QByteArray("a\tb|A|é|😀|\\|\\q|'");
    QTest::newRow("adjacent strings")
        << QByteArray("{{ \"a\" \"b\" 'c' }}") << QByteArray("{}") << QByteArray("abc");
    QTest::newRow("numbers")
        << QByteArray("{{ 1 }} {{ -1 }} {{ 1.5e3 }} {{ 1_000 }} {{ 0x1f }} {{ 0b101 }} {{ 0o17 }}")
        << QByteArray("{}") << QByteArray("1 -1 1500.0 1000 31 5 15");
    QTest::newRow("float repr")
        << QByteArray("{{ 1.0 }} {{ 1e16 }} {{ 1e15 }} {{ 123456789012345678.0 }} {{ 0.0001 }} {{ "
                      "0.00001 }} {{ -0.0 }} {{ 0.1 + 0.2 }} {{ 1/3 }} {{ 1e300 * 10 }}")
        << QByteArray("{}")
        << QByteArray("1.0 1e+16 1000000000000000.0 1.2345678901234568e+17 0.0001 1e-05 -0.0 "
                      "0.30000000000000004 0.3333333333333333 1e+301");
    QTest::newRow("constants")
        << QByteArray("{{ true }} {{ True }} {{ none }} {{ None }} {{ false }} {{ False }}")
        << QByteArray("{}") << QByteArray("True True None None False False");
    QTest::newRow("str of containers")
        << QByteArray("{{ [1, \"a\", none, true, 1.0] }} {{ (1,) }} {{ () }} {{ (1, \"b\") }} {{ "
                      "{\"a\": 1, \"b\": [none]} }} {{ {} }} {{ [[]] }}")
        << QByteArray("{}")
        << QByteArray("[1, 'a', None, True, 1.0] (1,) () (1, 'b') {'a': 1, 'b': [None]} {} [[]]");
    QTest::newRow("repr of strings")
        << QByteArray("{{ [\"it's\", 'say \"hi\"', 'both \\' \"', \"back\\\\slash\", \"nl\\n\", "
                      "\"\\x01\", \"é\", \"\\xa0\"] }}")
        << QByteArray("{}")
        << QByteArray("[\"it's\", 'say \"hi\"', 'both \\' \"', 'back\\\\slash', 'nl\\n', '\\x01', "
                      "'é', '\\xa0']");
    QTest::newRow("tuple output") << QByteArray("{{ 1, 2 }} {{ (1) }}") << QByteArray("{}")
                                  << QByteArray("(1, 2) 1");
    QTest::newRow("floor division and modulo")
        << QByteArray("{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % -3 }} {{ -7 % 3 }} {{ 7.5 // 2 }} {{ -7.5 "
                      "// 2 }} {{ 7.5 % 2 }} {{ -7.5 % 2 }}")
        << QByteArray("{}") << QByteArray("3 -4 -2 2 3.0 -4.0 1.5 0.5");
    QTest::newRow("division and power")
        << QByteArray("{{ 7 / 2 }} {{ 4 / 2 }} {{ 2 ** 10 }} {{ 2 ** -1 }} {{ 2 ** 0.5 }} {{ 2 ** "
                      "3 ** 2 }} {{ -2 ** 2 }}")
        << QByteArray("{}") << QByteArray("3.5 2.0 1024 0.5 1.4142135623730951 64 4");
    QTest::newRow("precedence") << QByteArray(
                                       "{{ 1 + 2 * 3 - 4 / 2 }} {{ (1 + 2) * 3 }} {{ 10 - 2 - 3 }} "
                                       "{{ 2 * 3 % 4 }} {{ -(2) }} {{ +3 }} {{ -1|abs }}")
                                << QByteArray("{}") << QByteArray("5.0 9 5 2 -2 3 1");
    QTest::newRow("sequence arithmetic")
        << QByteArray("{{ True + 1 }} {{ \"ab\" * 3 }} {{ 3 * \"ab\" }} {{ [1] * 3 }} [{{ \"ab\" * "
                      "0 }}] [{{ \"ab\" * -1 }}] {{ [1, 2] + [3] }} {{ (1,) + (2,) }}")
        << QByteArray("{}") << QByteArray("2 ababab ababab [1, 1, 1] [] [] [1, 2, 3] (1, 2)");
    QTest::newRow("tilde concatenation") << QByteArray("{{ \"a\" ~ 1 ~ none ~ [1] ~ x ~ true }}")
                                         << QByteArray("{}") << QByteArray("a1None[1]True");
    QTest::newRow("comparisons")
        << QByteArray("{{ 1 < 2 < 3 }} {{ 1 < 3 < 2 }} {{ 1 == 1.0 }} {{ 1 == true }} {{ \"a\" < "
                      "\"b\" }} {{ [1, 2] < [1, 3] }} {{ (1,) == [1] }} {{ none == none }} {{ "
                      "{\"a\": 1} == {\"a\": 1} }} {{ 2 >= 2 }} {{ 2 != 3 }}")
        << QByteArray("{}")
        << QByteArray("True False True True True True False True True True True");
    QTest::newRow("in and not in")
        << QByteArray("{{ \"a\" in \"cab\" }} {{ \"z\" not in \"cab\" }} {{ 1 in [1, 2] }} {{ "
                      "\"k\" in {\"k\": 1} }} {{ 3 not in [1] }} {{ \"\" in \"x\" }}")
        << QByteArray("{}") << QByteArray("True True True True True True");
    QTest::newRow("and or not return operands")
        << QByteArray("{{ 1 and 2 }} {{ 0 and 2 }} {{ 0 or \"x\" }} {{ \"\" or [] }} {{ not 0 }} "
                      "{{ not [1] }} {{ none or 5 }} {{ [] and 1 }}")
        << QByteArray("{}") << QByteArray("2 0 x [] True False 5 []");
    QTest::newRow("conditional expression")
        << QByteArray("{{ \"y\" if true else \"n\" }} {{ \"y\" if false else \"n\" }} [{{ \"y\" if "
                      "false }}] {{ 1 if 0 else 2 if 0 else 3 }}")
        << QByteArray("{}") << QByteArray("y n [] 3");
    QTest::newRow("undefined renders empty")
        << QByteArray("[{{ x }}] {{ x is defined }} {{ x is undefined }} {{ not x }} {{ x == x }} "
                      "{{ x is none }} {{ x in [1] }} {{ 1 in x }}")
        << QByteArray("{}") << QByteArray("[] False True True True False False False");
    QTest::newRow("undefined in filters")
        << QByteArray("{{ x|default(\"d\") }} {{ x|d(\"d\") }} [{{ x|string }}] [{{ x|upper }}] {{ "
                      "x|list }} [{{ x|join(\",\") }}] {{ x|first is defined }} {{ x|length }} {{ "
                      "x|count }} {{ x|items|list }} {{ x|sort }}")
        << QByteArray("{}") << QByteArray("d d [] [] [] [] False 0 0 [] []");
    QTest::newRow("undefined iterates as empty")
        << QByteArray("{% for i in x %}no{% else %}empty{% endfor %} {{ x is iterable }} {{ x is "
                      "sequence }} {{ x is mapping }} {{ x is string }}")
        << QByteArray("{}") << QByteArray("empty True True False False");
    QTest::newRow("missing attributes are undefined")
        << QByteArray("[{{ {}.a }}] {{ {}.a is defined }} {{ none.a is defined }} {{ [1].a is "
                      "defined }} {{ \"s\".a is defined }} {{ {\"a\": none}.a is none }}")
        << QByteArray("{}") << QByteArray("[] False False False False True");
    QTest::newRow("default with boolean")
        << QByteArray("{{ \"\"|default(\"e\") }} {{ \"\"|default(\"e\", true) }} {{ "
                      "none|default(\"n\") }} {{ 0|default(5, boolean=true) }}")
        << QByteArray("{}") << QByteArray(" e None 5");
    QTest::newRow("truthiness") << QByteArray(
                                       "{% for v in [0, 1, \"\", \"a\", [], [0], {}, {\"a\": 1}, "
                                       "none, 0.0, 0.5] %}{{ \"T\" if v else \"F\" }}{% endfor %}")
                                << QByteArray("{}") << QByteArray("FTFTFTFTFFT");
    QTest::newRow("subscripts")
        << QByteArray("{{ {\"a\": {\"b\": [10, 20]}}.a.b.1 }} {{ {\"a\": {\"b\": [10, "
                      "20]}}[\"a\"][\"b\"][0] }} {{ {\"items\": 1}[\"items\"] }} {{ [1, 2][true] "
                      "}} {{ [1, 2, 3][-1] }} [{{ \"abc\"[10] }}]")
        << QByteArray("{}") << QByteArray("20 10 1 2 3 []");
    QTest::newRow("slices")
        << QByteArray("{{ \"abc\"[::-1] }} {{ \"abcdef\"[1:-1:2] }} {{ [1, 2, 3][5:] }} {{ [1, 2, "
                      "3, 4][::2] }} {{ [1, 2, 3, 4][-2:] }} {{ [1, 2, 3, 4][:-2] }} {{ [1, 2, "
                      "3][::-2] }} {{ [1, 2, 3][1:1] }} {{ [1, 2, 3][-10:10] }} {{ [1, 2, "
                      "3][3:0:-1] }} {{ (1, 2, 3)[1:] }}")
        << QByteArray("{}")
        << QByteArray("cba bd [] [1, 3] [3, 4] [1, 2] [3, 1] [] [1, 2, 3] [3, 2] (2, 3)");
    QTest::newRow("strings count code points")
        << QByteArray("{{ \"héllo\"|length }} {{ \"héllo\"[1] }} {{ \"héllo\"[::-1] }} {{ "
                      "\"héllo\".find(\"l\") }} {{ \"é✓😀\"|list }}")
        << QByteArray("{}") << QByteArray("5 é olléh 2 ['é', '✓', '😀']");
    QTest::newRow("trim length first last")
        << QByteArray(
               "[{{ \"  a b  \"|trim }}] [{{ \"xxaxx\"|trim(\"x\") }}] {{ [1, 2, 3]|length }} {{ "
               "\"abc\"|count }} {{ {\"a\": 1}|length }} {{ [3, 1, 2]|first }} {{ [3, 1, 2]|last "
               "}} {{ \"abc\"|first }} {{ \"abc\"|last }} {{ []|first is defined }}")
        << QByteArray("{}") << QByteArray("[a b] [a] 3 3 1 3 2 a c False");
    QTest::newRow("join")
        << QByteArray("{{ [1, 2, 3]|join(\"-\") }} {{ [\"a\", \"b\"]|join }} {{ [{\"n\": \"a\"}, "
                      "{\"n\": \"b\"}]|join(\", \", attribute=\"n\") }} {{ \"abc\"|join(\".\") }}")
        << QByteArray("{}") << QByteArray("1-2-3 ab a, b a.b.c");
    QTest::newRow("case filters")
        << QByteArray("{{ \"hello World\"|upper }} {{ \"HeLLo\"|lower }} {{ \"hello world-foo "
                      "(bar) it's\"|title }} {{ \"hELLO wORLD\"|capitalize }} {{ \"straße\"|upper "
                      "}} {{ \"ÉCOLE\"|lower }}")
        << QByteArray("{}")
        << QByteArray("HELLO WORLD hello Hello World-Foo (Bar) It's Hello world STRASSE école");
    QTest::newRow("replace")
        << QByteArray("{{ \"aaa\"|replace(\"a\", \"b\") }} {{ \"aaa\"|replace(\"a\", \"b\", 2) }} "
                      "{{ \"ab\"|replace(\"\", \"-\") }} {{ 11|replace(\"1\", \"2\") }}")
        << QByteArray("{}") << QByteArray("bbb bba -a-b- 22");
    QTest::newRow("list string int")
        << QByteArray("{{ \"abc\"|list }} {{ (1, 2)|list }} {{ {\"a\": 1, \"b\": 2}|list }} {{ "
                      "1|string }} {{ [1]|string }} {{ \"3\"|int + 1 }} {{ \"3.7\"|int }} {{ "
                      "3.9|int }} {{ \"x\"|int }} {{ \"x\"|int(5) }} {{ \"0x1A\"|int(0, 16) }} {{ "
                      "\" 12 \"|int }} {{ \"1_000\"|int }} {{ true|int }}")
        << QByteArray("{}")
        << QByteArray("['a', 'b', 'c'] [1, 2] ['a', 'b'] 1 [1] 4 3 3 0 5 26 12 1000 1");
    QTest::newRow("float abs") << QByteArray(
                                      "{{ \"3.5\"|float }} {{ 3|float }} {{ \"abc\"|float }} {{ "
                                      "\"1e3\"|float }} {{ \" -2.5 \"|float }} {{ \"inf\"|float }} "
                                      "{{ \"x\"|float(1.5) }} {{ -3|abs }} {{ -3.5|abs }}")
                               << QByteArray("{}")
                               << QByteArray("3.5 3.0 0.0 1000.0 -2.5 inf 1.5 3 3.5");
    QTest::newRow("round")
        << QByteArray("{{ 1.5|round }} {{ 2.5|round }} {{ 2.675|round(2) }} {{ 3|round }} {{ "
                      "1.25|round(1) }} {{ 1.35|round(1, \"floor\") }} {{ 1.31|round(1, \"ceil\") "
                      "}} {{ 1234.5|round(-2) }} {{ -1.5|round }}")
        << QByteArray("{}") << QByteArray("2.0 2.0 2.67 3 1.2 1.3 1.4 1200.0 -2.0");
    QTest::newRow("safe items indent")
        << QByteArray("{{ \"x\"|safe }} {{ {\"a\": 1}|items|list }} {{ \"a\\nb\\n\\nc\"|indent(2) "
                      "}}|{{ \"a\\nb\"|indent(2, true) }}|{{ \"a\\n\\nb\"|indent(2, blank=true) "
                      "}}|{{ \"a\\nb\"|indent(\"> \") }}")
        << QByteArray("{}") << QByteArray("x [('a', 1)] a\n  b\n\n  c|  a\n  b|a\n  \n  b|a\n> b");
    QTest::newRow("map")
        << QByteArray("{{ [1, 2]|map(\"string\")|list }} {{ [{\"a\": 1}, {\"b\": "
                      "2}]|map(attribute=\"a\")|list }} {{ [{\"a\": 1}, {\"b\": "
                      "2}]|map(attribute=\"a\", default=0)|list }} {{ [\"A\", "
                      "\"b\"]|map(\"lower\")|join }} {{ [1.234]|map(\"round\", 1)|list }}")
        << QByteArray("{}") << QByteArray("['1', '2'] [1, Undefined] [1, 0] ab [1.2]");
    QTest::newRow("select reject")
        << QByteArray(
               "{{ [1, 2, 3, 4]|select(\"odd\")|list }} {{ [1, 2, 3, 4]|reject(\"odd\")|list }} {{ "
               "[0, 1, \"\", 2]|select|list }} {{ [1, 2, 3]|select(\"gt\", 1)|list }} {{ [1, 2, "
               "3]|select(\"divisibleby\", 3)|list }} {{ [1, 2, 3]|select(\"in\", [2, 3])|list }}")
        << QByteArray("{}") << QByteArray("[1, 3] [2, 4] [1, 2] [2, 3] [3] [2, 3]");
    QTest::newRow("selectattr rejectattr")
        << QByteArray(
               "{{ [{\"r\": \"u\"}, {\"r\": \"a\"}, {\"x\": 1}]|selectattr(\"r\", \"equalto\", "
               "\"u\")|list }} {{ [{\"r\": \"u\"}, {\"r\": \"a\"}]|rejectattr(\"r\", \"eq\", "
               "\"u\")|list }} {{ [{\"r\": 1}, {\"r\": 0}]|selectattr(\"r\")|list }} {{ [{\"r\": "
               "\"u\"}, {}]|selectattr(\"r\", \"defined\")|list }} {{ [{\"a\": {\"b\": "
               "1}}]|selectattr(\"a.b\", \"==\", 1)|list }}")
        << QByteArray("{}")
        << QByteArray("[{'r': 'u'}] [{'r': 'a'}] [{'r': 1}] [{'r': 'u'}] [{'a': {'b': 1}}]");
    QTest::newRow("unique sort")
        << QByteArray(
               "{{ [\"b\", \"A\", \"a\", \"B\"]|unique|list }} {{ [\"b\", \"A\", "
               "\"a\"]|unique(true)|list }} {{ [3, 1, 2]|sort }} {{ [\"b\", \"A\", \"c\"]|sort }} "
               "{{ [\"b\", \"A\", \"c\"]|sort(case_sensitive=true) }} {{ [3, 1, "
               "2]|sort(reverse=true) }} {{ [{\"n\": 2}, {\"n\": 1}]|sort(attribute=\"n\") }}")
        << QByteArray("{}")
        << QByteArray("['b', 'A'] ['b', 'A', 'a'] [1, 2, 3] ['A', 'b', 'c'] ['A', 'b', 'c'] [3, 2, "
                      "1] [{'n': 1}, {'n': 2}]");
    QTest::newRow("reverse sum min max")
        << QByteArray("{{ [1, 2, 3]|reverse|list }} {{ \"abc\"|reverse }} {{ [1, 2, 3]|sum }} {{ "
                      "[{\"v\": 1}, {\"v\": 2}]|sum(attribute=\"v\") }} {{ [1, 2]|sum(start=10) }} "
                      "{{ [3, 1, 2]|min }} {{ [3, 1, 2]|max }} {{ [\"b\", \"A\"]|min }} {{ []|max "
                      "is defined }} {{ [{\"v\": 1}, {\"v\": 2}]|max(attribute=\"v\") }}")
        << QByteArray("{}") << QByteArray("[3, 2, 1] cba 6 3 13 1 3 A False {'v': 2}");
    QTest::newRow("wordcount batch center dictsort format escape")
        << QByteArray(
               "{{ \"hello world, foo-bar!\"|wordcount }} {{ [1, 2, 3, 4, 5]|batch(2)|list }} {{ "
               "[1, 2, 3]|batch(2, \"x\")|list }} [{{ \"a\"|center(5) }}] {{ {\"b\": 1, \"a\": "
               "2}|dictsort }} {{ \"%s-%d\"|format(\"a\", 3) }} {{ \"<a & 'b'>\"|e }}")
        << QByteArray("{}")
        << QByteArray("4 [[1, 2], [3, 4], [5]] [[1, 2], [3, 'x']] [  a  ] [('a', 2), ('b', 1)] a-3 "
                      "&lt;a &amp; &#39;b&#39;&gt;");
    QTest::newRow("tojson") << QByteArray("{{ {\"b\": 1, \"a\": 2}|tojson }} {{ [1, \"é\", none, "
                                          "true, 1.0, 1e100, \"\\n\\\"\\u0001\"]|tojson }} {{ {1: "
                                          "2, none: 3, true: 4}|tojson }} {{ (1, 2)|tojson }}")
                            << QByteArray("{}")
                            << QByteArray(
                                   "{\"b\": 1, \"a\": 2} [1, \"é\", null, true, 1.0, 1e+100, "
                                   "\"\\n\\\"\\u0001\"] {\"1\": 4, \"null\": 3} [1, 2]");
    QTest::newRow("tojson options")
        << QByteArray("{{ {\"a\": [1, {}], \"b\": []}|tojson(indent=2) }} {{ "
                      "\"é\"|tojson(ensure_ascii=true) }} {{ {\"b\": 1, \"a\": "
                      "2}|tojson(sort_keys=true) }} {{ [1, 2]|tojson(separators=(\",\", \":\")) }} "
                      "{{ {\"a\": 1}|tojson(indent=\"\\t\") }}")
        << QByteArray("{}")
        << QByteArray("{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": []\n} \"\\u00e9\" {\"a\": 2, "
                      "\"b\": 1} [1,2] {\n\t\"a\": 1\n}");
    QTest::newRow("type tests")
        << QByteArray(
               "{{ 1 is number }} {{ 1.5 is number }} {{ true is number }} {{ 1 is integer }} {{ "
               "true is integer }} {{ 1.0 is float }} {{ 1 is float }} {{ true is boolean }} {{ 1 "
               "is boolean }} {{ \"a\" is string }} {{ {} is mapping }} {{ [] is mapping }}")
        << QByteArray("{}")
        << QByteArray("True True True True False True False True False True True False");
    QTest::newRow("container tests")
        << QByteArray("{{ [] is iterable }} {{ \"a\" is iterable }} {{ 1 is iterable }} {{ {} is "
                      "iterable }} {{ [] is sequence }} {{ {} is sequence }} {{ 1 is sequence }} "
                      "{{ none is none }} {{ 0 is none }} {{ true is true }} {{ 1 is true }} {{ "
                      "false is false }} {{ 0 is false }}")
        << QByteArray("{}")
        << QByteArray("True True False True True True False True False True False True False");
    QTest::newRow("value tests")
        << QByteArray("{{ 3 is odd }} {{ 3 is even }} {{ 4 is even }} {{ 9 is divisibleby 3 }} {{ "
                      "9 is divisibleby(4) }} {{ 1 is eq 1 }} {{ 1 is equalto 2 }} {{ 1 is ne 2 }} "
                      "{{ 1 is lt 2 }} {{ 2 is gt 1 }} {{ 2 is ge 2 }} {{ 1 is le 0 }} {{ 2 is in "
                      "[1, 2] }} {{ \"b\" is in \"abc\" }} {{ 1 is not in [2] }} {{ \"ab\" is "
                      "lower }} {{ \"AB\" is upper }} {{ \"Ab\" is lower }}")
        << QByteArray("{}")
        << QByteArray("True False True True False True False True True True True False True True "
                      "True True True False");
    QTest::newRow("more tests") << QByteArray(
                                       "{{ x is not defined }} {{ \"upper\" is filter }} {{ "
                                       "\"nope\" is filter }} {{ \"odd\" is test }} {{ none is "
                                       "sameas none }} {{ range is callable }} {{ 1 is callable }}")
                                << QByteArray("{}")
                                << QByteArray("True True False True True True False");
    QTest::newRow("strip split")
        << QByteArray("[{{ \"  ab  \".strip() }}] [{{ \"xxabxx\".strip(\"x\") }}] [{{ \"  "
                      "ab\".lstrip() }}] [{{ \"ab  \".rstrip() }}] {{ \"a,b,,c\".split(\",\") }} "
                      "{{ \" a  b \".split() }} {{ \"a b c\".split(\" \", 1) }} {{ \"a b "
                      "c\".rsplit(\" \", 1) }} {{ \"  a b  c \".split(none, 1) }} {{ \" a b c "
                      "\".rsplit(none, 1) }} {{ \"\".split() }} {{ \"\".split(\",\") }}")
        << QByteArray("{}")
        << QByteArray("[ab] [ab] [ab] [ab] ['a', 'b', '', 'c'] ['a', 'b'] ['a', 'b c'] ['a b', "
                      "'c'] ['a', 'b  c '] [' a b', 'c'] [] ['']");
    QTest::newRow("string methods")
        << QByteArray("{{ \"abc\".startswith(\"a\") }} {{ \"abc\".startswith((\"x\", \"ab\")) }} "
                      "{{ \"abc\".endswith(\"bc\") }} {{ \"abc\".endswith((\"x\",)) }} {{ "
                      "\"Hello\".upper() }} {{ \"Hello\".lower() }} {{ \"they're bill's\".title() "
                      "}} {{ \"hELLO\".capitalize() }} {{ \"aXa\".replace(\"a\", \"b\") }} {{ "
                      "\"aaa\".replace(\"a\", \"b\", 1) }}")
        << QByteArray("{}")
        << QByteArray("True True True False HELLO hello They'Re Bill'S Hello bXb baa");
    QTest::newRow("find count join format")
        << QByteArray(
               "{{ \"abc\".find(\"z\") }} {{ \"abcabc\".rfind(\"b\") }} {{ \"aaa\".count(\"a\") }} "
               "{{ \"aaaa\".count(\"aa\") }} {{ \"abc\".count(\"\") }} {{ \", \".join([\"a\", "
               "\"b\"]) }} {{ \"-\".join(\"abc\") }} {{ \"{} {}\".format(1, \"a\") }} {{ "
               "\"{0}{name}{0}\".format(\"x\", name=\"y\") }} {{ "
               "\"{:>5}|{:<4}|{:^5}|{:05.1f}|{:+d}\".format(\"a\", \"b\", \"c\", 3.14159, 3) }}")
        << QByteArray("{}")
        << QByteArray("-1 4 3 2 4 a, b a-b-c 1 a xyx     a|b   |  c  |003.1|+3");
    QTest::newRow("character classes")
        << QByteArray("{{ \"123\".isdigit() }} {{ \"12a\".isdigit() }} {{ \"abc\".isalpha() }} {{ "
                      "\"ab1\".isalnum() }} {{ \" \\t\".isspace() }} {{ \"\".isspace() }} {{ "
                      "\"a\\nb\\r\\nc\".splitlines() }}")
        << QByteArray("{}") << QByteArray("True False True True True False ['a', 'b', 'c']");
    QTest::newRow("dict and list methods")
        << QByteArray("{{ {\"a\": 1}.keys()|list }} {{ {\"a\": 1}.values()|list }} {{ {\"a\": "
                      "1}.items()|list }} {{ {\"a\": 1}.get(\"a\") }} {{ {\"a\": 1}.get(\"b\") }} "
                      "{{ {\"a\": 1}.get(\"b\", 2) }} {{ [1, 2, 3].index(2) }} {{ [1, 1, "
                      "2].count(1) }} [{{ [1].append }}]")
        << QByteArray("{}") << QByteArray("['a'] [1] [('a', 1)] 1 None 2 1 2 []");
    QTest::newRow("percent formatting")
        << QByteArray("{{ \"%5s|%-5s|%05d|%.2f|%x|%r|%%\" % (\"a\", \"b\", 42, 3.14159, 255, "
                      "\"q\") }} {{ \"%(a)s-%(b)d\" % {\"a\": \"x\", \"b\": 2} }} {{ \"%s\" % 5 }} "
                      "{{ \"%d items\" % 3.7 }}")
        << QByteArray("{}") << QByteArray("    a|b    |00042|3.14|ff|'q'|% x-2 5 3 items");
    QTest::newRow("loop variables")
        << QByteArray(
               "{% for i in [1, 2, 3] %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ "
               "loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }};{% endfor %}")
        << QByteArray("{}") << QByteArray("1032TrueFalse3;2121FalseFalse3;3210FalseTrue3;");
    QTest::newRow("loop cycle previtem nextitem")
        << QByteArray("{% for i in [1, 2, 3] %}{{ loop.cycle(\"a\", \"b\") }}{{ loop.previtem }}{{ "
                      "loop.nextitem }};{% endfor %}")
        << QByteArray("{}") << QByteArray("a2;b13;a2;");
    QTest::newRow("loop filter and else")
        << QByteArray("{% for i in [1, 2, 3, 4] if i is even %}{{ i }}{{ loop.index }}{{ "
                      "loop.length }};{% endfor %}{% for i in [] %}x{% else %}none{% endfor %}{% "
                      "for i in [1] if false %}x{% else %}filtered{% endfor %}")
        << QByteArray("{}") << QByteArray("212;422;nonefiltered");
    QTest::newRow("loop unpacking")
        << QByteArray("{% for k, v in {\"a\": 1, \"b\": 2}.items() %}{{ k }}={{ v }};{% endfor "
                      "%}{% for a, b in [[1, 2], (3, 4), \"xy\"] %}{{ a }}{{ b }}{% endfor %}{% "
                      "for k in {\"a\": 1, \"b\": 2} %}{{ k }}{% endfor %}")
        << QByteArray("{}") << QByteArray("a=1;b=2;1234xyab");
    QTest::newRow("break and continue")
        << QByteArray("{% for i in [1, 2, 3, 4, 5] %}{% if i == 2 %}{% continue %}{% endif %}{% if "
                      "i == 4 %}{% break %}{% endif %}{{ i }}{% endfor %}")
        << QByteArray("{}") << QByteArray("13");
    QTest::newRow("nested loops")
        << QByteArray("{% for i in [1, 2] %}{% for j in \"ab\" %}{{ i }}{{ j }}{{ loop.index }}{% "
                      "endfor %}{{ loop.index }};{% endfor %}")
        << QByteArray("{}") << QByteArray("1a11b21;2a12b22;");
    QTest::newRow("set forms") << QByteArray(
                                      "{% set x = 1 %}{% set y, z = 2, 3 %}{{ x }}{{ y }}{{ z }}{% "
                                      "set t = 1, 2 %}{{ t }}{% set b %}block {{ x }}{% endset "
                                      "%}[{{ b }}]{% set c | upper %}up{% endset %}{{ c }}")
                               << QByteArray("{}") << QByteArray("123(1, 2)[block 1]UP");
    QTest::newRow("set scoping")
        << QByteArray("{% set y = 0 %}{% for i in [1, 2] %}{{ y }}{% set y = i %}{{ y }}{% endfor "
                      "%}{{ y }}{% if true %}{% set z = 5 %}{% endif %}{{ z }}")
        << QByteArray("{}") << QByteArray("010205");
    QTest::newRow("namespace")
        << QByteArray("{% set ns = namespace(a=1, b=\"x\") %}{{ ns.a }}{{ ns.b }}{% for i in [1, "
                      "2, 3] %}{% set ns.a = ns.a + i %}{% endfor %}{{ ns.a }}{{ ns.c is defined "
                      "}}{% set ns.c = [1] %}{{ ns.c }} {{ ns }}")
        << QByteArray("{}") << QByteArray("1x7False[1] <Namespace {'a': 7, 'b': 'x', 'c': [1]}>");
    QTest::newRow("macro defaults")
        << QByteArray("{% macro m(a, b=2) %}{{ a }}-{{ b }}{% endmacro %}{{ m(1) }}|{{ m(1, 3) "
                      "}}|{{ m(b=5, a=0) }}|{{ m() }}|")
        << QByteArray("{}") << QByteArray("1-2|1-3|0-5|-2|");
    QTest::newRow("macro varargs kwargs")
        << QByteArray("{% macro m(a) %}{{ a }}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1, 2, 3, "
                      "x=4) }}")
        << QByteArray("{}") << QByteArray("1(2, 3){'x': 4}");
    QTest::newRow("call and caller")
        << QByteArray("{% macro outer(x) %}<{{ caller(x * 2) }}>{% endmacro %}{% call(v) outer(3) "
                      "%}v={{ v }}{% endcall %}{% macro w() %}[{{ caller() }}]{% endmacro %}{% "
                      "call w() %}inner{% endcall %}")
        << QByteArray("{}") << QByteArray("<v=6>[inner]");
    QTest::newRow("recursive macro") << QByteArray("{% macro f(n) %}{% if n > 0 %}{{ n }}{{ f(n - "
                                                   "1) }}{% endif %}{% endmacro %}{{ f(5) }}")
                                     << QByteArray("{}") << QByteArray("54321");
    QTest::newRow("macro scope")
        << QByteArray("{% set x = 1 %}{% macro m() %}{{ x }}{% endmacro %}{% set x = 2 %}{{ m() "
                      "}}{% macro d(a, b=a * 2) %}{{ b }}{% endmacro %}{{ d(3) }}")
        << QByteArray("{}") << QByteArray("26");
    QTest::newRow("filter and with blocks")
        << QByteArray("{% filter upper %}hello {{ \"x\" }}{% endfilter %} {% with a = 1, b = 2 "
                      "%}{{ a + b }}{% endwith %}{{ a is defined }}")
        << QByteArray("{}") << QByteArray("HELLO X 3False");
    QTest::newRow("raw and comments")
        << QByteArray("{% raw %}{{ not rendered }}{% endraw %} {# comment #}x{#- c -#} y")
        << QByteArray("{}") << QByteArray("{{ not rendered }} xy");
    QTest::newRow("if elif else")
        << QByteArray("{% if 1 %}a{% elif 2 %}b{% else %}c{% endif %}{% if 0 %}a{% elif 2 %}b{% "
                      "else %}c{% endif %}{% if 0 %}a{% elif 0 %}b{% else %}c{% endif %}")
        << QByteArray("{}") << QByteArray("abc");
    QTest::newRow("globals")
        << QByteArray("{{ range(3)|list }} {{ range(5, 0, -2)|list }} {{ strftime_now(\"%d %b %Y "
                      "%H:%M %A %B %j %y %m %I%p\") }} {{ dict(a=1) }}")
        << QByteArray("{}")
        << QByteArray(
               "[0, 1, 2] [5, 3, 1] 01 Dec 2026 00:00 Tuesday December 335 26 12 12AM {'a': 1}");
    QTest::newRow("whitespace control")
        << QByteArray("{% for i in [1] %}\n{% if true %}\nx\n{% endif %}\n{% endfor %}\n{% raw "
                      "%}\n {{ y }}\n{% endraw %}\n  {# c #}\nz  {% if true %}q{% endif %}   \n{{ "
                      "\"a\" }}  \n  {%- if 1 %} W {% endif -%}\n\t{%+ if 1 %}+{% endif +%}\nn")
        << QByteArray("{}") << QByteArray("x\n\n {{ y }}\nz  q   \na W +\nn");
    QTest::newRow("lstrip_blocks only for blocks")
        << QByteArray("  {% if true %}\n    x\n  {% endif %}\n  {{ \"y\" }}\n{% if true -%}\n   "
                      "z\n{%- endif %}\nend\n")
        << QByteArray("{}") << QByteArray("    x\n  y\nzend");
    QTest::newRow("newlines normalized, one trailing newline dropped")
        << QByteArray("a\r\nb\r{% if true %}\r\nc{% endif %}\n\n") << QByteArray("{}")
        << QByteArray("a\nb\nc");
    QTest::newRow("minus trims all whitespace")
        << QByteArray("{{- \"a\" -}}\n  \n{{ \"b\" }} {%- if 1 %}\n  c{%- endif %}")
        << QByteArray("{}") << QByteArray("ab  c");
    QTest::newRow("raw with trimming") << QByteArray("  {%- raw -%}  a  {%- endraw -%}  b")
                                       << QByteArray("{}") << QByteArray("ab");
    QTest::newRow("comments and lstrip")
        << QByteArray("x {# a #}\n y\n  {#- b #} z\n   {# c -#}\n w") << QByteArray("{}")
        << QByteArray("x  y z\nw");
    QTest::newRow("unknown filter in an if not taken")
        << QByteArray("{% if false %}{{ x|frobnicate }}{% endif %}ok{{ \"y\" if false else "
                      "x|frobnicate2 if false }}")
        << QByteArray("{}") << QByteArray("ok");
    QTest::newRow("generators are true and used up")
        << QByteArray("{% set g = [1, 2, 3]|select %}{{ g|list }}{{ g|list }} {% if [0]|reject "
                      "%}T{% endif %} {{ ([1]|map(\"string\")) is sequence }} {% set h = [1, "
                      "2]|map(\"string\") %}{{ h|first }}{{ h|first }}[{{ h|join }}] {{ 1 in [1, "
                      "2]|select }} {% for a in g %}x{% else %}empty{% endfor %}")
        << QByteArray("{}") << QByteArray("[1, 2, 3][] T False 12[] True empty");
    QTest::newRow("percent with mappings and undefined")
        << QByteArray("{{ \"ab\" % [1] }}|{{ \"ab\" % {\"a\": 1} }}|{{ \"%s\" % x }}|")
        << QByteArray("{}") << QByteArray("ab|ab||");
    QTest::newRow("braces inside tags")
        << QByteArray("{{ {\"a\": {\"b\": 1}} }} {{ {\"a\": 1}[\"a\"] }}") << QByteArray("{}")
        << QByteArray("{'a': {'b': 1}} 1");
    QTest::newRow("context messages")
        << QByteArray("{% for m in messages %}{{ loop.index }}{{ m.role }}:{{ m['content'] }};{% "
                      "endfor %} {{ messages|selectattr('role', 'equalto', 'user')|list|length }} "
                      "{{ messages|map(attribute='content')|join(' ') }} {{ messages[-1].content "
                      "}}{{ (messages|last).role }}")
        << QByteArray("{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}, {\"role\": "
                      "\"assistant\", \"content\": \"Yo\"}]}")
        << QByteArray("1user:Hi;2assistant:Yo; 1 Hi Yo Yoassistant");
    QTest::newRow("context values")
        << QByteArray("{{ big }} {{ neg }} {{ f }} {{ u }} [{{ e }}] {{ d }} {{ d|tojson }} {{ d.k "
                      "}} {{ none_value is none }}")
        << QByteArray(
               "{\"big\": 4611686018427387904, \"neg\": -5, \"f\": 1.0, \"u\": \"é✓😀\", \"e\": "
               "\"\", \"d\": {\"k\": [1, {\"z\": null}], \"b\": true}, \"none_value\": null}")
        << QByteArray("4611686018427387904 -5 1.0 é✓😀 [] {'k': [1, {'z': None}], 'b': True} "
                      "{\"k\": [1, {\"z\": null}], \"b\": true} [1, {'z': None}] True");
}

void TestJinjaSemantics::semantics() {
    QFETCH(QByteArray, source);
    QFETCH(QByteArray, context);
    QFETCH(QByteArray, expected);
    const JinjaOutcome outcome = renderJinja(toStd(source), Json::parse(toStd(context)));
    QVERIFY2(outcome.text, outcome.error.message.c_str());
    QCOMPARE(*outcome.text, toStd(expected));
}

QTEST_GUILESS_MAIN(TestJinjaSemantics)
#include "test_jinja_semantics.moc"
