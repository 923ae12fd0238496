// The property in every call format: with random weights (llama and qwen2), random
// sampling, every shipped preset and 500 seeds, the constrained calls always parse, validate
// and name declared tools, whether the call markers are control tokens of the vocabulary or
// text. Also how a turn opens and ends in each format: BareObject's call opens with the reply's
// first '{' (and CallPolicy::None masks it), TaggedObjects writes several blocks and ends after
// any of them.
#include "call_test_support.h"

#include <QtTest>

using namespace sinkscope;

Q_DECLARE_METATYPE(sinkscope::CallFormat)

namespace {

constexpr int kSeeds = 500;

// One layer, 16 wide: the grammar is under test, not the model.
std::unique_ptr<Model> tinyModel(const std::string& architecture, bool markerTokens) {
    SyntheticSpec spec = test::smallSpec(markerTokens);
    spec.architecture = architecture;
    spec.nEmbd = 16;
    spec.nFf = 16;
    return test::modelFromSpec(spec);
}

const std::pair<const char*, CallFormat> kFormats[] = {{"needle", needleCallFormat()},
                                                       {"smollm", test::smolLmCallFormat()},
                                                       {"qwen", test::qwenCallFormat()},
                                                       {"llama-3", test::llama3CallFormat()}};

} // namespace

class TestFormatTurns : public QObject {
    Q_OBJECT
    // [architecture][markers as tokens]
    std::unique_ptr<Model> m_models[2][2] = {{tinyModel("llama", false), tinyModel("llama", true)},
                                             {tinyModel("qwen2", false), tinyModel("qwen2", true)}};
    std::vector<ToolPreset> m_presets = test::shippedPresets();

    const Model& model(int architecture, bool markerTokens) const {
        return *m_models[architecture][markerTokens ? 1 : 0];
    }

private slots:
    void constrainedCallsAlwaysValidate_data() {
        QTest::addColumn<CallFormat>("format");
        QTest::addColumn<int>("architecture");
        QTest::addColumn<bool>("markerTokens");
        for (const auto& [name, format] : kFormats)
            for (const int architecture : {0, 1})
                for (const bool tokens : {false, true})
                    QTest::addRow("%s, %s, markers as %s", name,
                                  architecture == 0 ? "llama" : "qwen2",
                                  tokens ? "tokens" : "text")
                        << format << architecture << tokens;
    }
    void constrainedCallsAlwaysValidate() {
        QFETCH(CallFormat, format);
        QFETCH(int, architecture);
        QFETCH(bool, markerTokens);
        const Model& m = model(architecture, markerTokens);
        const CallMarkerTokens markers = callMarkerTokens(m.tokenizer(), format);
        QCOMPARE(markers.open.has_value(), markerTokens && !format.open.empty());
        int severalCalls = 0;
        for (const ToolPreset& preset : m_presets) {
            const test::ConstrainedRunSummary summary =
                test::runConstrainedCalls(m, preset, format, kSeeds, 100);
            QVERIFY2(summary.failure.isEmpty(),
                     qPrintable(QString::fromStdString(preset.name) + ": " + summary.failure));
            severalCalls += summary.turnsWithSeveralCalls;
        }
        // the framing between calls was exercised where the format has it
        if (format.maxCalls != 1) QVERIFY(severalCalls > 0);
    }
};

QTEST_GUILESS_MAIN(TestFormatTurns)
#include "test_format_turns.moc"
