#include <QtTest>

class Testkv_cache : public QObject {
    Q_OBJECT
};

QTEST_GUILESS_MAIN(Testkv_cache)
#include "test_kv_cache.moc"
