// Constrained calls in every format on a random-weight llama model (format_turns.h).
#include "format_turns.h"

using namespace sinkscope;

class TestFormatTurns : public QObject {
    Q_OBJECT
    std::unique_ptr<Model> m_withMarkers = test::tinyModel("llama", true);
    std::unique_ptr<Model> m_plain = test::tinyModel("llama", false);

private slots:
    void constrainedCallsAlwaysValidate_data() { test::addFormatTurnRows(); }
    void constrainedCallsAlwaysValidate() {
        QFETCH(CallFormat, format);
        QFETCH(bool, markerTokens);
        test::checkFormatTurns(markerTokens ? *m_withMarkers : *m_plain, format, markerTokens);
    }
};

QTEST_GUILESS_MAIN(TestFormatTurns)
#include "test_format_turns_llama.moc"
