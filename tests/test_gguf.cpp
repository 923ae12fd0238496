#include <QtTest>

class Testgguf : public QObject {
    Q_OBJECT
};

QTEST_GUILESS_MAIN(Testgguf)
#include "test_gguf.moc"
