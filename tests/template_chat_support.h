// Helpers for the tests of chats in the model's own template: the reference models and
// templates, loaded once, and tools in the shape the reference conversations use.
#pragma once

#include "model/model.h"
#include "test_support.h"
#include "tools/tool_schema.h"

#include <QFile>

#include <map>
#include <memory>
#include <string>

namespace sinkscope::test {

inline QString referenceModelPath(const QString& family) {
    return sharedPath("reference/models/" + family + "-F16.gguf");
}

// The model, loaded once per process; nullptr when the file is absent.
inline const Model* referenceModel(const QString& family) {
    static std::map<QString, std::unique_ptr<Model>> models;
    auto& slot = models[family];
    if (!slot && QFileInfo::exists(referenceModelPath(family))) {
        std::string error;
        slot = Model::load(referenceModelPath(family).toStdString(), error);
        if (!slot) qWarning("%s: %s", qPrintable(family), error.c_str());
    }
    return slot.get();
}

inline std::string referenceTemplate(const QString& file) {
    QFile source(sharedPath("reference/templates/" + file));
    if (!source.open(QIODevice::ReadOnly)) return {};
    const QByteArray bytes = source.readAll();
    return std::string(bytes.constData(), size_t(bytes.size()));
}

inline ToolSet parsedTools(const char* json) {
    ToolsParseResult parsed = parseTools(json);
    if (!parsed.tools) qFatal("tools: %s", parsed.errorSummary().c_str());
    return *parsed.tools;
}

inline constexpr const char* kWeatherTools =
    R"([{"name":"get_weather","description":"Current weather in a city.","parameters":{"type":"object","properties":{"city":{"type":"string","description":"The city."},"unit":{"type":"string","enum":["c","f"],"description":"Units."}},"required":["city"]}},)"
    R"({"name":"set_alarm","description":"Sets an alarm.","parameters":{"type":"object","properties":{"time":{"type":"string","description":"HH:MM."}},"required":["time"]}}])";

} // namespace sinkscope::test

#define SINKSCOPE_REQUIRE_REFERENCE_MODEL(family)                                                  \
    do {                                                                                           \
        if (!sinkscope::test::referenceModel(family))                                              \
            QSKIP(qPrintable(QStringLiteral("%1 not found (set SINKSCOPE_SHARED)")                 \
                                 .arg(sinkscope::test::referenceModelPath(family))));              \
    } while (0)
