#include "jinja/jinja_budget.h"

#include <utility>

namespace sinkscope::jinja {

void fail(std::string message, size_t offset) {
    throw Failure{std::move(message), offset};
}

void Budget::step(int64_t count) {
    m_steps += count;
    if (m_steps > m_limits.maxSteps)
        fail("the template took more than " + std::to_string(m_limits.maxSteps) +
             " evaluation steps");
}

void Budget::iteration() {
    if (++m_iterations > m_limits.maxLoopIterations)
        fail("the template's loops ran more than " + std::to_string(m_limits.maxLoopIterations) +
             " iterations");
}

void Budget::textTooLong() const {
    fail("a string of the template would be longer than " +
         std::to_string(m_limits.maxOutputBytes) + " bytes");
}

void Budget::chargeText(size_t bytes) {
    if (bytes > m_limits.maxOutputBytes) textTooLong();
    step(static_cast<int64_t>(bytes / 8));
}

void Budget::chargeItems(size_t items) {
    if (items > maxListItems())
        fail("a list of the template would have more than " + std::to_string(maxListItems()) +
             " items");
    step(static_cast<int64_t>(items) * 4);
}

void TextBuilder::append(std::string_view text) {
    if (text.size() > m_budget->maxTextBytes() - m_text.size()) m_budget->textTooLong();
    m_budget->chargeText(text.size());
    m_text.append(text);
}

void TextBuilder::appendRepeated(std::string_view text, size_t count) {
    if (text.empty() || count == 0) return;
    const size_t room = m_budget->maxTextBytes() - m_text.size();
    if (count > room / text.size()) m_budget->textTooLong();
    m_budget->chargeText(text.size() * count);
    for (size_t i = 0; i < count; ++i)
        m_text.append(text);
}

} // namespace sinkscope::jinja
