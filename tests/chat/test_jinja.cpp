// The Jinja interpreter (engine/chat) against Hugging Face's apply_chat_template: every reference
// render of the seven shipped chat templates byte for byte (shared/reference/templates), errors
// with their line and column, and the bounds a hostile template runs into, each reached quickly.
// Python semantics row by row are in test_jinja_semantics.cpp.
#include "jinja_test_support.h"
#include "test_support.h"

#include <QElapsedTimer>
#include <QFile>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <ctime>
#include <map>
#include <string>

using namespace sinkscope;
using namespace sinkscope::test;

namespace {

std::string readFile(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) qFatal("cannot read %s", qPrintable(path));
    const QByteArray bytes = file.readAll();
    return std::string(bytes.constData(), static_cast<size_t>(bytes.size()));
}

QString templatesPath(const QString& name = {}) {
    return sharedPath("reference/templates/" + name);
}

} // namespace

class TestJinja : public QObject {
    Q_OBJECT

private slots:
    void referenceRenders_data();
    void referenceRenders();
    void errors_data();
    void errors();
    void bounds_data();
    void bounds();
    void limitsAreConfigurable();
    void badContexts();
    void templateRendersRepeatedly();
};

// Each case: the template's file, a context as Hugging Face builds it (messages, tools only when
// the conversation has them, the case's tokens and add_generation_prompt), and the exact text or
// the TemplateError that jinja2 raised.
void TestJinja::referenceRenders_data() {
    if (!QFileInfo::exists(templatesPath("renders.json")))
        QSKIP(qPrintable("reference templates not found at " + templatesPath() +
                         " (set SINKSCOPE_SHARED)"));
    const Json renders = Json::parse(readFile(templatesPath("renders.json")));
    const Json conversations = Json::parse(readFile(templatesPath("conversations.json")));
    QTest::addColumn<QString>("templateFile");
    QTest::addColumn<QByteArray>("context");
    QTest::addColumn<QByteArray>("expected");
    QTest::addColumn<bool>("expectError");
    QVERIFY(!renders.at("cases").empty());
    for (const Json& entry : renders.at("cases")) {
        const std::string family = entry.at("template").get<std::string>();
        const auto file = kTemplateFiles.find(family);
        QVERIFY2(file != kTemplateFiles.end(), ("no template file known for " + family).c_str());
        const Json* conversation = nullptr;
        for (const Json& candidate : conversations)
            if (candidate.at("id") == entry.at("conversation")) conversation = &candidate;
        QVERIFY2(conversation, "a case names a conversation conversations.json lacks");
        Json context = Json::object();
        context["messages"] = conversation->at("messages");
        if (conversation->contains("tools")) context["tools"] = conversation->at("tools");
        context["bos_token"] = entry.at("bos_token");
        context["eos_token"] = entry.at("eos_token");
        context["add_generation_prompt"] = entry.at("add_generation_prompt");
        const bool expectError = entry.contains("error");
        const std::string expected =
            entry.at(expectError ? "error" : "rendered").get<std::string>();
        const std::string name = family + " / " + entry.at("conversation").get<std::string>();
        QTest::newRow(name.c_str()) << file->second << QByteArray::fromStdString(context.dump())
                                    << QByteArray::fromStdString(expected) << expectError;
    }
}

void TestJinja::referenceRenders() {
    QFETCH(QString, templateFile);
    QFETCH(QByteArray, context);
    QFETCH(QByteArray, expected);
    QFETCH(bool, expectError);
    const JinjaOutcome outcome =
        renderJinja(readFile(templatesPath(templateFile)), Json::parse(toStd(context)));
    QVERIFY2(outcome.parsed, outcome.error.message.c_str());
    if (expectError) {
        QVERIFY(!outcome.text);
        // jinja2 reports raise_exception's message as a TemplateError.
        QCOMPARE("TemplateError: " + outcome.error.message, toStd(expected));
        QVERIFY(outcome.error.line > 0 && outcome.error.column > 0);
    } else {
        QVERIFY2(outcome.text, outcome.error.message.c_str());
        QCOMPARE(*outcome.text, toStd(expected));
    }
}

// Hand-made bad templates: the message (jinja2's own where it has one) and where it points.
void TestJinja::errors_data() {
    QTest::addColumn<QByteArray>("source");
    QTest::addColumn<QByteArray>("message");
    QTest::addColumn<int>("line");
    QTest::addColumn<int>("column");
    const auto row = [](const char* name, const char* source, const char* message, int line,
                        int column) {
        QTest::newRow(name) << QByteArray(source) << QByteArray(message) << line << column;
    };
    row("unclosed for (at its tag)", "Hello\n  {% for m in messages %}\n{{ m }}",
        "Unexpected end of template. Jinja was looking for the following tags: 'endfor' or "
        "'else'. The innermost block that needs to be closed is 'for'.",
        2, 3);
    row("unclosed else", "{% if x %}a{% else %}b",
        "Unexpected end of template. Jinja was looking for the following tags: 'endif'. The "
        "innermost block that needs to be closed is 'if'.",
        1, 1);
    row("end tag of another block", "{% for i in [1] %}\n{% endif %}",
        "Encountered unknown tag 'endif'. Jinja was looking for the following tags: 'endfor' or "
        "'else'. The innermost block that needs to be closed is 'for'.",
        2, 4);
    row("unknown tag", "{% include 'other.jinja' %}", "Encountered unknown tag 'include'.", 1, 4);
    row("unknown filter", "line\n{{ x | frobnicate }}", "No filter named 'frobnicate'.", 2, 8);
    row("unknown filter reached inside an if", "{% if true %}\n{{ x|foo }}{% endif %}",
        "No filter named 'foo' found.", 2, 6);
    row("unknown test", "{{ x is frobnicated }}", "No test named 'frobnicated'.", 1, 9);
    row("calling a number", "{% set n = 5 %}\n{{ n() }}", "'int' object is not callable", 2, 5);
    row("calling a string", "{{ 'text'() }}", "'str' object is not callable", 1, 10);
    row("calling an undefined name", "{{ nothing() }}", "'nothing' is undefined", 1, 11);
    row("attribute of an undefined name", "{{ missing.key }}", "'missing' is undefined", 1, 11);
    row("attribute of a missing attribute", "{{ {}.a.b }}", "'dict object' has no attribute 'a'", 1,
        8);
    row("raise_exception", "a\n{{ raise_exception('Only user and assistant roles') }}",
        "Only user and assistant roles", 2, 19);
    row("str plus int", "{{ 'a' + 1 }}", "can only concatenate str (not \"int\") to str", 1, 8);
    row("ordering str and int", "{{ 'a' < 1 }}",
        "'<' not supported between instances of 'str' and 'int'", 1, 4);
    row("division by zero", "{{ 1 / 0 }}", "division by zero", 1, 6);
    row("list.append in the immutable sandbox", "{% set l = [] %}{{ l.append(1) }}",
        "access to attribute 'append' of 'list' object is unsafe.", 1, 28);
    row("unpacking too many", "{% for a, b in [[1, 2, 3]] %}{% endfor %}",
        "too many values to unpack (expected 2)", 1, 24);
    row("iterating none", "{% for i in none %}{% endfor %}", "'NoneType' object is not iterable", 1,
        13);
    row("length of none", "{{ none|length }}", "object of type 'NoneType' has no len()", 1, 9);
    row("length of a generator", "{{ [1, 2]|select|length }}",
        "object of type 'generator' has no len()", 1, 18);
    row("tojson of undefined", "{{ x|tojson }}",
        "Object of type Undefined is not JSON serializable", 1, 6);
    row("macro with too many arguments", "{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}",
        "macro 'm' takes not more than 1 argument(s)", 1, 35);
    row("break outside a loop", "{% break %}", "'break' outside of a for loop", 1, 1);
    row("empty expression", "{{ }}", "Expected an expression, got 'end of print statement'", 1, 4);
    row("mismatched bracket", "{{ (1 ] }}", "unexpected ']', expected ')'", 1, 7);
    row("unterminated string", "{{ 'abc }}", "unexpected end of template inside a string literal",
        1, 4);
    row("unterminated comment", "x\n{# never closed", "Missing end of comment tag", 2, 1);
    row("template not UTF-8", "ab\xff", "the template is not valid UTF-8", 1, 3);
}

void TestJinja::errors() {
    QFETCH(QByteArray, source);
    QFETCH(QByteArray, message);
    QFETCH(int, line);
    QFETCH(int, column);
    const JinjaOutcome outcome = renderJinja(toStd(source), Json::object());
    QVERIFY(!outcome.text);
    QCOMPARE(outcome.error.message, toStd(message));
    QCOMPARE(outcome.error.line, line);
    QCOMPARE(outcome.error.column, column);
}

// Each hostile template stops with its limit's error, fast: nothing is allocated up front
// ("x" * 10**12 fails before building the string) and every loop and step is counted.
void TestJinja::bounds_data() {
    QTest::addColumn<QByteArray>("source");
    QTest::addColumn<QByteArray>("message");
    QTest::newRow("blocks nested 100 deep")
        << QByteArray("{% if true %}").repeated(100) + "x" + QByteArray("{% endif %}").repeated(100)
        << QByteArray("blocks nest deeper than 64 levels");
    QTest::newRow("100,000 parentheses")
        << "{{ " + QByteArray("(").repeated(100000) + "1" + QByteArray(")").repeated(100000) + " }}"
        << QByteArray("the expression nests deeper than 256 levels");
    QTest::newRow("100,000 unary minus")
        << "{{ " + QByteArray("-").repeated(100000) + "1 }}"
        << QByteArray("the expression nests deeper than 256 levels");
    QTest::newRow("a chain of 100,000 additions")
        << "{{ 1" + QByteArray(" + 1").repeated(100000) + " }}"
        << QByteArray("the expression nests deeper than 256 levels");
    QTest::newRow("10^12 iterations in nested loops")
        << QByteArray("{% set a = [0] * 10000 %}{% for i in a %}{% for j in a %}{% for k in a %}"
                      "{% endfor %}{% endfor %}{% endfor %}")
        << QByteArray("the template's loops ran more than 200000 iterations");
    QTest::newRow("a string of 10^12 bytes")
        << QByteArray("{{ 'x' * 10**12 }}") << QByteArray("longer than 8388608 bytes");
    QTest::newRow("a list of 10^12 items")
        << QByteArray("{{ [0] * 10**12 }}") << QByteArray("more than 200000 items");
    QTest::newRow("recursive macro")
        << QByteArray("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}")
        << QByteArray("macro calls nest deeper than 64 levels");
    QTest::newRow("a string doubling in a loop")
        << QByteArray("{% set ns = namespace(s='x') %}{% for i in range(100000) %}"
                      "{% set ns.s = ns.s ~ ns.s %}{% endfor %}")
        << QByteArray("longer than 8388608 bytes");
    QTest::newRow("output past the limit")
        << QByteArray("{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}")
        << QByteArray("longer than 8388608 bytes");
    QTest::newRow("quadratic work")
        << QByteArray("{% set x = 'a' * 1000000 %}{% for i in range(100000) %}"
                      "{% if x in x %}{% endif %}{% endfor %}")
        << QByteArray("evaluation steps");
    QTest::newRow("a list nested in itself")
        << QByteArray("{% set ns = namespace(l=[]) %}{% for i in range(1000) %}"
                      "{% set ns.l = [ns.l] %}{% endfor %}")
        << QByteArray("a value of the template nests deeper than 64 levels");
    QTest::newRow("a namespace holding itself")
        << QByteArray("{% set ns = namespace() %}{% set ns.me = [ns] %}")
        << QByteArray("a namespace cannot hold a namespace");
}

void TestJinja::bounds() {
    QFETCH(QByteArray, source);
    QFETCH(QByteArray, message);
    QElapsedTimer timer;
    timer.start();
    const JinjaOutcome outcome = renderJinja(toStd(source), Json::object());
    const qint64 elapsed = timer.elapsed();
    QVERIFY(!outcome.text);
    QVERIFY2(outcome.error.message.find(toStd(message)) != std::string::npos,
             outcome.error.message.c_str());
    QVERIFY(outcome.error.line > 0);
#ifdef SINKSCOPE_SANITIZED
    QVERIFY2(elapsed < 20000, qPrintable(QString::number(elapsed) + " ms"));
#else
    QVERIFY2(elapsed < 2000, qPrintable(QString::number(elapsed) + " ms"));
#endif
}

void TestJinja::limitsAreConfigurable() {
    JinjaLimits limits;
    limits.maxOutputBytes = 10;
    QCOMPARE(*renderJinja("{{ 'x' * 10 }}", Json::object(), limits).text, std::string(10, 'x'));
    QVERIFY(!renderJinja("{{ 'x' * 11 }}", Json::object(), limits).text);
    limits = {};
    limits.maxLoopIterations = 3;
    QCOMPARE(
        *renderJinja("{% for i in [1, 2, 3] %}{{ i }}{% endfor %}", Json::object(), limits).text,
        std::string("123"));
    QVERIFY(!renderJinja("{% for i in [1, 2, 3, 4] %}{% endfor %}", Json::object(), limits).text);
    limits = {};
    limits.maxNesting = 2;
    QVERIFY(renderJinja("{% if 1 %}{% if 1 %}{% endif %}{% endif %}", Json::object(), limits).text);
    const JinjaOutcome deep = renderJinja(
        "{% if 1 %}{% if 1 %}{% if 1 %}{% endif %}{% endif %}{% endif %}", Json::object(), limits);
    QVERIFY(!deep.parsed);
    QCOMPARE(deep.error.message, std::string("blocks nest deeper than 2 levels"));
    limits = {};
    limits.maxSteps = 100;
    const JinjaOutcome busy =
        renderJinja("{% for i in range(1000) %}{% endfor %}", Json::object(), limits);
    QVERIFY(!busy.text);
    QCOMPARE(busy.error.message, std::string("the template took more than 100 evaluation steps"));
}

void TestJinja::badContexts() {
    const JinjaOutcome array = renderJinja("{{ x }}", Json::array({1, 2}));
    QVERIFY(!array.text);
    QCOMPARE(array.error.message, std::string("the context must be a JSON object of variables"));
    const JinjaOutcome notText = renderJinja("{{ x }}", Json{{"x", std::string("a\xff")}});
    QVERIFY(!notText.text);
    QCOMPARE(notText.error.message, std::string("a string of the context is not valid UTF-8"));
    Json deep = 1;
    for (int i = 0; i < 100; ++i)
        deep = Json::array({deep});
    const JinjaOutcome tooDeep = renderJinja("{{ x }}", Json{{"x", deep}});
    QVERIFY(!tooDeep.text);
    QCOMPARE(tooDeep.error.message, std::string("the context nests deeper than 64 levels"));
}

void TestJinja::templateRendersRepeatedly() {
    JinjaError error;
    const auto compiled = JinjaTemplate::parse(
        "{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{% endfor %}"
        "{{ ns.n }} {{ strftime_now('%Y-%m-%d') }}",
        error);
    QVERIFY(compiled);
    const Json context{{"messages", Json::array({1, 2, 3})}};
    QCOMPARE(*compiled->render(context, kReferenceNow, error), std::string("3 2026-12-01"));
    QCOMPARE(*compiled->render(context, kReferenceNow + 86400, error), std::string("3 2026-12-02"));
}

QTEST_GUILESS_MAIN(TestJinja)
#include "test_jinja.moc"
