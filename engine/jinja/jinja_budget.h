// What one parse or render may spend (JinjaLimits), and how the interpreter reports an error
// from deep inside: a Failure thrown to the public API, which turns it into a JinjaError.
#pragma once

#include "jinja/jinja_template.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sinkscope::jinja {

inline constexpr size_t kNoOffset = static_cast<size_t>(-1);

// Never escapes JinjaTemplate::parse or render. offset: byte offset into the normalized source
// of what failed, or kNoOffset when the interpreter should name the node it was evaluating.
struct Failure {
    std::string message;
    size_t offset = kNoOffset;
};

[[noreturn]] void fail(std::string message, size_t offset = kNoOffset);

class Budget {
public:
    explicit Budget(const JinjaLimits& limits) : m_limits(limits) {}

    const JinjaLimits& limits() const { return m_limits; }
    void step(int64_t count = 1);
    void iteration();
    // Making `bytes` of text or `items` list entries: checked against the size limits before the
    // caller allocates, then charged as steps.
    void chargeText(size_t bytes);
    void chargeItems(size_t items);
    [[noreturn]] void textTooLong() const;
    size_t maxTextBytes() const { return m_limits.maxOutputBytes; }
    // The longest list a render may make: no longer than a loop could walk.
    size_t maxListItems() const { return static_cast<size_t>(m_limits.maxLoopIterations); }

private:
    JinjaLimits m_limits;
    int64_t m_steps = 0;
    int64_t m_iterations = 0;
};

// A string under construction that can never outgrow the limit on strings: every append is
// checked (and charged) before it is made.
class TextBuilder {
public:
    explicit TextBuilder(Budget& budget) : m_budget(&budget) {}
    void append(std::string_view text);
    void append(char c) { append(std::string_view(&c, 1)); }
    void appendRepeated(std::string_view text, size_t count);
    size_t size() const { return m_text.size(); }
    const std::string& text() const { return m_text; }
    std::string take() { return std::move(m_text); }

private:
    Budget* m_budget;
    std::string m_text;
};

} // namespace sinkscope::jinja
