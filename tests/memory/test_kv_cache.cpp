// The bounded KV cache: sink slots and ring placement checked against keep() at every step, a
// fixed allocation, and the row encodings of each kvBits (docs: shared/docs/memory-architecture.md,
// sections 3 and 4).
#include <QtTest>

#include "gguf/ggml_types.h"
#include "memory/budget.h"
#include "memory/kv_cache.h"
#include "memory/mask.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

using namespace sinkscope;

Q_DECLARE_METATYPE(sinkscope::KvCacheShape)

class TestKvCache : public QObject {
    Q_OBJECT

private slots:
    void streamKeepsExactlyTheMask_data();
    void streamKeepsExactlyTheMask();
    void sinkRequestsBeyondCapacityGoToTheRing();
    void lateSinkTakesTheNextSinkSlot();
    void allocationIsFixed_data();
    void allocationIsFixed();
    void allocationMatchesTheBudgetForStories();
    void f32RoundTripIsExact();
    void f16RoundTripWithinHalfPrecision();
    void int8RoundTripWithinHalfAStep_data();
    void int8RoundTripWithinHalfAStep();
    void int8RepresentableValuesAreExact();
    void int8AllZeroGroup();
    void int8OutlierOnlyCoarsensItsGroup();
    void clearForgetsTokensKeepsAllocation();
    void invalidShapesThrow_data();
    void invalidShapesThrow();
    void rowAccessOutOfRangeThrows();
    void int8DecodeIsScaleTimesQuant_data();
    void int8DecodeIsScaleTimesQuant();
    void gatherEqualsRowReads_data();
    void gatherEqualsRowReads();
    void gatherOutOfRangeThrows();
};

namespace {

KvCacheShape makeShape(int layers, int kvDim, int sinkSlots, int window, int kvBits) {
    KvCacheShape shape;
    shape.layers = layers;
    shape.kvDim = kvDim;
    shape.sinkSlots = sinkSlots;
    shape.window = window;
    shape.kvBits = kvBits;
    return shape;
}

int32_t tokenAt(int64_t position) {
    return static_cast<int32_t>(1000 + position);
}

std::vector<float> randomRow(int width, std::mt19937& random, float spread) {
    std::normal_distribution<float> normal(0.0f, spread);
    std::vector<float> row(static_cast<size_t>(width));
    for (float& value : row)
        value = normal(random);
    return row;
}

std::vector<float> readBackK(const KvCache& cache, int layer, int slot) {
    std::vector<float> row(static_cast<size_t>(cache.shape().kvDim));
    cache.readK(layer, slot, row.data());
    return row;
}

std::vector<float> roundTripK(KvCache& cache, const std::vector<float>& row) {
    cache.writeK(0, 0, row.data());
    return readBackK(cache, 0, 0);
}

std::set<int64_t> occupiedPositions(const KvCache& cache) {
    std::set<int64_t> positions;
    for (const SlotInfo& slot : cache.slotInfos())
        if (slot.kind != SlotKind::Empty) positions.insert(slot.position);
    return positions;
}

// Positions 0..S-1 are the sinks (the default prefix), so the key at k is a sink when k < S.
std::set<int64_t> keptPositions(int64_t q, int window, int sinkSlots) {
    std::set<int64_t> positions;
    for (int64_t k = 0; k <= q; ++k)
        if (keep(q, k, window, k < sinkSlots)) positions.insert(k);
    return positions;
}

// The int8 encoding's scale of values [begin, end): their largest magnitude over 127.
float groupScale(const std::vector<float>& values, size_t begin, size_t end) {
    float absMax = 0.0f;
    for (size_t i = begin; i < end; ++i)
        absMax = std::max(absMax, std::fabs(values[i]));
    return absMax / 127.0f;
}

// Every value of the row is within half a quantization step of its group (scale / 2), with a
// few float ulps of slack for the division and the product.
void verifyWithinHalfStep(const std::vector<float>& original, const std::vector<float>& decoded) {
    const size_t group = static_cast<size_t>(kKvGroup);
    for (size_t begin = 0; begin < original.size(); begin += group) {
        const size_t end = std::min(begin + group, original.size());
        const float scale = groupScale(original, begin, end);
        for (size_t i = begin; i < end; ++i) {
            const float error = std::fabs(original[i] - decoded[i]);
            QVERIFY2(error <= scale * 0.5f * (1.0f + 1e-4f) + 1e-30f,
                     qPrintable(QStringLiteral("value %1: %2 -> %3, scale %4")
                                    .arg(i)
                                    .arg(double(original[i]))
                                    .arg(double(decoded[i]))
                                    .arg(double(scale))));
        }
    }
}

} // namespace

void TestKvCache::streamKeepsExactlyTheMask_data() {
    QTest::addColumn<int>("sinkSlots");
    QTest::addColumn<int>("window");
    QTest::addColumn<int>("tokens");

    QTest::newRow("S 3, W 5, 200 tokens") << 3 << 5 << 200;
    QTest::newRow("no sinks, W 4") << 0 << 4 << 50;
    QTest::newRow("S 1, W 1") << 1 << 1 << 20;
    QTest::newRow("S 4, W 32, 300 tokens") << 4 << 32 << 300;
    QTest::newRow("stream shorter than the window") << 2 << 16 << 10;
}

void TestKvCache::streamKeepsExactlyTheMask() {
    QFETCH(int, sinkSlots);
    QFETCH(int, window);
    QFETCH(int, tokens);
    KvCache cache(makeShape(2, 8, sinkSlots, window, 8));

    for (int64_t q = 0; q < tokens; ++q) {
        const bool sink = q < sinkSlots;
        const int64_t nonSinkBefore = std::max<int64_t>(0, q - sinkSlots);
        const int expectedSlot =
            sink ? static_cast<int>(q) : sinkSlots + static_cast<int>(nonSinkBefore % window);
        if (!sink) QCOMPARE(cache.ringHead(), expectedSlot);
        const SlotInfo occupant = cache.slotInfos()[static_cast<size_t>(expectedSlot)];

        QCOMPARE(cache.place(tokenAt(q), q, sink), expectedSlot);

        // The token written over is exactly the one that just left the window.
        if (occupant.kind != SlotKind::Empty) {
            QCOMPARE(occupant.position, q - window);
            QVERIFY(keep(q - 1, occupant.position, window, false));
            QVERIFY(!keep(q, occupant.position, window, false));
        }
        QCOMPARE(occupiedPositions(cache), keptPositions(q, window, sinkSlots));

        const int64_t nonSinkTokens = sink ? 0 : nonSinkBefore + 1;
        QCOMPARE(cache.evictions(), std::max<int64_t>(0, nonSinkTokens - window));
        QCOMPARE(cache.ringWrites(), nonSinkTokens);
        QCOMPARE(cache.ringHead(), sinkSlots + static_cast<int>(nonSinkTokens % window));
        QCOMPARE(cache.sinksUsed(), static_cast<int>(std::min<int64_t>(q + 1, sinkSlots)));

        for (int slot = 0; slot < cache.slotCount(); ++slot) {
            const SlotInfo& info = cache.slotInfos()[static_cast<size_t>(slot)];
            if (info.kind == SlotKind::Empty) continue;
            QCOMPARE(info.token, tokenAt(info.position));
            // Sink slots hold their sink forever once filled; ring slots only ring tokens.
            QCOMPARE(info.kind, slot < sinkSlots ? SlotKind::Sink : SlotKind::Ring);
            if (slot < sinkSlots) QCOMPARE(info.position, int64_t(slot));
        }
    }
}

void TestKvCache::sinkRequestsBeyondCapacityGoToTheRing() {
    KvCache cache(makeShape(1, 8, 2, 3, 8));
    QCOMPARE(cache.place(10, 0, true), 0);
    QCOMPARE(cache.place(11, 1, true), 1);
    // The sink slots are full: the next sink requests are stored as ordinary ring tokens.
    QCOMPARE(cache.place(12, 2, true), 2);
    QCOMPARE(cache.place(13, 3, true), 3);
    QCOMPARE(cache.sinksUsed(), 2);
    QCOMPARE(cache.ringWrites(), int64_t(2));
    QCOMPARE(cache.slotInfos()[2].kind, SlotKind::Ring);
    QCOMPARE(cache.slotInfos()[3].kind, SlotKind::Ring);

    // As ring tokens they are evicted in turn; the real sinks stay.
    QCOMPARE(cache.place(14, 4, false), 4);
    QCOMPARE(cache.evictions(), int64_t(0));
    QCOMPARE(cache.place(15, 5, false), 2);
    QCOMPARE(cache.evictions(), int64_t(1));
    QCOMPARE(cache.slotInfos()[2].token, 15);
    QCOMPARE(cache.slotInfos()[0].token, 10);
    QCOMPARE(cache.slotInfos()[1].token, 11);
}

void TestKvCache::lateSinkTakesTheNextSinkSlot() {
    // A tool block after some ordinary tokens: its sinks still take [0, S) in order.
    KvCache cache(makeShape(1, 8, 2, 4, 16));
    QCOMPARE(cache.place(20, 0, false), 2);
    QCOMPARE(cache.place(21, 1, true), 0);
    QCOMPARE(cache.place(22, 2, false), 3);
    QCOMPARE(cache.place(23, 3, true), 1);
    QCOMPARE(cache.place(24, 4, false), 4);
    QCOMPARE(cache.slotInfos()[0].position, int64_t(1));
    QCOMPARE(cache.slotInfos()[1].position, int64_t(3));
    QCOMPARE(cache.ringWrites(), int64_t(3));
    QCOMPARE(cache.ringHead(), 5);
}

void TestKvCache::allocationIsFixed_data() {
    QTest::addColumn<int>("kvBits");
    QTest::addColumn<int>("kvDim");
    QTest::addColumn<int>("rowBytes"); // one stored row, scales included

    QTest::newRow("f32, 64") << 32 << 64 << 256;
    QTest::newRow("f32, 40") << 32 << 40 << 160;
    QTest::newRow("f16, 64") << 16 << 64 << 128;
    QTest::newRow("f16, 8") << 16 << 8 << 16;
    QTest::newRow("int8, 64: 2 groups") << 8 << 64 << 64 + 2 * 4;
    QTest::newRow("int8, 32: 1 group") << 8 << 32 << 32 + 4;
    QTest::newRow("int8, 8: one whole group") << 8 << 8 << 32 + 4;
    QTest::newRow("int8, 40: two whole groups") << 8 << 40 << 64 + 2 * 4;
}

void TestKvCache::allocationIsFixed() {
    QFETCH(int, kvBits);
    QFETCH(int, kvDim);
    QFETCH(int, rowBytes);
    const int layers = 3;
    const int sinkSlots = 4;
    const int window = 7;
    KvCache cache(makeShape(layers, kvDim, sinkSlots, window, kvBits));
    // K and V: [layers][sinkSlots + window][rowBytes] each.
    const int64_t expected = int64_t(2) * layers * (sinkSlots + window) * rowBytes;
    QCOMPARE(cache.bytesAllocated(), expected);

    std::mt19937 random(7);
    const std::vector<float> row = randomRow(kvDim, random, 1.0f);
    for (int64_t position = 0; position < 10000; ++position) {
        const int slot = cache.place(tokenAt(position), position, position % 13 == 0);
        for (int layer = 0; layer < layers; ++layer) {
            cache.writeK(layer, slot, row.data());
            cache.writeV(layer, slot, row.data());
        }
    }
    QCOMPARE(cache.evictions(), cache.ringWrites() - window);
    QCOMPARE(cache.bytesAllocated(), expected);
}

void TestKvCache::allocationMatchesTheBudgetForStories() {
    // stories260K: 5 layers, kv 32 (a whole group), no engram sites, budget window 2048. With
    // int8 the ring alone is exactly what the budget counts.
    BudgetShape budgetShape;
    budgetShape.layers = 5;
    budgetShape.kvHeads = 4;
    budgetShape.headDim = 8;
    budgetShape.dModel = 64;
    budgetShape.maxSeq = 2048;
    const int64_t window = budgetWindow(budgetShape);
    KvCache cache(makeShape(5, 32, 0, static_cast<int>(window), 8));
    QCOMPARE(cache.bytesAllocated(), bytesPerPosition(budgetShape) * window);
    QVERIFY(cache.bytesAllocated() <= kKvBudgetBytes);
}

void TestKvCache::f32RoundTripIsExact() {
    const KvCacheShape shape = makeShape(2, 40, 1, 3, 32);
    KvCache cache(shape);
    std::mt19937 random(1);
    // Distinct rows in every K and V row: one write must not touch another row.
    std::vector<std::vector<float>> keys;
    std::vector<std::vector<float>> values;
    for (int layer = 0; layer < shape.layers; ++layer) {
        for (int slot = 0; slot < cache.slotCount(); ++slot) {
            keys.push_back(randomRow(shape.kvDim, random, 3.0f));
            values.push_back(randomRow(shape.kvDim, random, 3.0f));
            cache.writeK(layer, slot, keys.back().data());
            cache.writeV(layer, slot, values.back().data());
        }
    }
    size_t index = 0;
    std::vector<float> decoded(static_cast<size_t>(shape.kvDim));
    for (int layer = 0; layer < shape.layers; ++layer) {
        for (int slot = 0; slot < cache.slotCount(); ++slot, ++index) {
            QCOMPARE(readBackK(cache, layer, slot), keys[index]);
            cache.readV(layer, slot, decoded.data());
            QCOMPARE(decoded, values[index]);
        }
    }
}

void TestKvCache::f16RoundTripWithinHalfPrecision() {
    KvCache cache(makeShape(1, 40, 0, 2, 16));
    std::mt19937 random(2);
    std::vector<float> row = randomRow(40, random, 10.0f);
    // Values f16 holds exactly, including its largest finite value.
    row[0] = 1.0f;
    row[1] = -2.5f;
    row[2] = 65504.0f;
    row[3] = 0.0f;
    const std::vector<float> decoded = roundTripK(cache, row);
    QCOMPARE(decoded[0], 1.0f);
    QCOMPARE(decoded[1], -2.5f);
    QCOMPARE(decoded[2], 65504.0f);
    QCOMPARE(decoded[3], 0.0f);
    for (size_t i = 0; i < row.size(); ++i) {
        // Round to nearest with an 11-bit significand: relative error at most 2^-11.
        QVERIFY2(std::fabs(decoded[i] - row[i]) <= std::fabs(row[i]) * 0x1p-11f + 0x1p-24f,
                 qPrintable(QStringLiteral("value %1: %2 -> %3")
                                .arg(i)
                                .arg(double(row[i]))
                                .arg(double(decoded[i]))));
        QCOMPARE(decoded[i], fp16ToFp32(fp32ToFp16(row[i])));
    }
}

void TestKvCache::int8RoundTripWithinHalfAStep_data() {
    QTest::addColumn<int>("kvDim");
    QTest::addColumn<float>("spread");

    QTest::newRow("8: a partial group") << 8 << 1.0f;
    QTest::newRow("40: one whole, one partial") << 40 << 1.0f;
    QTest::newRow("64: two groups") << 64 << 1.0f;
    QTest::newRow("64, large values") << 64 << 1e4f;
    QTest::newRow("64, tiny values") << 64 << 1e-6f;
}

void TestKvCache::int8RoundTripWithinHalfAStep() {
    QFETCH(int, kvDim);
    QFETCH(float, spread);
    KvCache cache(makeShape(2, kvDim, 1, 2, 8));
    std::mt19937 random(static_cast<unsigned>(kvDim));
    for (int trial = 0; trial < 20; ++trial) {
        const std::vector<float> row = randomRow(kvDim, random, spread);
        const std::vector<float> decoded = roundTripK(cache, row);
        verifyWithinHalfStep(row, decoded);
        if (QTest::currentTestFailed()) return;
    }
}

void TestKvCache::int8RepresentableValuesAreExact() {
    // Group absmax 63.5 gives scale 0.5: every multiple of 0.5 is q * scale exactly.
    KvCache cache(makeShape(1, 32, 0, 1, 8));
    std::vector<float> row(32);
    for (size_t i = 0; i < row.size(); ++i)
        row[i] = 0.5f * (static_cast<float>(i) * 4.0f - 63.0f);
    row[31] = 63.5f;
    QCOMPARE(roundTripK(cache, row), row);

    // Absmax 127 gives scale 1: round to nearest integer, away from the ties.
    const std::vector<float> fractions = {127.0f, 1.49f, 1.6f, -1.6f, -0.4f, 0.51f, -127.0f};
    std::vector<float> input(32, 0.0f);
    std::copy(fractions.begin(), fractions.end(), input.begin());
    const std::vector<float> decoded = roundTripK(cache, input);
    const std::vector<float> expected = {127.0f, 1.0f, 2.0f, -2.0f, 0.0f, 1.0f, -127.0f};
    QCOMPARE(std::vector<float>(decoded.begin(), decoded.begin() + 7), expected);
}

void TestKvCache::int8AllZeroGroup() {
    KvCache cache(makeShape(1, 64, 0, 1, 8));
    std::mt19937 random(3);
    std::vector<float> row = randomRow(64, random, 1.0f);
    std::fill(row.begin() + 32, row.end(), 0.0f);
    const std::vector<float> decoded = roundTripK(cache, row);
    for (size_t i = 32; i < 64; ++i)
        QCOMPARE(decoded[i], 0.0f); // scale 0: zeros, never NaN
    verifyWithinHalfStep(row, decoded);

    const std::vector<float> zeros(64, 0.0f);
    QCOMPARE(roundTripK(cache, zeros), zeros);
}

void TestKvCache::int8OutlierOnlyCoarsensItsGroup() {
    KvCache cache(makeShape(1, 96, 0, 1, 8));
    std::mt19937 random(4);
    std::vector<float> row = randomRow(96, random, 0.01f);
    row[40] = 1000.0f;
    const std::vector<float> decoded = roundTripK(cache, row);
    verifyWithinHalfStep(row, decoded);
    // The outlier itself is q = 127 of its own scale.
    QVERIFY(std::fabs(decoded[40] - 1000.0f) <= 1000.0f * 1e-6f);
    // The other groups keep their fine scale (absmax ~0.03): far below the outlier's step.
    const float outlierStep = 1000.0f / 127.0f;
    for (size_t i = 0; i < 32; ++i)
        QVERIFY(std::fabs(decoded[i] - row[i]) < outlierStep / 1000.0f);
    for (size_t i = 64; i < 96; ++i)
        QVERIFY(std::fabs(decoded[i] - row[i]) < outlierStep / 1000.0f);
}

void TestKvCache::clearForgetsTokensKeepsAllocation() {
    KvCache cache(makeShape(2, 40, 2, 3, 8));
    const int64_t bytes = cache.bytesAllocated();
    for (int64_t position = 0; position < 9; ++position)
        cache.place(tokenAt(position), position, position < 2);
    QCOMPARE(cache.evictions(), int64_t(4));

    cache.clear();
    QCOMPARE(cache.bytesAllocated(), bytes);
    QCOMPARE(cache.sinksUsed(), 0);
    QCOMPARE(cache.ringWrites(), int64_t(0));
    QCOMPARE(cache.evictions(), int64_t(0));
    QCOMPARE(cache.ringHead(), 2);
    QCOMPARE(int(cache.slotInfos().size()), cache.slotCount());
    for (const SlotInfo& slot : cache.slotInfos()) {
        QCOMPARE(slot.kind, SlotKind::Empty);
        QCOMPARE(slot.token, -1);
        QCOMPARE(slot.position, int64_t(-1));
    }

    // A fresh session starts over: first sink in slot 0, first ordinary token at the ring start.
    QCOMPARE(cache.place(1, 0, true), 0);
    QCOMPARE(cache.place(2, 1, false), 2);
    QCOMPARE(cache.evictions(), int64_t(0));
}

void TestKvCache::invalidShapesThrow_data() {
    QTest::addColumn<KvCacheShape>("shape");

    QTest::newRow("no layers") << makeShape(0, 32, 1, 4, 8);
    QTest::newRow("negative layers") << makeShape(-2, 32, 1, 4, 8);
    QTest::newRow("kvDim 0") << makeShape(2, 0, 1, 4, 8);
    QTest::newRow("negative kvDim") << makeShape(2, -32, 1, 4, 8);
    QTest::newRow("window 0") << makeShape(2, 32, 1, 0, 8);
    QTest::newRow("negative window") << makeShape(2, 32, 1, -4, 8);
    QTest::newRow("negative sinkSlots") << makeShape(2, 32, -1, 4, 8);
    QTest::newRow("kvBits 4") << makeShape(2, 32, 1, 4, 4);
    QTest::newRow("kvBits 0") << makeShape(2, 32, 1, 4, 0);
    QTest::newRow("kvBits 12") << makeShape(2, 32, 1, 4, 12);
    QTest::newRow("slot count overflows an int") << makeShape(1, 32, INT_MAX, 1, 8);
    QTest::newRow("tensor size overflows") << makeShape(INT_MAX, INT_MAX, 0, INT_MAX, 32);
}

void TestKvCache::invalidShapesThrow() {
    QFETCH(KvCacheShape, shape);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, KvCache{shape});
}

void TestKvCache::rowAccessOutOfRangeThrows() {
    KvCache cache(makeShape(2, 8, 1, 2, 8));
    std::vector<float> row(8, 1.0f);
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, cache.writeK(2, 0, row.data()));
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, cache.writeV(-1, 0, row.data()));
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, cache.readK(0, 3, row.data()));
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, cache.readV(0, -1, row.data()));
    cache.writeV(1, 2, row.data()); // the last row is in range
    cache.readV(1, 2, row.data());
    QCOMPARE(row, std::vector<float>(8, 1.0f));
}

void TestKvCache::int8DecodeIsScaleTimesQuant_data() {
    QTest::addColumn<int>("kvDim");
    for (const int kvDim : {8, 31, 32, 36, 64, 72, 128, 200})
        QTest::newRow(qPrintable(QStringLiteral("kvDim %1").arg(kvDim))) << kvDim;
}

// The encode and the decode (eight values at a time where the CPU has AVX2, whole groups only)
// against the encoding's rule worked out here: scale = absmax / 127 per group of 32 (a NaN passed
// over), q = round(v / scale), halves away from zero, clamped to [-127, 127], 0 for a NaN or a zero
// scale; decoded as scale * q, bit for bit. Random rows, and rows of the edges: exact halves of a
// step, NaN, infinities (whose scale is infinite), magnitudes past the clamp, subnormal groups.
void TestKvCache::int8DecodeIsScaleTimesQuant() {
    QFETCH(int, kvDim);
    KvCache cache(makeShape(1, kvDim, 0, 1, 8));
    std::mt19937 random(static_cast<unsigned>(kvDim) * 7u);
    const size_t group = static_cast<size_t>(kKvGroup);
    std::vector<std::vector<float>> rows;
    for (int trial = 0; trial < 10; ++trial)
        rows.push_back(randomRow(kvDim, random, 3.0f));
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    const std::vector<float> edges = {127.0f, 0.5f, -0.5f, 1.5f,  -2.5f, 126.5f, -126.5f,
                                      -0.0f,  nan,  3.49f, -3.5f, 0.49f, 1e-40f, -7.5f};
    for (int shift = 0; shift < 4; ++shift) {
        std::vector<float> row(static_cast<size_t>(kvDim));
        for (size_t i = 0; i < row.size(); ++i)
            row[i] = edges[(i + static_cast<size_t>(shift) * 5) % edges.size()];
        rows.push_back(row);
    }
    std::vector<float> infinite(static_cast<size_t>(kvDim), 2.0f);
    infinite[0] = -inf;
    infinite.back() = inf;
    rows.push_back(infinite);
    rows.emplace_back(static_cast<size_t>(kvDim), 3e-41f); // subnormal: the scale underflows
    rows.emplace_back(static_cast<size_t>(kvDim), nan);
    for (const std::vector<float>& row : rows) {
        const std::vector<float> decoded = roundTripK(cache, row);
        for (size_t begin = 0; begin < row.size(); begin += group) {
            const size_t end = std::min(begin + group, row.size());
            const float scale = groupScale(row, begin, end);
            for (size_t i = begin; i < end; ++i) {
                float q = 0.0f;
                if (scale > 0.0f) q = std::clamp(std::round(row[i] / scale), -127.0f, 127.0f);
                if (std::isnan(q)) q = 0.0f;
                const float expected = scale * static_cast<float>(static_cast<int8_t>(q));
                QVERIFY2(std::bit_cast<uint32_t>(decoded[i]) == std::bit_cast<uint32_t>(expected),
                         qPrintable(QStringLiteral("value %1 = %2: %3, expected %4")
                                        .arg(i)
                                        .arg(double(row[i]))
                                        .arg(double(decoded[i]))
                                        .arg(double(expected))));
            }
        }
    }
}

void TestKvCache::gatherEqualsRowReads_data() {
    QTest::addColumn<int>("kvBits");
    QTest::addColumn<int>("kvDim");
    for (const int kvBits : {32, 16, 8})
        for (const int kvDim : {8, 12, 32, 40, 64, 100})
            QTest::newRow(qPrintable(QStringLiteral("kvBits %1, kvDim %2").arg(kvBits).arg(kvDim)))
                << kvBits << kvDim;
}

// gatherK's columns [kvDim][n] (transposed eight by eight where it can) and gatherV's rows
// [n][kvDim] hold exactly what readK / readV give for each slot, for slot lists of every length
// around the transpose's eight, in any order, repeated slots included.
void TestKvCache::gatherEqualsRowReads() {
    QFETCH(int, kvBits);
    QFETCH(int, kvDim);
    const int layers = 2;
    KvCache cache(makeShape(layers, kvDim, 5, 20, kvBits));
    std::mt19937 random(static_cast<unsigned>(kvBits * 1000 + kvDim));
    for (int layer = 0; layer < layers; ++layer)
        for (int slot = 0; slot < cache.slotCount(); ++slot) {
            cache.writeK(layer, slot, randomRow(kvDim, random, 2.0f).data());
            cache.writeV(layer, slot, randomRow(kvDim, random, 2.0f).data());
        }
    const auto width = static_cast<size_t>(kvDim);
    std::vector<float> expected(width);
    for (const int count : {1, 7, 8, 9, 16, 17, 25}) {
        std::vector<int> picked(static_cast<size_t>(count));
        std::uniform_int_distribution<int> anySlot(0, cache.slotCount() - 1);
        for (int& slot : picked)
            slot = anySlot(random);
        const int layer = count % layers;
        std::vector<float> columns(width * picked.size(), -1.0f);
        std::vector<float> rows(width * picked.size(), -1.0f);
        cache.gatherK(layer, picked, columns.data());
        cache.gatherV(layer, picked, rows.data());
        for (size_t i = 0; i < picked.size(); ++i) {
            cache.readK(layer, picked[i], expected.data());
            for (size_t d = 0; d < width; ++d)
                QCOMPARE(columns[d * picked.size() + i], expected[d]);
            cache.readV(layer, picked[i], expected.data());
            for (size_t d = 0; d < width; ++d)
                QCOMPARE(rows[i * width + d], expected[d]);
        }
        // The same gather in two parts, as threads split it: the first eight slots and the rest,
        // each into its columns of the whole stride.
        if (count <= 8) continue;
        std::vector<float> parts(width * picked.size(), -1.0f);
        const std::span<const int> all(picked);
        cache.gatherK(layer, all.first(8), parts.data(), picked.size());
        cache.gatherK(layer, all.subspan(8), parts.data() + 8, picked.size());
        QVERIFY(parts == columns);
    }
}

void TestKvCache::gatherOutOfRangeThrows() {
    KvCache cache(makeShape(2, 16, 1, 8, 8));
    std::vector<float> out(16 * 9);
    const std::vector<int> bad = {0, 1, 2, 3, 4, 5, 6, 7, 9};
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, cache.gatherK(0, bad, out.data()));
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, cache.gatherV(0, std::vector<int>{-1}, out.data()));
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, cache.gatherK(2, std::vector<int>{0}, out.data()));
    QVERIFY_THROWS_EXCEPTION(std::out_of_range, cache.gatherV(2, std::vector<int>{}, out.data()));
}

QTEST_GUILESS_MAIN(TestKvCache)
#include "test_kv_cache.moc"
