// The sampler: greedy picks the argmax, top-k/top-p never pick outside their set, seeds repeat.
#include "session/sampler.h"

#include <QtTest>

#include <set>
#include <vector>

using namespace sinkscope;

class TestSampler : public QObject {
    Q_OBJECT
private slots:
    void greedyPicksArgmax() {
        Sampler sampler(SamplerOptions{.greedy = true});
        const std::vector<float> logits{0.1f, 3.0f, -1.0f, 2.9f};
        QCOMPARE(sampler.sample(logits), 1);
        const std::vector<uint8_t> allowed{1, 0, 1, 1};
        QCOMPARE(sampler.sample(logits, allowed), 3);
    }

    void topKLimitsTheChoice() {
        Sampler sampler(SamplerOptions{.temperature = 5.0f, .topK = 2, .topP = 1.0f, .seed = 7});
        const std::vector<float> logits{0, 1, 2, 3, 4, 5};
        std::set<int32_t> seen;
        for (int i = 0; i < 500; ++i)
            seen.insert(sampler.sample(logits));
        QCOMPARE(seen, (std::set<int32_t>{4, 5}));
    }

    void topPKeepsTheSmallestSufficientPrefix() {
        // probabilities ~ 0.64, 0.24, 0.09, 0.03: top-p 0.8 keeps the first two only
        Sampler sampler(SamplerOptions{.temperature = 1.0f, .topK = 0, .topP = 0.8f, .seed = 3});
        const std::vector<float> logits{3, 2, 1, 0};
        std::set<int32_t> seen;
        for (int i = 0; i < 500; ++i)
            seen.insert(sampler.sample(logits));
        QCOMPARE(seen, (std::set<int32_t>{0, 1}));
    }

    void sameSeedSameSequence() {
        const std::vector<float> logits{0.5f, 0.4f, 0.3f, 0.2f, 0.1f};
        const SamplerOptions options{.temperature = 1.0f, .topK = 0, .topP = 1.0f, .seed = 99};
        Sampler a(options), b(options);
        std::vector<int32_t> first, second;
        for (int i = 0; i < 50; ++i) {
            first.push_back(a.sample(logits));
            second.push_back(b.sample(logits));
        }
        QCOMPARE(first, second);
        QVERIFY(std::set<int32_t>(first.begin(), first.end()).size() > 1);
    }

    void frequenciesFollowTheDistribution() {
        // logits ln(3), 0 -> probabilities 0.75, 0.25
        Sampler sampler(SamplerOptions{.temperature = 1.0f, .topK = 0, .topP = 1.0f, .seed = 5});
        const std::vector<float> logits{std::log(3.0f), 0.0f};
        int zeros = 0;
        const int n = 20000;
        for (int i = 0; i < n; ++i)
            zeros += sampler.sample(logits) == 0;
        QCOMPARE_LE(std::abs(zeros / double(n) - 0.75), 0.02);
    }
};

QTEST_GUILESS_MAIN(TestSampler)
#include "test_sampler.moc"
