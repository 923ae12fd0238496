#include <QtTest>

class Testsampler : public QObject {
    Q_OBJECT
};

QTEST_GUILESS_MAIN(Testsampler)
#include "test_sampler.moc"
