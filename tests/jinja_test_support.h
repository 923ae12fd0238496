// Helpers shared by the Jinja tests: parse and render in one call, at the reference clock.
#pragma once

#include "jinja/jinja_template.h"

#include <QByteArray>
#include <QString>

#include <nlohmann/json.hpp>

#include <ctime>
#include <map>
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

// renders.json (shared/reference/templates) names templates by family; these are their files.
inline const std::map<std::string, QString> kTemplateFiles = {
    {"qwen2.5", "Qwen-Qwen2.5-7B-Instruct.jinja"},
    {"llama-3.2", "meta-llama-Llama-3.2-3B-Instruct.jinja"},
    {"hermes-2-pro", "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja"},
    {"mistral-nemo", "mistralai-Mistral-Nemo-Instruct-2407.jinja"},
    {"gemma-2", "google-gemma-2-2b-it.jinja"},
    {"phi-3.5", "microsoft-Phi-3.5-mini-instruct.jinja"},
    {"chatml-tools", "chatml-tools.jinja"},
};

inline std::string toStd(const QByteArray& bytes) {
    return std::string(bytes.constData(), static_cast<size_t>(bytes.size()));
}

} // namespace sinkscope::test
