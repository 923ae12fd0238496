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
};

QTEST_GUILESS_MAIN(TestAttentionKernels)
#include "test_attention_kernels.moc"
