// The property in every call format, for one architecture (test_format_turns_llama.cpp,
// test_format_turns_qwen2.cpp: one suite each, to keep each under a minute): with random weights,
// random sampling, every shipped preset and 500 seeds, the constrained calls always parse,
// validate and name declared tools, whether the call markers are control tokens of the
// vocabulary or text.
#pragma once

#include "call_test_support.h"

#include <QtTest>

Q_DECLARE_METATYPE(sinkscope::CallFormat)

namespace sinkscope::test {

#ifdef SINKSCOPE_SANITIZED
// Unoptimised and instrumented, 500 seeds take far longer than a test may: 25 here, checking the
// same property; the optimised build runs all 500.
inline constexpr int kFormatTurnSeeds = 25;
#else
inline constexpr int kFormatTurnSeeds = 500;
#endif

// One layer, 16 wide: the grammar is under test, not the model. With markers as tokens the
// vocabulary has Needle's eight markers as control tokens (so <|im_end|> ends turns), without
// them the chat is plain and end-of-text ends turns.
inline std::unique_ptr<Model> tinyModel(const std::string& architecture, bool markerTokens) {
    SyntheticSpec spec = smallSpec(markerTokens);
    spec.architecture = architecture;
    spec.nEmbd = 16;
    spec.nFf = 16;
    return modelFromSpec(spec);
}

inline void addFormatTurnRows() {
    QTest::addColumn<CallFormat>("format");
    QTest::addColumn<bool>("markerTokens");
    const std::pair<const char*, CallFormat> formats[] = {{"needle", needleCallFormat()},
                                                          {"smollm", smolLmCallFormat()},
                                                          {"qwen", qwenCallFormat()},
                                                          {"llama-3", llama3CallFormat()}};
    for (const auto& [name, format] : formats)
        for (const bool tokens : {false, true})
            QTest::addRow("%s, markers as %s", name, tokens ? "tokens" : "text")
                << format << tokens;
}

// Every preset, kFormatTurnSeeds seeds, call budgets from 8 to 100 tokens.
inline void checkFormatTurns(const Model& model, const CallFormat& format, bool markerTokens) {
    const CallMarkerTokens markers = callMarkerTokens(model.tokenizer(), format);
    QCOMPARE(markers.open.has_value(), markerTokens && !format.open.empty());
    int severalCalls = 0;
    int wrappedUp = 0;
    for (const ToolPreset& preset : shippedPresets()) {
        const ConstrainedRunSummary summary =
            runConstrainedCalls(model, preset, format, kFormatTurnSeeds, 100, 8);
        QVERIFY2(summary.failure.isEmpty(),
                 qPrintable(QString::fromStdString(preset.name) + ": " + summary.failure));
        severalCalls += summary.turnsWithSeveralCalls;
        wrappedUp += summary.wrappedUp;
    }
#ifndef SINKSCOPE_SANITIZED
    // the framing between calls and the wrap-ups were exercised (over 25 seeds a random model
    // may never write a second call: the sanitized build checks validity only)
    if (format.maxCalls != 1) QVERIFY(severalCalls > 0);
    QVERIFY(wrappedUp > 0);
#else
    Q_UNUSED(severalCalls);
    Q_UNUSED(wrappedUp);
#endif
}

} // namespace sinkscope::test
