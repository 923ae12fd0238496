// The matrix-matrix products of batched prefill (KernelTable::quantGemm / gemmF32, quantizeTokens
// and quantMatmatPrepared, matmat): at every instruction-set level this CPU runs, each token's
// results are the row kernels' for that token alone, bit for bit, for every weight type, row ranges
// that are not whole groups, rows that span several cache blocks, and split among threads.
#include "model/kernels/kernel_table.h"
#include "model/ops.h"
#include "quant_test_support.h"

#include <QtTest>

#include <bit>
#include <random>
#include <utility>
#include <vector>

using namespace sinkscope;
using namespace sinkscope::test;

namespace {

// [tokens][activation bytes]: each token's row quantized as the products quantize it
Bytes tokenActivations(GgmlType type, int tokens, int64_t cols, std::mt19937& generator,
                       size_t& rowBytes) {
    Bytes all;
    for (int t = 0; t < tokens; ++t) {
        const Bytes row = activationsFor(type, randomValues(cols, 1.0f + t, generator));
        rowBytes = row.size();
        all.insert(all.end(), row.begin(), row.end());
    }
    return all;
}

QString where(Isa isa, GgmlType type, int64_t cols, int token, int64_t row) {
    return QStringLiteral("%1 %2, %3 columns: token %4, row %5")
        .arg(isaName(isa), ggmlTypeName(type))
        .arg(cols)
        .arg(token)
        .arg(row);
}

// A Matrix over `bytes` (rows x cols of `type`), kept in its type (F32 as floats).
Matrix matrixOver(const Bytes& bytes, GgmlType type, int rows, int cols) {
    Matrix w;
    w.rows = rows;
    w.cols = cols;
    w.type = type;
    if (type == GgmlType::F32) {
        w.data = reinterpret_cast<const float*>(bytes.data());
    } else {
        w.quantized = bytes.data();
        w.rowBytes = *ggmlByteSize(type, cols);
    }
    return w;
}

} // namespace

class TestGemm : public QObject {
    Q_OBJECT
private slots:
    void quantGemmEqualsRowKernelsAtEveryLevel();
    void f32GemmEqualsRowKernelsAtEveryLevel();
    void matmatEqualsMatvecOnThreads();
    void productsOfOneInputShareItsQuantization();
};

void TestGemm::quantGemmEqualsRowKernelsAtEveryLevel() {
    for (const Isa isa : kAllIsas) {
        if (!isaSupported(isa)) {
            qInfo("%s: not supported by this CPU, not run", isaName(isa));
            continue;
        }
        const KernelTable& level = kernelsFor(isa);
        for (const GgmlType type : kWeightTypes) {
            std::mt19937 generator(uint32_t(type) + 700);
            // 512 columns: one block of rows holds them all; 32,768: several blocks of rows.
            // Eleven tokens: a whole tile of eight and a part; 37: two tiles of sixteen and a
            // part. Rows 3 to 33: whole groups of rows and a rest.
            for (const auto& [cols, tokens] :
                 {std::pair{int64_t{512}, 11}, std::pair{int64_t{512}, 37},
                  std::pair{int64_t{32768}, 11}}) {
                constexpr int64_t rows = 37, rowBegin = 3, rowEnd = 34;
                const auto rowBytes = static_cast<size_t>(*ggmlByteSize(type, cols));
                const int64_t blocks = cols / ggmlBlockValues(type);
                const Bytes matrix = randomRow(type, rows * cols, 0.1f, generator);
                size_t activationBytes = 0;
                const Bytes activations =
                    tokenActivations(type, tokens, cols, generator, activationBytes);
                std::vector<float> got(rows * tokens, -1.0f);
                level.quantGemm(type, matrix.data(), rowBytes, blocks, activations.data(),
                                activationBytes, tokens, got.data(), rows, rowBegin, rowEnd);
                for (int t = 0; t < tokens; ++t) {
                    std::vector<float> expected(rows, -1.0f);
                    level.quantRows(type, matrix.data(), rowBytes, blocks,
                                    activations.data() + t * activationBytes, expected.data(),
                                    rowBegin, rowEnd);
                    for (int64_t r = 0; r < rows; ++r)
                        QVERIFY2(std::bit_cast<uint32_t>(got[t * rows + r]) ==
                                     std::bit_cast<uint32_t>(expected[r]),
                                 qPrintable(where(isa, type, cols, t, r)));
                }
            }
        }
        qInfo("%s: every type's matrix product equals its row kernels", isaName(isa));
    }
}

void TestGemm::f32GemmEqualsRowKernelsAtEveryLevel() {
    for (const Isa isa : kAllIsas) {
        if (!isaSupported(isa)) continue;
        const KernelTable& level = kernelsFor(isa);
        std::mt19937 generator(17);
        // 4,100 columns: several row blocks, and a tail after the last 16-value chunk
        for (const int64_t cols : {int64_t{40}, int64_t{288}, int64_t{4100}}) {
            constexpr int64_t rows = 23, rowBegin = 1, rowEnd = 22;
            constexpr int tokens = 5;
            const std::vector<float> w = randomValues(rows * cols, 0.2f, generator);
            const std::vector<float> x = randomValues(tokens * cols, 1.0f, generator);
            std::vector<float> got(rows * tokens, -1.0f);
            level.gemmF32(w.data(), cols, x.data(), tokens, got.data(), rows, rowBegin, rowEnd);
            for (int t = 0; t < tokens; ++t) {
                std::vector<float> expected(rows, -1.0f);
                level.matvecF32(w.data(), cols, x.data() + t * cols, expected.data(), rowBegin,
                                rowEnd);
                for (int64_t r = 0; r < rows; ++r)
                    QVERIFY2(std::bit_cast<uint32_t>(got[t * rows + r]) ==
                                 std::bit_cast<uint32_t>(expected[r]),
                             qPrintable(where(isa, GgmlType::F32, cols, t, r)));
            }
        }
    }
}

// The public products, with a pool of three threads splitting the rows, against matvec per token.
void TestGemm::matmatEqualsMatvecOnThreads() {
    ThreadPool pool(3);
    std::mt19937 generator(5);
    for (const GgmlType type : {GgmlType::F32, GgmlType::Q4_0, GgmlType::Q8_0, GgmlType::Q4_K,
                                GgmlType::Q6_K, GgmlType::Q5_0}) {
        constexpr int rows = 301, cols = 1024, tokens = 9;
        const Bytes bytes = randomRow(type, int64_t{rows} * cols, 0.1f, generator);
        const Matrix w = matrixOver(bytes, type, rows, cols);
        const std::vector<float> x = randomValues(size_t{tokens} * cols, 1.0f, generator);
        std::vector<float> got(size_t{tokens} * rows);
        matmat(w, x.data(), tokens, got.data(), &pool);
        for (int t = 0; t < tokens; ++t) {
            std::vector<float> expected(rows);
            matvec(w, x.data() + static_cast<size_t>(t) * cols, expected.data());
            for (int r = 0; r < rows; ++r)
                QVERIFY2(std::bit_cast<uint32_t>(got[static_cast<size_t>(t) * rows + r]) ==
                             std::bit_cast<uint32_t>(expected[r]),
                         qPrintable(where(activeIsa(), type, cols, t, r)));
        }
    }
}

// q/k/v and gate/up in one call: runs of matrices with the same activation type (Q4_0 then Q8_0
// on Q8_0 activations, Q4_K then Q6_K on Q8_K) share one quantization, an F32 one in between
// takes x as it is; every output is matvec's for each token.
void TestGemm::productsOfOneInputShareItsQuantization() {
    ThreadPool pool(2);
    std::mt19937 generator(8);
    constexpr int cols = 512, tokens = 19;
    const GgmlType types[] = {GgmlType::Q4_0, GgmlType::Q8_0, GgmlType::F32,
                              GgmlType::Q4_K, GgmlType::Q6_K, GgmlType::Q5_0};
    const int rows[] = {40, 24, 9, 33, 16, 8};
    std::vector<Bytes> bytes;
    std::vector<Matrix> matrices;
    std::vector<std::vector<float>> outputs;
    for (size_t i = 0; i < std::size(types); ++i) {
        bytes.push_back(randomRow(types[i], int64_t{rows[i]} * cols, 0.1f, generator));
        outputs.emplace_back(static_cast<size_t>(tokens) * rows[i]);
    }
    for (size_t i = 0; i < std::size(types); ++i)
        matrices.push_back(matrixOver(bytes[i], types[i], rows[i], cols));
    std::vector<Product> products;
    for (size_t i = 0; i < matrices.size(); ++i)
        products.push_back({&matrices[i], outputs[i].data()});
    const std::vector<float> x = randomValues(size_t{tokens} * cols, 1.0f, generator);
    matmatEach(products, x.data(), tokens, &pool);
    for (size_t i = 0; i < matrices.size(); ++i)
        for (int t = 0; t < tokens; ++t) {
            std::vector<float> expected(rows[i]);
            matvec(matrices[i], x.data() + static_cast<size_t>(t) * cols, expected.data());
            for (int r = 0; r < rows[i]; ++r)
                QVERIFY2(
                    std::bit_cast<uint32_t>(outputs[i][static_cast<size_t>(t) * rows[i] + r]) ==
                        std::bit_cast<uint32_t>(expected[r]),
                    qPrintable(where(activeIsa(), types[i], cols, t, r)));
        }
}

QTEST_GUILESS_MAIN(TestGemm)
#include "test_gemm.moc"
