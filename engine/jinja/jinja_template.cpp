#include "jinja/jinja_template.h"

#include "jinja/jinja_lexer.h"
#include "jinja/jinja_parser.h"
#include "jinja/jinja_render.h"

#include <new>

namespace sinkscope {

namespace {

JinjaError errorAt(std::string message, std::string_view source, size_t offset) {
    JinjaError error;
    error.message = std::move(message);
    if (offset != jinja::kNoOffset) {
        const auto [line, column] = jinja::lineAndColumn(source, offset);
        error.line = line;
        error.column = column;
    }
    return error;
}

} // namespace

JinjaTemplate::JinjaTemplate(std::shared_ptr<const jinja::Program> program)
    : m_program(std::move(program)) {}

std::optional<JinjaTemplate> JinjaTemplate::parse(std::string_view source, JinjaError& error,
                                                  JinjaLimits limits) {
    try {
        return JinjaTemplate(jinja::parseProgram(source, limits));
    } catch (const jinja::Failure& failure) {
        error = errorAt(failure.message, jinja::normalizeSource(source), failure.offset);
    } catch (const std::bad_alloc&) {
        error = JinjaError{"out of memory while parsing the template", 0, 0};
    } catch (const std::exception& exception) {
        error =
            JinjaError{std::string("the template could not be parsed: ") + exception.what(), 0, 0};
    }
    return std::nullopt;
}

std::optional<std::string> JinjaTemplate::render(const nlohmann::ordered_json& context,
                                                 std::time_t now, JinjaError& error) const {
    jinja::Interpreter interpreter(*m_program, now);
    try {
        return interpreter.render(context);
    } catch (const jinja::Failure& failure) {
        const size_t offset =
            failure.offset != jinja::kNoOffset ? failure.offset : interpreter.offset();
        error = errorAt(failure.message, m_program->source, offset);
    } catch (const std::bad_alloc&) {
        error = JinjaError{"out of memory while rendering the template", 0, 0};
    } catch (const std::exception& exception) {
        error = JinjaError{std::string("the template could not be rendered: ") + exception.what(),
                           0, 0};
    }
    return std::nullopt;
}

} // namespace sinkscope
