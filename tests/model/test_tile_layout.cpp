// RowLayout::Tiles16 (model/row_layout.h): the tiled copy holds every block of Q8_0, Q4_0 and
// Q5_0 matrices; its AMX kernels give, bit for bit, the scalar reference of llama.cpp's AMX float
// order (quant::referenceTileOrderDot), decoding and prefill alike; products and embedding lookups
// take the layout; a model opened on a CPU with AMX uses it, and its batched prefill equals token
// by token decoding exactly.
#include "model/kernels/cpu_isa.h"
#include "model/kernels/kernel_table.h"
#include "model/kernels/quant_dot_kernels.h"
#include "model/model.h"
#include "model/ops.h"
#include "model/quant_dot.h"
#include "model/row_layout.h"
#include "model/synthetic.h"
#include "quant_test_support.h"
#include "session/session.h"

#include <QtTest>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

using namespace sinkscope;
using namespace sinkscope::test;

namespace {

constexpr GgmlType kTileTypes[] = {GgmlType::Q8_0, GgmlType::Q4_0, GgmlType::Q5_0};

size_t blockBytesOf(GgmlType type) {
    return static_cast<size_t>(ggmlBlockBytes(type));
}

// A random matrix of `type` whose values include both ends of the type's range (the ends that
// VPDPBUSD's unsigned operand must take exactly): Q8_0's -128 and 127, Q4_0's nibbles 0 and 15,
// Q5_0's 0 and 31 (values 0 and 8 of every seventh block: nibbles 15 and 0, fifth bits set and
// clear).
Bytes randomMatrix(GgmlType type, int64_t rows, int64_t blocks, float spread,
                   std::mt19937& generator) {
    Bytes matrix = randomRow(type, rows * blocks * 32, spread, generator);
    const size_t bytes = blockBytesOf(type);
    for (size_t block = 0; block + bytes <= matrix.size(); block += 7 * bytes) {
        if (type == GgmlType::Q5_0) {
            matrix[block + 2] = 0xff;  // fifth bits of values 0..7
            matrix[block + 3] = 0x00;  // and of 8..15
            matrix[block + 6] = 0xff;  // values 0 and 16
            matrix[block + 14] = 0x00; // values 8 and 24
            continue;
        }
        matrix[block + 2] = type == GgmlType::Q8_0 ? 0x80 : 0x0f;
        matrix[block + 3] = type == GgmlType::Q8_0 ? 0x7f : 0xf0;
    }
    return matrix;
}

Bytes tiled(GgmlType type, const Bytes& rowMajor, int64_t rows, int64_t blocks) {
    Bytes copy(rowMajor.size(), 0xEE);
    tileRows(type, rowMajor.data(), rows, blocks, copy.data());
    return copy;
}

// Each token's activations, one row after another.
Bytes tokenActivations(int tokens, int64_t blocks, std::mt19937& generator, size_t& rowBytes) {
    Bytes activations;
    for (int t = 0; t < tokens; ++t) {
        const Bytes row =
            activationsFor(GgmlType::Q8_0, randomValues(blocks * 32, 0.5f + 0.25f * t, generator));
        rowBytes = row.size();
        activations.insert(activations.end(), row.begin(), row.end());
    }
    return activations;
}

// The AMX level's table, or nullptr (with a message) where this machine cannot run it.
const KernelTable* amxKernels() {
    if (!isaSupported(Isa::Avx512Amx)) {
        qInfo("avx512amx: not supported by this CPU or system; its kernels are not run here");
        return nullptr;
    }
    return &kernelsFor(Isa::Avx512Amx);
}

} // namespace

class TestTileLayout : public QObject {
    Q_OBJECT
private slots:
    void everyBlockComesBackFromItsTile();
    void referenceSumsEachBlockExactly();
    void rowKernelsEqualTheReference();
    void gemmKernelsEqualTheReference();
    void q4_0TilesEqualTheRegroupedRows();
    void productsAndLookupsTakeTheLayout();
    void layoutsThatCannotHoldAMatrixAreRefused();
    void loadedModelsTileAndPrefillEqualsDecoding();
};

void TestTileLayout::everyBlockComesBackFromItsTile() {
    std::mt19937 generator(5);
    for (const GgmlType type : kTileTypes) {
        constexpr int64_t rows = 48, blocks = 5;
        const Bytes matrix = randomMatrix(type, rows, blocks, 1.0f, generator);
        const Bytes copy = tiled(type, matrix, rows, blocks);
        QCOMPARE(tileBytes(type), 16 * blockBytesOf(type));
        const size_t bytes = blockBytesOf(type);
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t b = 0; b < blocks; ++b) {
                Bytes block(bytes);
                untileBlock(type, copy.data(), blocks, r, b, block.data());
                QVERIFY2(
                    std::memcmp(block.data(), matrix.data() + (r * blocks + b) * bytes, bytes) == 0,
                    qPrintable(QStringLiteral("%1, row %2, block %3")
                                   .arg(ggmlTypeName(type))
                                   .arg(r)
                                   .arg(b)));
            }
        // Row 17 is row 1 of the second run: in block 2's tile, Q8_0's values 4..7 follow row
        // 16's in the second group; Q4_0's and Q5_0's first byte holds value 0 low and value 4
        // high, and Q5_0's fifth bit of value 5 is bit 4 + 1 of group 1's word.
        const size_t tile = (1 * blocks + 2) * tileBytes(type);
        const uint8_t* block = matrix.data() + (17 * blocks + 2) * bytes;
        if (type == GgmlType::Q8_0) {
            QVERIFY(std::memcmp(copy.data() + tile + 64 + 4, block + 2 + 4, 4) == 0);
        } else {
            const uint8_t* nibbles = block + (type == GgmlType::Q5_0 ? 6 : 2);
            QCOMPARE(copy[tile + 4] & 0x0f, nibbles[0] & 0x0f);
            QCOMPARE(copy[tile + 4] >> 4, nibbles[4] & 0x0f);
        }
        if (type == GgmlType::Q5_0) {
            QCOMPARE(kQ5_0TileHighBitsAt, size_t{256});
            QCOMPARE((copy[tile + kQ5_0TileHighBitsAt + 8] >> 5) & 1, (block[2] >> 5) & 1);
        }
        // A slice of whole runs tiles on its own into its part of the whole copy.
        const size_t rowBytes = blocks * bytes;
        Bytes sliced(matrix.size());
        tileRows(type, matrix.data(), 16, blocks, sliced.data());
        tileRows(type, matrix.data() + 16 * rowBytes, 32, blocks, sliced.data() + 16 * rowBytes);
        QVERIFY(sliced == copy);
        QVERIFY(canTile(type, 32, 1));
        QVERIFY(!canTile(type, 16, 1));
        QVERIFY(canTile(type, 151936, kTileMaxBlocks));
        QVERIFY(!canTile(type, 24, 4));
        QVERIFY(!canTile(type, 0, 4));
        QVERIFY(!canTile(type, 32, kTileMaxBlocks + 1));
    }
    QVERIFY(!canTile(GgmlType::Q5_1, 32, 4));
    QVERIFY(!canTile(GgmlType::Q4_K, 32, 8));
}

// The reference against the per-block formula written out in double (every step of which is
// exact here: the products of small integers and of f16 scales fit a double), and against
// ggml's portable dot, which sums the same blocks in another order.
void TestTileLayout::referenceSumsEachBlockExactly() {
    std::mt19937 generator(8);
    for (const GgmlType type : kTileTypes) {
        for (const int64_t blocks : {int64_t{1}, int64_t{2}, int64_t{28}}) {
            const Bytes row = randomMatrix(type, 1, blocks, 0.2f, generator);
            const Bytes activations =
                activationsFor(GgmlType::Q8_0, randomValues(blocks * 32, 1.0f, generator));
            Bytes one(blockBytesOf(type));
            float expected = 0.0f;
            double magnitude = 0.0;
            for (int64_t b = 0; b < blocks; ++b) {
                std::vector<float> w(32), a(32);
                dequantizeRow(type, row.data() + b * blockBytesOf(type), w.data(), 32);
                dequantizeRow(GgmlType::Q8_0, activations.data() + b * 34, a.data(), 32);
                const float weightScale = fp16ToFp32(
                    uint16_t(row[b * blockBytesOf(type)] | row[b * blockBytesOf(type) + 1] << 8));
                const float scale =
                    fp16ToFp32(uint16_t(activations[b * 34] | activations[b * 34 + 1] << 8));
                double integers = 0.0;
                for (int j = 0; j < 32; ++j) {
                    integers += std::nearbyint(double(w[j]) / weightScale) *
                                std::nearbyint(double(a[j]) / scale);
                    magnitude += std::fabs(double(w[j]) * a[j]);
                }
                expected = std::fma(float(integers), weightScale * scale, expected);
            }
            const float got =
                quant::referenceTileOrderDot(type, row.data(), activations.data(), blocks);
            QCOMPARE(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(expected));
            const float ggml = ref::quantDot(type, row.data(), activations.data(), blocks * 32);
            QVERIFY(std::fabs(double(got) - ggml) <= 1e-6 * magnitude);
        }
    }
}

// Runs 1..6 of 8 (the first and last left out): four runs at once, then two one by one.
void TestTileLayout::rowKernelsEqualTheReference() {
    const KernelTable* amx = amxKernels();
    if (!amx) return;
    for (const GgmlType type : kTileTypes) {
        for (const int64_t blocks :
             {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{17}, int64_t{28}, kTileMaxBlocks}) {
            std::mt19937 generator(static_cast<uint32_t>(blocks));
            constexpr int64_t rows = 128;
            const Bytes matrix =
                randomMatrix(type, rows, blocks, blocks % 2 ? 1.0f : 0.01f, generator);
            const Bytes copy = tiled(type, matrix, rows, blocks);
            const Bytes activations =
                activationsFor(GgmlType::Q8_0, randomValues(blocks * 32, 2.0f, generator));
            std::vector<float> expected(rows, -1.0f), got(rows, -1.0f);
            const size_t rowBytes = blocks * blockBytesOf(type);
            for (int64_t r = 16; r < 112; ++r)
                expected[r] = quant::referenceTileOrderDot(type, matrix.data() + r * rowBytes,
                                                           activations.data(), blocks);
            amx->tileRows(type, copy.data(), blocks, activations.data(), got.data(), 16, 112);
            requireSameBits(got, expected,
                            QStringLiteral("%1, %2 blocks").arg(ggmlTypeName(type)).arg(blocks));
        }
    }
}

// Whole and partial tiles of tokens; outputs outside the rows asked for stay untouched.
void TestTileLayout::gemmKernelsEqualTheReference() {
    const KernelTable* amx = amxKernels();
    if (!amx) return;
    for (const GgmlType type : kTileTypes) {
        for (const int tokens : {1, 15, 16, 17, 37}) {
            for (const int64_t blocks : {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{28}}) {
                std::mt19937 generator(static_cast<uint32_t>(tokens * 100 + blocks));
                constexpr int64_t rows = 64;
                const Bytes matrix = randomMatrix(type, rows, blocks, 0.1f, generator);
                const Bytes copy = tiled(type, matrix, rows, blocks);
                size_t activationBytes = 0;
                const Bytes activations =
                    tokenActivations(tokens, blocks, generator, activationBytes);
                const size_t rowBytes = blocks * blockBytesOf(type);
                std::vector<float> expected(rows * tokens, -1.0f), got(rows * tokens, -1.0f);
                for (int t = 0; t < tokens; ++t)
                    for (int64_t r = 16; r < 48; ++r)
                        expected[t * rows + r] = quant::referenceTileOrderDot(
                            type, matrix.data() + r * rowBytes,
                            activations.data() + t * activationBytes, blocks);
                amx->tileGemm(type, copy.data(), blocks, activations.data(), activationBytes,
                              tokens, got.data(), rows, 16, 48);
                requireSameBits(got, expected,
                                QStringLiteral("%1, %2 tokens, %3 blocks")
                                    .arg(ggmlTypeName(type))
                                    .arg(tokens)
                                    .arg(blocks));
            }
        }
    }
}

// llama.cpp's regrouped Q4_0 kernels (RowLayout::Q4_0x8, checked against llama.cpp's logits in
// tests/model/test_reference_models.cpp) already sum one multiply-add per block: for Q4_0 the
// tiles change nothing but the speed.
void TestTileLayout::q4_0TilesEqualTheRegroupedRows() {
    const KernelTable* amx = amxKernels();
    if (!amx) return;
    std::mt19937 generator(21);
    constexpr int64_t rows = 64, blocks = 28;
    constexpr int tokens = 21;
    const Bytes matrix = randomMatrix(GgmlType::Q4_0, rows, blocks, 0.1f, generator);
    Bytes regrouped(matrix.size());
    regroupQ4_0(matrix.data(), rows, blocks, regrouped.data());
    const Bytes copy = tiled(GgmlType::Q4_0, matrix, rows, blocks);
    size_t activationBytes = 0;
    const Bytes activations = tokenActivations(tokens, blocks, generator, activationBytes);
    std::vector<float> expected(rows * tokens), got(rows * tokens);
    amx->q4_0x8Gemm(regrouped.data(), blocks, activations.data(), activationBytes, tokens,
                    expected.data(), rows, 0, rows);
    amx->tileGemm(GgmlType::Q4_0, copy.data(), blocks, activations.data(), activationBytes, tokens,
                  got.data(), rows, 0, rows);
    requireSameBits(got, expected, "Q4_0 tiles against Q4_0x8");
}

// quantMatvec and quantMatmatPrepared on a pool of threads, matvec, matmat and matrixRow through
// a Matrix in the layout: the reference's values, and the file's rows.
void TestTileLayout::productsAndLookupsTakeTheLayout() {
    if (!amxKernels()) return;
    if (activeIsa() != Isa::Avx512Amx) {
        qInfo("SINKSCOPE_ISA chose %s: the products do not run the AMX kernels",
              isaName(activeIsa()));
        return;
    }
    std::mt19937 generator(11);
    for (const GgmlType type : kTileTypes) {
        constexpr int rows = 64, cols = 896, blocks = cols / 32;
        const Bytes matrix = randomMatrix(type, rows, blocks, 0.1f, generator);
        const Bytes copy = tiled(type, matrix, rows, blocks);
        const size_t rowBytes = blocks * blockBytesOf(type);
        const Matrix rowMajor{nullptr, rows, cols, type, matrix.data(), rowBytes};
        Matrix tiles = rowMajor;
        tiles.quantized = copy.data();
        tiles.layout = RowLayout::Tiles16;
        OwnedThreadPool pool(2);
        constexpr int tokens = 19;
        const std::vector<float> x = randomValues(size_t{tokens} * cols, 1.0f, generator);
        std::vector<float> expected(size_t{tokens} * rows), got(size_t{tokens} * rows);
        for (int t = 0; t < tokens; ++t) {
            const Bytes a = activationsFor(
                type, std::vector<float>(x.begin() + t * cols, x.begin() + (t + 1) * cols));
            for (int r = 0; r < rows; ++r)
                expected[t * rows + r] = quant::referenceTileOrderDot(
                    type, matrix.data() + r * rowBytes, a.data(), blocks);
        }
        matmat(tiles, x.data(), tokens, got.data(), pool.get());
        requireSameBits(got, expected, QStringLiteral("%1 matmat").arg(ggmlTypeName(type)));
        for (const int t : {0, 18}) {
            std::vector<float> one(rows);
            matvec(tiles, x.data() + static_cast<size_t>(t) * cols, one.data(), pool.get());
            requireSameBits(
                one,
                std::vector<float>(expected.begin() + t * rows, expected.begin() + (t + 1) * rows),
                QStringLiteral("%1 matvec, token %2").arg(ggmlTypeName(type)).arg(t));
        }
        for (const int row : {0, 15, 16, 63}) {
            std::vector<float> a(cols), b(cols);
            matrixRow(rowMajor, row, a.data());
            matrixRow(tiles, row, b.data());
            requireSameBits(b, a, QStringLiteral("%1 row %2").arg(ggmlTypeName(type)).arg(row));
        }
    }
}

void TestTileLayout::layoutsThatCannotHoldAMatrixAreRefused() {
    std::vector<std::byte> scratch;
    const std::vector<float> x(64, 1.0f);
    std::vector<float> out(48);
    const Bytes q5(32 * 2 * 24), q8(48 * 2 * 34);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             quantMatvec(GgmlType::Q5_1, q5.data(), 32, 64, x.data(), out.data(),
                                         scratch, nullptr, RowLayout::Tiles16));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             quantMatvec(GgmlType::Q8_0, q8.data(), 48, 64, x.data(), out.data(),
                                         scratch, nullptr, RowLayout::Tiles16));
    if (!kernels().tileRows) {
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 quantMatvec(GgmlType::Q8_0, q8.data(), 32, 64, x.data(),
                                             out.data(), scratch, nullptr, RowLayout::Tiles16));
    }
}

// Q8_0, Q4_0 and Q5_0 models opened from a file: on a CPU with AMX every product matrix is tiled
// (the tied embedding reads the output's copy), and one prefill of a prompt gives, bit for bit, the
// logits of feeding it token by token.
void TestTileLayout::loadedModelsTileAndPrefillEqualsDecoding() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    for (const GgmlType type : kTileTypes) {
        const std::string path = (dir.path() + "/" + ggmlTypeName(type) + ".gguf").toStdString();
        SyntheticSpec spec;
        spec.nVocab = 1024;
        spec.nEmbd = 256;
        spec.nFf = 512;
        spec.weightType = type;
        spec.tiedOutput = true;
        std::string error;
        QVERIFY2(writeSyntheticModel(spec, path, error), error.c_str());
        auto model = Model::load(path, error);
        QVERIFY2(model, error.c_str());
        const ModelWeights& w = model->weights();
        const RowLayout expected = kernels().tileRows       ? RowLayout::Tiles16
                                   : type == GgmlType::Q4_0 ? RowLayout::Q4_0x8
                                                            : RowLayout::RowMajor;
        QCOMPARE(w.output.layout, expected);
        QCOMPARE(w.tokenEmbedding.layout, expected);
        for (const LayerWeights& l : w.layers)
            for (const Matrix* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.wGate, &l.wUp, &l.wDown})
                QCOMPARE(m->layout, expected);

        std::vector<int32_t> prompt;
        for (int i = 0; i < 37; ++i)
            prompt.push_back(300 + 7 * i);
        SessionOptions options;
        Session batched(*model, options), sequential(*model, options);
        const std::span<const float> chunked = batched.prefill(prompt);
        std::span<const float> fed;
        for (const int32_t token : prompt)
            fed = sequential.feed(token);
        requireSameBits(std::vector<float>(chunked.begin(), chunked.end()),
                        std::vector<float>(fed.begin(), fed.end()),
                        QStringLiteral("%1 logits").arg(ggmlTypeName(type)));
    }
}

QTEST_GUILESS_MAIN(TestTileLayout)
#include "test_tile_layout.moc"
