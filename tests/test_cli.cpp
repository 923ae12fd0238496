#include <QtTest>

class Testcli : public QObject {
    Q_OBJECT
};

QTEST_GUILESS_MAIN(Testcli)
#include "test_cli.moc"
