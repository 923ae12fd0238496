// A bounded interpreter of the Jinja subset that chat templates use, rendering exactly as Hugging
// Face's apply_chat_template does: Python's jinja2 with trim_blocks and lstrip_blocks on, the
// loopcontrols extension (break, continue), an immutable sandbox (lists and dicts cannot be
// changed; namespaces can), tojson as json.dumps(x, ensure_ascii=False, indent=indent) in key
// order without HTML escaping, and the globals raise_exception(msg) and strftime_now(fmt).
//
// Templates come from model files, so nothing in them is trusted: parsing and rendering never
// throw, never crash and stop with an error once a limit below is reached.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace sinkscope {

struct JinjaLimits {
    // Block nesting in the source, macro call depth and the nesting of values (lists in lists).
    // Expressions may nest 4 times deeper (each operator of a chain like a + b + c is a level)
    // and rendering as a whole 16 times deeper (expressions inside blocks inside macro calls).
    int maxNesting = 64;
    int64_t maxLoopIterations = 200000; // all loops of one render together
    // The rendered text, and every string made on the way ("a" * 10**9 fails before allocating).
    size_t maxOutputBytes = 8u << 20;
    // Expression and statement evaluations of one render. Copying text costs a step per 8 bytes
    // and making a list 4 steps per item, which bounds the memory a render can allocate.
    int64_t maxSteps = 20'000'000;
};

struct JinjaError {
    std::string message; // raise_exception's text exactly as the template gave it
    int line = 0;        // 1-based; 0 when not tied to a place
    int column = 0;      // 1-based, in characters (code points)
};

namespace jinja {
struct Program;
}

class JinjaTemplate {
public:
    static std::optional<JinjaTemplate> parse(std::string_view source, JinjaError& error,
                                              JinjaLimits limits = {});

    // context: an object of variables (messages, tools, bos_token, add_generation_prompt, ...);
    // ordered_json keeps key order, which tojson writes. `now` is the clock strftime_now reads,
    // as UTC.
    std::optional<std::string> render(const nlohmann::ordered_json& context, std::time_t now,
                                      JinjaError& error) const;

private:
    explicit JinjaTemplate(std::shared_ptr<const jinja::Program> program);
    std::shared_ptr<const jinja::Program> m_program;
};

} // namespace sinkscope
