// What the tool tests share: small synthetic models (with Needle's chat markers as control tokens,
// or without) and the shipped presets.
#pragma once

#include "gguf/gguf.h"
#include "model/model.h"
#include "model/synthetic.h"
#include "session/assistant_turn.h"
#include "synthetic_model_support.h"
#include "tools/tool_preset.h"

#include <QDir>
#include <QFile>
#include <QtTest>

#include <memory>
#include <string>
#include <vector>

namespace sinkscope::test {

// Two tools: ping(host), its string argument required, and stop(), without arguments.
inline constexpr const char* kPingStopTools =
    R"([{"name":"ping","parameters":{"type":"object","properties":{"host":{"type":"string"}},"required":["host"]}},{"name":"stop"}])";

// The tools of JSON a test wrote; a parse error ends the run.
inline ToolSet toolsFrom(const char* json) {
    ToolsParseResult parsed = parseTools(json);
    if (!parsed.tools) qFatal("tools: %s", parsed.errorSummary().c_str());
    return *parsed.tools;
}

// A short reply of text: no tool calls.
inline RespondOptions textAnswer(int maxTokens) {
    RespondOptions options;
    options.maxTokens = maxTokens;
    options.calls = CallPolicy::None;
    return options;
}

inline const std::vector<std::string> kNeedleMarkers = {
    "<|im_start|>", "<|im_end|>",   "<tools>",       "</tools>",
    "<tool_call>",  "</tool_call>", "<tool_result>", "</tool_result>"};

// Small and quick: one layer, 32-wide, 600 tokens (letters, pairs and some words).
inline SyntheticSpec smallSpec(bool needleMarkers) {
    SyntheticSpec spec;
    spec.nVocab = 600;
    spec.nEmbd = 32;
    spec.nLayer = 1;
    spec.nHead = 2;
    spec.nHeadKv = 1;
    spec.nFf = 64;
    if (needleMarkers) spec.extraSpecialTokens = kNeedleMarkers;
    return spec;
}

// The presets shipped in resources/presets, parsed (a test fails on one that does not parse).
inline std::vector<ToolPreset> shippedPresets() {
    const QDir dir(QFINDTESTDATA("../resources/presets"));
    std::vector<ToolPreset> presets;
    for (const QString& name : dir.entryList({"*.json"}, QDir::Files, QDir::Name)) {
        QFile file(dir.filePath(name));
        if (!file.open(QIODevice::ReadOnly)) qFatal("cannot read %s", qPrintable(file.fileName()));
        PresetParseResult parsed = parsePreset(file.readAll().toStdString());
        if (!parsed.preset)
            qFatal("preset %s: %s", qPrintable(name), parsed.errors.front().text().c_str());
        presets.push_back(std::move(*parsed.preset));
    }
    return presets;
}

} // namespace sinkscope::test
