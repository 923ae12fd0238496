#include <QtTest>

class Testmodel : public QObject {
    Q_OBJECT
};

QTEST_GUILESS_MAIN(Testmodel)
#include "test_model.moc"
