// Writes fuzz_jinja's seeds:
//   make_jinja_corpus DIR [TEMPLATES]
// DIR gets one small template per feature the interpreter has (committed as
// corpus/fuzz_jinja); with TEMPLATES (shared/reference/templates), also every *.jinja there,
// read where it lies at run time and never committed. Each seed is the template, a 0 byte and
// the last user message.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace fs = std::filesystem;

const std::vector<std::pair<std::string, std::string>> kSeeds = {
    {"text", "plain text only\n"},
    {"output", "{{ bos_token }}{{ messages[0].content }}{{ 1 + 2 * 3 }}"},
    {"whitespace",
     "  {%- if true -%}\n  a\n  {% endif %}\n{{- 'b' -}}  {#- c -#}\n {%+ if 1 %}d{% endif +%}\n"},
    {"raw", "{% raw %}{{ x }}{% endraw %}{%- raw -%} y {%- endraw %}"},
    {"loop", "{% for m in messages if m.role != 'tool' %}{{ loop.index }}{{ loop.first }}"
             "{{ loop.previtem.role }}{{ loop.cycle('a', 'b') }}{% else %}none{% endfor %}"},
    {"loop-controls", "{% for i in range(10) %}{% if i is even %}{% continue %}{% endif %}"
                      "{% if i > 6 %}{% break %}{% endif %}{{ i }}{% endfor %}"},
    {"unpacking", "{% for k, v in messages[0]|items %}{{ k }}={{ v }};{% endfor %}"},
    {"set", "{% set x = [1, 2] %}{% set a, b = x %}{% set t %}{{ a }}{% endset %}{{ t ~ b }}"},
    {"namespace", "{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}"
                  "{% endfor %}{{ ns.n }}"},
    {"macro", "{% macro m(a, b=2) %}{{ a }}{{ b }}{{ varargs }}{{ kwargs }}{% endmacro %}"
              "{{ m(1) }}{{ m(1, 3, 4, k=5) }}"},
    {"call",
     "{% macro w(x) %}[{{ caller(x) }}]{% endmacro %}{% call(y) w(2) %}{{ y * 2 }}{% endcall %}"},
    {"recursion",
     "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ n }}{% endif %}{% endmacro %}{{ f(3) }}"},
    {"filters",
     "{{ messages|selectattr('role', 'equalto', 'user')|map(attribute='content')|join(', ') }}"
     "{{ 'a b'|title|upper|lower|capitalize|replace('a', 'b')|trim|length }}"
     "{{ [3, 1]|sort|reverse|list|first }}{{ [1, 1]|unique|list|last }}{{ '3'|int|float|round }}"},
    {"tojson",
     "{{ tools|tojson }}{{ tools[0]|tojson(indent=4) }}{{ {'a': [none, true, 1.5]}|tojson }}"},
    {"tests", "{{ x is defined }}{{ 1 is odd }}{{ 'a' is string }}{{ tools is iterable }}"
              "{{ none is none }}{{ 3 is divisibleby 3 }}{{ 2 is in [1, 2] }}"},
    {"methods", "{{ ' a,b '.strip().split(',') }}{{ 'abc'.startswith(('a', 'b')) }}"
                "{{ '{}-{:>4}'.format(1, 'x') }}{{ {'a': 1}.get('a') }}{{ 'x'.join(['a', 'b']) }}"},
    {"strings", "{{ 'h\\u00e9llo'[::-1] }}{{ 'abc'[1:] }}{{ '%s=%d' % ('a', 1) }}{{ 'ab' * 3 }}"},
    {"conditional", "{{ 'y' if messages else 'n' }}{{ 1 if false }}{{ not none and [] or 'z' }}"},
    {"raise",
     "{% if messages[0].role == 'system' %}{{ raise_exception('no system role') }}{% endif %}"},
    {"clock", "{{ strftime_now('%d %b %Y') }}"},
    {"filter-block",
     "{% filter upper %}{{ user_text }}{% endfilter %}{% with a = 1 %}{{ a }}{% endwith %}"},
    {"unclosed", "{% for m in messages %}{{ m"},
    {"bad-filter", "{{ x|nope }}"},
};

void write(const fs::path& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("cannot write " + path.string());
}

std::string withUserText(const std::string& source) {
    return source + std::string(1, '\0') + "What is the weather in Porto?";
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2 && argc != 3) {
        std::cerr << "usage: make_jinja_corpus DIR [shared/reference/templates]\n";
        return 2;
    }
    try {
        const fs::path root = argv[1];
        fs::create_directories(root);
        for (const auto& [name, source] : kSeeds)
            write(root / (name + ".txt"), withUserText(source));
        if (argc == 3) {
            for (const auto& entry : fs::directory_iterator(argv[2])) {
                if (entry.path().extension() != ".jinja") continue;
                std::ifstream in(entry.path(), std::ios::binary);
                const std::string source((std::istreambuf_iterator<char>(in)),
                                         std::istreambuf_iterator<char>());
                write(root / ("reference-" + entry.path().stem().string() + ".txt"),
                      withUserText(source));
            }
        }
    } catch (const std::exception& e) {
        std::cerr << "make_jinja_corpus: " << e.what() << '\n';
        return 1;
    }
    return 0;
}
