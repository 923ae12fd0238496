#include <QtTest>

class Testbudget_mask : public QObject {
    Q_OBJECT
};

QTEST_GUILESS_MAIN(Testbudget_mask)
#include "test_budget_mask.moc"
