// Constrained calls in every format on a random-weight qwen2 model (format_turns.h).
#include "format_turns.h"

using namespace sinkscope;

class TestFormatTurns : public QObject {
    Q_OBJECT
    std::unique_ptr<Model> m_withMarkers = test::tinyModel("qwen2", true);
    std::unique_ptr<Model> m_plain = test::tinyModel("qwen2", false);

private slots:
    void constrainedCallsAlwaysValidate_data() { test::addFormatTurnRows(); }
    void constrainedCallsAlwaysValidate() {
        QFETCH(CallFormat, format);
        QFETCH(bool, markerTokens);
        test::checkFormatTurns(markerTokens ? *m_withMarkers : *m_plain, format, markerTokens);
    }
};

QTEST_GUILESS_MAIN(TestFormatTurns)
#include "test_format_turns_qwen2.moc"
