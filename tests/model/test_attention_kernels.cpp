// Attention's dot products over the kept slots (KernelTable::attentionScores / attentionValues):
// at every instruction-set level this CPU runs, each score and each output value equals the
// scalar reference, ggml::laneDot16 of the portable level over the same vectors gathered one by
// one, bit for bit. Slot counts around the sixteen-slot step, heads of 64, 48 and 8 values,
// grouped KV heads, a key stride longer than the kept slots, and a head range.
#include "model/kernels/kernel_table.h"
#include "quant_test_support.h"

#include <QtTest>

#include <bit>
#include <random>
#include <vector>

using namespace sinkscope;
using sinkscope::test::randomValues;

namespace {

bool sameBits(float a, float b) {
    return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

// "avx512: score of head 2, slot 7 (17 kept)"
QByteArray where(Isa isa, const QString& what, int kept) {
    return QStringLiteral("%1: %2 (%3 kept)").arg(isaName(isa), what).arg(kept).toUtf8();
}

struct Case {
    AttentionShape shape;
    int heads = 0;
};

std::vector<Case> cases() {
    std::vector<Case> all;
    for (int kept : {1, 15, 16, 17, 40, 257})
        for (const auto& [headDim, heads, groupSize] :
             std::vector<std::tuple<int, int, int>>{{64, 6, 3}, {48, 4, 2}, {8, 2, 1}}) {
            Case c;
            c.heads = heads;
            c.shape.kept = kept;
            c.shape.headDim = headDim;
            c.shape.groupSize = groupSize;
            c.shape.kvDim = heads / groupSize * headDim;
            c.shape.keyStride = kept + 5;
            all.push_back(c);
        }
    return all;
}

} // namespace

class TestAttentionKernels : public QObject {
    Q_OBJECT
private slots:
    void everyLevelEqualsTheScalarReference() {
        const KernelTable& portable = kernelsFor(Isa::Portable);
        int compared = 0;
        for (const Isa isa : kAllIsas) {
            if (!isaSupported(isa)) {
                qInfo("%s: not supported by this CPU, not compared", isaName(isa));
                continue;
            }
            const KernelTable& level = kernelsFor(isa);
            for (const Case& c : cases()) {
                const AttentionShape& s = c.shape;
                std::mt19937 generator(static_cast<uint32_t>(s.kept * 131 + s.headDim));
                const auto queries = randomValues(size_t(c.heads * s.headDim), 2.0f, generator);
                const auto keyColumns =
                    randomValues(size_t(s.kvDim * s.keyStride), 2.0f, generator);
                const auto valueRows = randomValues(size_t(s.kept * s.kvDim), 2.0f, generator);
                const auto weights = randomValues(size_t(c.heads * s.kept), 1.0f, generator);
                constexpr float scale = 0.125f;
                // heads [1, heads): the first head's outputs must stay untouched
                std::vector<float> scores(size_t(c.heads * s.kept), -7.0f);
                std::vector<float> out(size_t(c.heads * s.headDim), -7.0f);
                level.attentionScores(s, queries.data(), keyColumns.data(), scale, scores.data(), 1,
                                      c.heads);
                level.attentionValues(s, weights.data(), valueRows.data(), out.data(), 1, c.heads);
                std::vector<float> a(size_t(std::max(s.kept, s.headDim)));
                for (int h = 0; h < c.heads; ++h) {
                    const int kvHead = h / s.groupSize;
                    for (int i = 0; i < s.kept; ++i) {
                        for (int d = 0; d < s.headDim; ++d)
                            a[size_t(d)] =
                                keyColumns[size_t((kvHead * s.headDim + d) * s.keyStride + i)];
                        const float expected =
                            h == 0 ? -7.0f
                                   : portable.laneDot16(queries.data() + h * s.headDim, a.data(),
                                                        s.headDim) *
                                         scale;
                        QVERIFY2(sameBits(scores[size_t(h * s.kept + i)], expected),
                                 where(isa,
                                       QStringLiteral("score of head %1, slot %2").arg(h).arg(i),
                                       s.kept));
                    }
                    for (int d = 0; d < s.headDim; ++d) {
                        for (int i = 0; i < s.kept; ++i)
                            a[size_t(i)] = valueRows[size_t(i * s.kvDim + kvHead * s.headDim + d)];
                        const float expected =
                            h == 0
                                ? -7.0f
                                : portable.laneDot16(weights.data() + h * s.kept, a.data(), s.kept);
                        QVERIFY2(sameBits(out[size_t(h * s.headDim + d)], expected),
                                 where(isa,
                                       QStringLiteral("value of head %1, dim %2").arg(h).arg(d),
                                       s.kept));
                    }
                }
            }
            ++compared;
        }
        QVERIFY(compared >= 1);
    }

    // attentionScoresTokens (a chunk's queries against one gather) at every level: token t's
    // scores equal attentionScores' for its own kept count, bit for bit; nothing is written past
    // a token's [heads][kept_t], nor for heads outside the range.
    void severalTokensScoreAsEachAlone() {
        int compared = 0;
        for (const Isa isa : kAllIsas) {
            if (!isaSupported(isa)) continue;
            const KernelTable& level = kernelsFor(isa);
            for (const int gathered : {1, 15, 16, 17, 40, 257})
                for (const int tokens : {1, 3, KernelTable::kMaxScoreTokens})
                    for (const auto& [headDim, heads, groupSize] :
                         std::vector<std::tuple<int, int, int>>{
                             {64, 6, 3}, {48, 4, 2}, {8, 2, 1}, {128, 2, 2}}) {
                        AttentionShape shape;
                        shape.kept = gathered;
                        shape.headDim = headDim;
                        shape.groupSize = groupSize;
                        shape.kvDim = heads / groupSize * headDim;
                        shape.keyStride = gathered + 5;
                        std::mt19937 generator(
                            static_cast<uint32_t>(gathered * 31 + tokens * 7 + headDim));
                        const auto keyColumns =
                            randomValues(size_t(shape.kvDim * shape.keyStride), 2.0f, generator);
                        std::vector<std::vector<float>> queries, scores;
                        std::vector<const float*> queryRows;
                        std::vector<float*> scoreRows;
                        std::vector<int> kept;
                        for (int t = 0; t < tokens; ++t) {
                            queries.push_back(
                                randomValues(size_t(heads * headDim), 2.0f, generator));
                            scores.emplace_back(size_t(heads * gathered), -7.0f);
                            // the last token sees every gathered slot, earlier ones fewer
                            kept.push_back(std::max(1, gathered - 5 * (tokens - 1 - t)));
                        }
                        for (int t = 0; t < tokens; ++t) {
                            queryRows.push_back(queries[size_t(t)].data());
                            scoreRows.push_back(scores[size_t(t)].data());
                        }
                        level.attentionScoresTokens(shape, tokens, queryRows.data(), kept.data(),
                                                    keyColumns.data(), 0.125f, scoreRows.data(), 1,
                                                    heads);
                        for (int t = 0; t < tokens; ++t) {
                            AttentionShape own = shape;
                            own.kept = kept[size_t(t)];
                            std::vector<float> alone(size_t(heads * gathered), -7.0f);
                            level.attentionScores(own, queries[size_t(t)].data(), keyColumns.data(),
                                                  0.125f, alone.data(), 1, heads);
                            for (size_t i = 0; i < alone.size(); ++i)
                                QVERIFY2(sameBits(scores[size_t(t)][i], alone[i]),
                                         where(isa,
                                               QStringLiteral("token %1 of %2, value %3, head "
                                                              "dim %4")
                                                   .arg(t)
                                                   .arg(tokens)
                                                   .arg(i)
                                                   .arg(headDim),
                                               kept[size_t(t)]));
                        }
                    }
            ++compared;
        }
        QVERIFY(compared >= 1);
    }

    // attentionValuesTokens: token t's outputs equal attentionValues' for its own weights and
    // kept count, bit for bit, at every level; heads outside the range stay untouched.
    void severalTokensWeighValuesAsEachAlone() {
        int compared = 0;
        for (const Isa isa : kAllIsas) {
            if (!isaSupported(isa)) continue;
            const KernelTable& level = kernelsFor(isa);
            for (const int gathered : {1, 15, 16, 17, 40, 257})
                for (const int tokens : {1, 3, KernelTable::kMaxScoreTokens})
                    for (const auto& [headDim, heads, groupSize] :
                         std::vector<std::tuple<int, int, int>>{
                             {64, 6, 3}, {48, 4, 2}, {8, 2, 1}, {40, 2, 1}, {128, 2, 2}}) {
                        AttentionShape shape;
                        shape.kept = gathered;
                        shape.headDim = headDim;
                        shape.groupSize = groupSize;
                        shape.kvDim = heads / groupSize * headDim;
                        shape.keyStride = gathered;
                        std::mt19937 generator(
                            static_cast<uint32_t>(gathered * 37 + tokens * 5 + headDim));
                        const auto valueRows =
                            randomValues(size_t(gathered * shape.kvDim), 2.0f, generator);
                        std::vector<std::vector<float>> weights, outs;
                        std::vector<const float*> weightRows;
                        std::vector<float*> outRows;
                        std::vector<int> kept;
                        for (int t = 0; t < tokens; ++t) {
                            kept.push_back(std::max(1, gathered - 3 * (tokens - 1 - t)));
                            weights.push_back(
                                randomValues(size_t(heads * kept.back()), 1.0f, generator));
                            outs.emplace_back(size_t(heads * headDim), -7.0f);
                        }
                        for (int t = 0; t < tokens; ++t) {
                            weightRows.push_back(weights[size_t(t)].data());
                            outRows.push_back(outs[size_t(t)].data());
                        }
                        level.attentionValuesTokens(shape, tokens, weightRows.data(), kept.data(),
                                                    valueRows.data(), outRows.data(), 1, heads);
                        for (int t = 0; t < tokens; ++t) {
                            AttentionShape own = shape;
                            own.kept = kept[size_t(t)];
                            std::vector<float> alone(size_t(heads * headDim), -7.0f);
                            level.attentionValues(own, weights[size_t(t)].data(), valueRows.data(),
                                                  alone.data(), 1, heads);
                            for (size_t i = 0; i < alone.size(); ++i)
                                QVERIFY2(sameBits(outs[size_t(t)][i], alone[i]),
                                         where(isa,
                                               QStringLiteral("token %1 of %2, output %3, head "
                                                              "dim %4")
                                                   .arg(t)
                                                   .arg(tokens)
                                                   .arg(i)
                                                   .arg(headDim),
                                               kept[size_t(t)]));
                        }
                    }
            ++compared;
        }
        QVERIFY(compared >= 1);
    }
};

QTEST_GUILESS_MAIN(TestAttentionKernels)
#include "test_attention_kernels.moc"
