#include <QtTest>

class Testreference : public QObject {
    Q_OBJECT
};

QTEST_GUILESS_MAIN(Testreference)
#include "test_reference.moc"
