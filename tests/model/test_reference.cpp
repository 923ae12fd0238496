// stories260K against llama.cpp's own outputs (shared/reference/stories260K-llamacpp.json):
// token ids, logits, greedy continuations and perplexity.
#include "eval/perplexity.h"
#include "model/model.h"
#include "session/session.h"
#include "test_support.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include <cmath>
#include <memory>

using namespace sinkscope;

namespace {

std::vector<int32_t> idsOf(const QJsonValue& array) {
    std::vector<int32_t> ids;
    for (const QJsonValue& v : array.toArray())
        ids.push_back(v.toInt());
    return ids;
}

} // namespace

class TestReference : public QObject {
    Q_OBJECT
    std::unique_ptr<Model> m_model;
    QJsonObject m_reference;

    std::vector<int32_t> greedy(const std::vector<int32_t>& prompt, int kvBits) {
        SessionOptions options;
        options.kvWindow = 0; // the budget window: 2048, longer than every sequence here
        options.kvBits = kvBits;
        Session session(*m_model, options);
        Sampler sampler(SamplerOptions{.greedy = true});
        return session.generate(prompt, 64, sampler, {}, true).tokens;
    }

private slots:
    void init() {
        SINKSCOPE_REQUIRE_STORIES();
        if (!m_model) {
            std::string error;
            m_model = Model::load(test::storiesModelPath().toStdString(), error);
            QVERIFY2(m_model, error.c_str());
            QFile file(test::sharedPath("reference/stories260K-llamacpp.json"));
            QVERIFY(file.open(QIODevice::ReadOnly));
            m_reference = QJsonDocument::fromJson(file.readAll()).object();
        }
    }

    void configMatchesTheModelCard() {
        const ModelConfig& c = m_model->config();
        QCOMPARE(c.nVocab, 512);
        QCOMPARE(c.nEmbd, 64);
        QCOMPARE(c.nLayer, 5);
        QCOMPARE(c.nHead, 8);
        QCOMPARE(c.nHeadKv, 4);
        QCOMPARE(c.headDim, 8);
        QCOMPARE(c.nFf, 172);
        QCOMPARE(c.nCtxTrain, 2048);
        QCOMPARE(c.rope, RopeStyle::AdjacentPairs);
    }

    void logitsAfterThePrompt() {
        const QJsonObject ref = m_reference["logits"].toObject();
        const auto prompt =
            m_model->tokenizer().encode(ref["prompt"].toString().toStdString(), true);
        QCOMPARE(prompt, idsOf(ref["prompt_ids"]));
        // The reference ran llama.cpp with its default f16 cache; kv_bits 16 computes as it does.
        SessionOptions options;
        options.kvBits = 16;
        Session session(*m_model, options);
        const auto logits = session.prefill(prompt);
        for (const QJsonValue& entry : ref["top10"].toArray()) {
            const int id = entry["id"].toInt();
            QVERIFY2(std::fabs(logits[id] - entry["logit"].toDouble()) < 1e-3,
                     qPrintable(QString("id %1: %2 vs %3")
                                    .arg(id)
                                    .arg(logits[id])
                                    .arg(entry["logit"].toDouble())));
        }
        const QJsonArray first8 = ref["first8"].toArray();
        for (int i = 0; i < first8.size(); ++i)
            QVERIFY(std::fabs(logits[i] - first8[i].toDouble()) < 1e-3);

        // An f32 cache differs from f16 only by the rounding of K, V, the query and the weights.
        options.kvBits = 32;
        Session exact(*m_model, options);
        const auto exactLogits = exact.prefill(prompt);
        double worst = 0;
        for (const QJsonValue& entry : ref["top10"].toArray())
            worst = std::max(
                worst, std::fabs(exactLogits[entry["id"].toInt()] - entry["logit"].toDouble()));
        qInfo("kv_bits 32: largest top-10 logit difference from llama.cpp's f16 cache %.5f", worst);
        QVERIFY(worst < 1e-2);
    }

    void greedyContinuationsMatch_data() {
        QTest::addColumn<int>("index");
        QTest::addRow("Once upon a time") << 0;
        QTest::addRow("Lily wanted to") << 1;
    }
    void greedyContinuationsMatch() {
        QFETCH(int, index);
        const QJsonObject ref =
            m_reference["greedy"].toObject()["cases"].toArray()[index].toObject();
        const auto prompt =
            m_model->tokenizer().encode(ref["prompt"].toString().toStdString(), true);
        QCOMPARE(prompt, idsOf(ref["prompt_ids"]));
        const auto expected = idsOf(ref["generated_ids"]);
        QCOMPARE(greedy(prompt, 32), expected);
        QCOMPARE(QString::fromStdString(m_model->tokenizer().decode(expected)),
                 ref["continuation"].toString());
        // f16 keys and values keep the reference text; int8 drifts, and how far is reported.
        QCOMPARE(greedy(prompt, 16), expected);
        const auto int8 = greedy(prompt, 8);
        int matching = 0;
        while (matching < int(expected.size()) && int8[matching] == expected[matching])
            ++matching;
        qInfo("kv_bits 8: %d of %d greedy tokens match the reference", matching,
              int(expected.size()));
        QVERIFY(matching >= 16);
    }

    void perplexityMatchesLlamaCpp() {
        QFile text(test::sharedPath("text/stories-eval.txt"));
        QVERIFY(text.open(QIODevice::ReadOnly));
        const std::string contents = text.readAll().toStdString();
        const auto tokens = m_model->tokenizer().encode(perplexityText(contents), true);
        SessionOptions options;
        options.kvWindow = 0;
        options.kvBits = 32;
        const PerplexityResult result = chunkedPerplexity(*m_model, tokens, 256, options);
        const double expected = m_reference["perplexity"].toObject()["n_ctx_256"].toDouble();
        qInfo("perplexity %.4f over %d chunks (llama.cpp: %.4f)", result.perplexity, result.chunks,
              expected);
        QVERIFY(std::fabs(result.perplexity - expected) <= 0.002);
    }
};

QTEST_GUILESS_MAIN(TestReference)
#include "test_reference.moc"
