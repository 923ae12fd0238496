// Attention's dot products over the kept slots (KernelTable::attentionScores / attentionValues):
// at every instruction-set level this CPU runs, each score and each output value equals the
// scalar reference, ggml::laneDot16 of the portable level over the same vectors gathered one by
// one, bit for bit. Slot counts around the sixteen-slot step, heads of 64, 48 and 8 values,
// grouped KV heads, a key stride longer than the kept slots, a head range, and runs of slots.
#include "model/kernels/kernel_table.h"
#include "quant_test_support.h"

#include <QtTest>

#include <bit>
#include <limits>
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

// One chunk case: a level, `tokens` queries over `shape.kept` gathered slots, token t seeing the
// first kept[t] of them (the last token all, earlier ones fewer, as in a chunk of sinks).
struct ChunkCase {
    Isa isa = Isa::Portable;
    const KernelTable* level = nullptr;
    AttentionShape shape;
    int heads = 0;
    int tokens = 0;
    std::vector<int> kept;
};

// Runs body(case, generator) for every supported level, gathered count, token count and head
// shape (heads of 64, 48, 8, 40 and 128 values); returns how many levels ran.
template <typename Body> int forEveryChunkCase(Body body) {
    int levels = 0;
    for (const Isa isa : kAllIsas) {
        if (!isaSupported(isa)) continue;
        for (const int gathered : {1, 15, 16, 17, 40, 257})
            for (const int tokens : {1, 3, KernelTable::kMaxScoreTokens})
                for (const auto& [headDim, heads, groupSize] :
                     std::vector<std::tuple<int, int, int>>{
                         {64, 6, 3}, {48, 4, 2}, {8, 2, 1}, {40, 2, 1}, {128, 2, 2}}) {
                    ChunkCase c;
                    c.isa = isa;
                    c.level = &kernelsFor(isa);
                    c.shape.kept = gathered;
                    c.shape.headDim = headDim;
                    c.shape.groupSize = groupSize;
                    c.shape.kvDim = heads / groupSize * headDim;
                    c.shape.keyStride = gathered + 5;
                    c.heads = heads;
                    c.tokens = tokens;
                    for (int t = 0; t < tokens; ++t)
                        c.kept.push_back(std::max(1, gathered - 5 * (tokens - 1 - t)));
                    std::mt19937 generator(
                        static_cast<uint32_t>(gathered * 31 + tokens * 7 + headDim));
                    body(c, generator);
                    if (QTest::currentTestFailed()) return levels;
                }
        ++levels;
    }
    return levels;
}

// Per-token buffers and the pointer arrays the kernels take.
struct TokenBuffers {
    std::vector<std::vector<float>> buffers;
    void add(std::vector<float> values) { buffers.push_back(std::move(values)); }
    std::vector<float>& at(int t) { return buffers[size_t(t)]; }
    std::vector<float*> rows() {
        std::vector<float*> all;
        for (auto& buffer : buffers)
            all.push_back(buffer.data());
        return all;
    }
    std::vector<const float*> constRows() {
        std::vector<const float*> all;
        for (auto& buffer : buffers)
            all.push_back(buffer.data());
        return all;
    }
};

// A chunk case's random keys [kvDim][keyStride] and each token's query [heads][headDim].
struct ChunkInputs {
    std::vector<float> keyColumns;
    TokenBuffers queries;
};

ChunkInputs randomInputs(const ChunkCase& c, std::mt19937& generator) {
    ChunkInputs in;
    in.keyColumns = randomValues(size_t(c.shape.kvDim * c.shape.keyStride), 2.0f, generator);
    for (int t = 0; t < c.tokens; ++t)
        in.queries.add(randomValues(size_t(c.heads * c.shape.headDim), 2.0f, generator));
    return in;
}

// Each token's scores [heads][c.shape.kept] by attentionScoresTokens over `shape` for heads
// [1, heads), -7 wherever it writes nothing.
TokenBuffers scoresOf(const ChunkCase& c, const AttentionShape& shape, ChunkInputs& in) {
    TokenBuffers scores;
    for (int t = 0; t < c.tokens; ++t)
        scores.add(std::vector<float>(size_t(c.heads * c.shape.kept), -7.0f));
    c.level->attentionScoresTokens(shape, c.tokens, in.queries.constRows().data(), c.kept.data(),
                                   in.keyColumns.data(), 0.125f, scores.rows().data(), 1, c.heads);
    return scores;
}

// Token t's outputs of the many-token kernel against the one-token kernel's, bit for bit.
bool sameAsAlone(const ChunkCase& c, int t, const std::vector<float>& got,
                 const std::vector<float>& alone) {
    for (size_t i = 0; i < alone.size(); ++i)
        if (!sameBits(got[i], alone[i])) {
            QTest::qFail(where(c.isa,
                               QStringLiteral("token %1 of %2, value %3, head dim %4")
                                   .arg(t)
                                   .arg(c.tokens)
                                   .arg(i)
                                   .arg(c.shape.headDim),
                               c.kept[size_t(t)])
                             .constData(),
                         __FILE__, __LINE__);
            return false;
        }
    return true;
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
        const int compared = forEveryChunkCase([](const ChunkCase& c, std::mt19937& generator) {
            ChunkInputs in = randomInputs(c, generator);
            TokenBuffers scores = scoresOf(c, c.shape, in);
            for (int t = 0; t < c.tokens; ++t) {
                AttentionShape own = c.shape;
                own.kept = c.kept[size_t(t)];
                std::vector<float> alone(size_t(c.heads * c.shape.kept), -7.0f);
                c.level->attentionScores(own, in.queries.at(t).data(), in.keyColumns.data(), 0.125f,
                                         alone.data(), 1, c.heads);
                if (!sameAsAlone(c, t, scores.at(t), alone)) return;
            }
        });
        QVERIFY(compared >= 1);
    }

    // A run of slots [scoreFirst, scoreEnd) (streaming positions score a tool block's folded
    // sinks with a query of their own): for one token and several, at every level, each token's
    // scores inside the run equal the whole call's, bit for bit, and nothing outside the run or
    // past the token's kept slots is written.
    void aRunOfSlotsScoresOnlyItsSlots() {
        const int compared = forEveryChunkCase([](const ChunkCase& c, std::mt19937& generator) {
            ChunkInputs in = randomInputs(c, generator);
            TokenBuffers whole = scoresOf(c, c.shape, in);
            const int gathered = c.shape.kept;
            for (const auto& [first, end] :
                 std::vector<std::pair<int, int>>{{0, gathered / 2},
                                                  {gathered / 3, std::numeric_limits<int>::max()},
                                                  {1, gathered - 1},
                                                  {gathered - 1, gathered}}) {
                AttentionShape run = c.shape;
                run.scoreFirst = first;
                run.scoreEnd = end;
                TokenBuffers scores = scoresOf(c, run, in);
                for (int t = 0; t < c.tokens; ++t) {
                    const int kept = c.kept[size_t(t)];
                    std::vector<float> expected(size_t(c.heads * gathered), -7.0f);
                    for (int h = 1; h < c.heads; ++h)
                        for (int i = first; i < std::min(kept, end); ++i)
                            expected[size_t(h * kept + i)] = whole.at(t)[size_t(h * kept + i)];
                    if (!sameAsAlone(c, t, scores.at(t), expected)) return;
                }
            }
        });
        QVERIFY(compared >= 1);
    }

    // attentionValuesTokens: token t's outputs equal attentionValues' for its own weights and
    // kept count, bit for bit, at every level; heads outside the range stay untouched.
    void severalTokensWeighValuesAsEachAlone() {
        const int compared = forEveryChunkCase([](const ChunkCase& c, std::mt19937& generator) {
            const AttentionShape& shape = c.shape;
            const auto valueRows = randomValues(size_t(shape.kept * shape.kvDim), 2.0f, generator);
            TokenBuffers weights, outs;
            for (int t = 0; t < c.tokens; ++t) {
                weights.add(randomValues(size_t(c.heads * c.kept[size_t(t)]), 1.0f, generator));
                outs.add(std::vector<float>(size_t(c.heads * shape.headDim), -7.0f));
            }
            c.level->attentionValuesTokens(shape, c.tokens, weights.constRows().data(),
                                           c.kept.data(), valueRows.data(), outs.rows().data(), 1,
                                           c.heads);
            for (int t = 0; t < c.tokens; ++t) {
                AttentionShape own = shape;
                own.kept = c.kept[size_t(t)];
                std::vector<float> alone(size_t(c.heads * shape.headDim), -7.0f);
                c.level->attentionValues(own, weights.at(t).data(), valueRows.data(), alone.data(),
                                         1, c.heads);
                if (!sameAsAlone(c, t, outs.at(t), alone)) return;
            }
        });
        QVERIFY(compared >= 1);
    }
};

QTEST_GUILESS_MAIN(TestAttentionKernels)
#include "test_attention_kernels.moc"
