#include <QtTest>

class Testsession : public QObject {
    Q_OBJECT
};

QTEST_GUILESS_MAIN(Testsession)
#include "test_session.moc"
