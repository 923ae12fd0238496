// Attention's dot products over the kept slots (KernelTable::attentionScores / attentionValues):
// at every instruction-set level this CPU runs, each score and each output value equals the
// scalar reference, ggml::laneDot16 of the portable level over the same vectors gathered one by
// one, bit for bit. Slot counts around the sixteen-slot step, heads of 64, 48 and 8 values,
// grouped KV heads, a key stride longer than the kept slots, and a head range.
#include "model/kernels/kernel_table.h"

#include <QtTest>

#include <bit>
#include <random>
#include <vector>

using namespace sinkscope;

namespace {

std::vector<float> randomVector(size_t n, uint32_t seed, float scale) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-scale, scale);
    std::vector<float> v(n);
    for (float& x : v)
        x = dist(rng);
    return v;
}

bool sameBits(float a, float b) {
    return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
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
                const auto seed = static_cast<uint32_t>(s.kept * 131 + s.headDim);
                const auto queries = randomVector(size_t(c.heads * s.headDim), seed, 2.0f);
                const auto keyColumns = randomVector(size_t(s.kvDim * s.keyStride), seed + 1, 2.0f);
                const auto valueRows = randomVector(size_t(s.kept * s.kvDim), seed + 2, 2.0f);
                const auto weights = randomVector(size_t(c.heads * s.kept), seed + 3, 1.0f);
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
                                 qPrintable(QStringLiteral("%1 score head %2 slot %3 kept %4")
                                                .arg(isaName(isa))
                                                .arg(h)
                                                .arg(i)
                                                .arg(s.kept)));
                    }
                    for (int d = 0; d < s.headDim; ++d) {
                        for (int i = 0; i < s.kept; ++i)
                            a[size_t(i)] = valueRows[size_t(i * s.kvDim + kvHead * s.headDim + d)];
                        const float expected =
                            h == 0
                                ? -7.0f
                                : portable.laneDot16(weights.data() + h * s.kept, a.data(), s.kept);
                        QVERIFY2(sameBits(out[size_t(h * s.headDim + d)], expected),
                                 qPrintable(QStringLiteral("%1 value head %2 dim %3 kept %4")
                                                .arg(isaName(isa))
                                                .arg(h)
                                                .arg(d)
                                                .arg(s.kept)));
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
