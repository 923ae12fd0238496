#include <QtTest>

class Testops : public QObject {
    Q_OBJECT
};

QTEST_GUILESS_MAIN(Testops)
#include "test_ops.moc"
