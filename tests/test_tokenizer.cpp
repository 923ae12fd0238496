#include <QtTest>

class Testtokenizer : public QObject {
    Q_OBJECT
};

QTEST_GUILESS_MAIN(Testtokenizer)
#include "test_tokenizer.moc"
