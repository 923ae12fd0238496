#include <QtTest>

class Testggml_types : public QObject {
    Q_OBJECT
};

QTEST_GUILESS_MAIN(Testggml_types)
#include "test_ggml_types.moc"
