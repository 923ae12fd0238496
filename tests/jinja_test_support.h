// Helpers shared by the Jinja tests: parse and render in one call, at the reference clock.
#pragma once

#include "jinja/jinja_template.h"

#include <QByteArray>

#include <nlohmann/json.hpp>

#include <ctime>
#include <optional>
#include <string>

namespace sinkscope::test {

using Json = nlohmann::ordered_json;

// The reference renders' clock: 2026-12-01 00:00 UTC.
inline constexpr std::time_t kReferenceNow = 1796083200;

struct JinjaOutcome {
    bool parsed = false;
    std::optional<std::string> text;
    JinjaError error;
};

inline JinjaOutcome renderJinja(const std::string& source, const Json& context,
                                JinjaLimits limits = {}) {
    JinjaOutcome outcome;
    const std::optional<JinjaTemplate> compiled =
        JinjaTemplate::parse(source, outcome.error, limits);
    outcome.parsed = compiled.has_value();
    if (compiled) outcome.text = compiled->render(context, kReferenceNow, outcome.error);
    return outcome;
}

inline std::string toStd(const QByteArray& bytes) {
    return std::string(bytes.constData(), static_cast<size_t>(bytes.size()));
}

} // namespace sinkscope::test
