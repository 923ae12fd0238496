// Perplexity of every synthetic model in shared/reference/models against llama.cpp's
// llamacpp.json figures: llama-perplexity's method (its perplexity_note: chunks of 128 tokens,
// the second half of each scored), the stories text as `llama-perplexity -f` reads it, the f16
// KV cache llama.cpp uses by default.
#include "eval/perplexity.h"
#include "model/model.h"
#include "test_support.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include <cmath>
#include <memory>

using namespace sinkscope;

namespace {

constexpr int kContext = 128;                // the figures' -c 128
constexpr double kRelativeTolerance = 0.005; // the models issue's bound

QString modelsDir() {
    return test::sharedPath("reference/models");
}

} // namespace

class TestReferencePerplexity : public QObject {
    Q_OBJECT
    QJsonObject m_files;
    std::string m_text;

private slots:
    void initTestCase() {
        QFile figures(QDir(modelsDir()).filePath("llamacpp.json"));
        if (!figures.open(QIODevice::ReadOnly))
            QSKIP(qPrintable("llama.cpp's reference figures not found at " + figures.fileName() +
                             " (set SINKSCOPE_SHARED)"));
        m_files = QJsonDocument::fromJson(figures.readAll()).object()["files"].toObject();
        QVERIFY(!m_files.isEmpty());
        QFile text(test::sharedPath("text/stories-eval.txt"));
        if (!text.open(QIODevice::ReadOnly))
            QSKIP(qPrintable("the evaluation text is not at " + text.fileName()));
        m_text = text.readAll().toStdString();
    }

    void perplexityMatchesLlamaCpp_data() {
        QTest::addColumn<QString>("file");
        for (const QString& name : m_files.keys())
            QTest::newRow(qPrintable(name)) << name;
    }
    void perplexityMatchesLlamaCpp() {
        QFETCH(QString, file);
#ifdef SINKSCOPE_SANITIZED
        // 60k tokens through every weight type take a minute optimized, far longer instrumented:
        // here one file per family; the optimized build checks them all.
        if (!file.endsWith("-F16.gguf"))
            QSKIP("sanitized build: the F16 files only (the optimized build runs every file)");
#endif
        std::string error;
        const auto model = Model::load(QDir(modelsDir()).filePath(file).toStdString(), error);
        QVERIFY2(model, error.c_str());
        const Tokenizer& tokenizer = model->tokenizer();
        const std::vector<int32_t> tokens =
            tokenizer.encode(perplexityText(m_text), tokenizer.addBos());
        SessionOptions options;
        options.kvWindow = 0; // the budget window, longer than a chunk
        options.kvBits = 16;
        const PerplexityResult result = chunkedPerplexity(*model, tokens, kContext, options);
        const double expected = m_files[file].toObject()["perplexity_ctx128"].toDouble();
        QVERIFY(expected > 0);
        const double relative = std::abs(result.perplexity - expected) / expected;
        qInfo("%s: perplexity %.4f over %d chunks, llama.cpp %.4f (%.3f%%)", qPrintable(file),
              result.perplexity, result.chunks, expected, 100 * relative);
        QVERIFY2(relative <= kRelativeTolerance,
                 qPrintable(QString("%1, llama.cpp %2").arg(result.perplexity).arg(expected)));
    }
};

QTEST_GUILESS_MAIN(TestReferencePerplexity)
#include "test_reference_perplexity.moc"
