// RowLayout::Q4_0x8 (model/row_layout.h): the regrouped copy holds every block where
// q4_0x8Offset says; its matrix-vector and matrix-matrix kernels give, at every instruction-set
// level and in both row-stream modes, the row-major kernels' bits; the products, embedding lookups
// and a loaded Q4_0 model use it, and the model's original Q4_0 pages stay out of memory.
#include "model/kernels/cpu_isa.h"
#include "model/kernels/kernel_table.h"
#include "model/model.h"
#include "model/ops.h"
#include "model/quant_dot.h"
#include "model/row_layout.h"
#include "model/synthetic.h"
#include "quant_test_support.h"
#include "session/session.h"

#include <QtTest>

#include <bit>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

using namespace sinkscope;
using namespace sinkscope::test;

namespace {

constexpr size_t kBlockBytes = 18;

Bytes regrouped(const Bytes& rowMajor, int64_t rows, int64_t blocks) {
    Bytes copy(rowMajor.size(), 0xEE);
    regroupQ4_0(rowMajor.data(), rows, blocks, copy.data());
    return copy;
}

// How many of the pages wholly inside [begin, begin + bytes) this process has mapped in
// (/proc/self/pagemap's present bit, which every user may read).
int64_t presentPages(const uint8_t* begin, size_t bytes) {
    const auto pageSize = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    const uintptr_t first = (reinterpret_cast<uintptr_t>(begin) + pageSize - 1) / pageSize;
    const uintptr_t last = (reinterpret_cast<uintptr_t>(begin) + bytes) / pageSize;
    const int pagemap = ::open("/proc/self/pagemap", O_RDONLY);
    if (pagemap < 0) qFatal("cannot open /proc/self/pagemap");
    int64_t present = 0;
    for (uintptr_t page = first; page < last; ++page) {
        uint64_t entry = 0;
        if (::pread(pagemap, &entry, sizeof entry, static_cast<off_t>(page * sizeof entry)) !=
            sizeof entry)
            qFatal("cannot read /proc/self/pagemap");
        present += static_cast<int64_t>(entry >> 63);
    }
    ::close(pagemap);
    return present;
}

} // namespace

class TestRowLayout : public QObject {
    Q_OBJECT
private slots:
    void everyBlockLandsAtItsOffset();
    void rowKernelsEqualRowMajorAtEveryLevel();
    void gemmKernelsEqualRowMajorAtEveryLevel();
    void productsAndLookupsTakeTheLayout();
    void layoutsThatCannotHoldAMatrixAreRefused();
    void loadedQ4_0ModelsRegroupAndReleaseTheOriginals();
};

void TestRowLayout::everyBlockLandsAtItsOffset() {
    std::mt19937 generator(3);
    constexpr int64_t rows = 24, blocks = 5;
    const Bytes matrix = randomRow(GgmlType::Q4_0, rows * blocks * 32, 1.0f, generator);
    const Bytes copy = regrouped(matrix, rows, blocks);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t b = 0; b < blocks; ++b)
            QVERIFY(std::memcmp(copy.data() + q4_0x8Offset(blocks, r, b),
                                matrix.data() + (r * blocks + b) * kBlockBytes, kBlockBytes) == 0);
    // Eight rows of a run are one stream: block b of rows 8..15 follow each other.
    QCOMPARE(q4_0x8Offset(blocks, 9, 2) - q4_0x8Offset(blocks, 8, 2), kBlockBytes);
    QCOMPARE(q4_0x8Offset(blocks, 8, 3) - q4_0x8Offset(blocks, 8, 2), 8 * kBlockBytes);
    // A slice of whole runs regroups on its own into its part of the whole copy.
    const size_t rowBytes = blocks * kBlockBytes;
    Bytes sliced(matrix.size());
    regroupQ4_0(matrix.data(), 8, blocks, sliced.data());
    regroupQ4_0(matrix.data() + 8 * rowBytes, 16, blocks, sliced.data() + 8 * rowBytes);
    QVERIFY(sliced == copy);
    QVERIFY(canRegroupQ4_0(8, 1));
    QVERIFY(canRegroupQ4_0(151936, kQ4_0x8MaxBlocks));
    QVERIFY(!canRegroupQ4_0(12, 4));
    QVERIFY(!canRegroupQ4_0(0, 4));
    QVERIFY(!canRegroupQ4_0(8, kQ4_0x8MaxBlocks + 1));
}

// Rows 8..31 of 40: runs after the first, and the last run left out.
void TestRowLayout::rowKernelsEqualRowMajorAtEveryLevel() {
    const KernelTable& portable = kernelsFor(Isa::Portable);
    const RowStreams active = activeRowStreams();
    for (const Isa isa : kAllIsas) {
        if (!isaSupported(isa)) {
            qInfo("%s: not supported by this CPU, not run", isaName(isa));
            continue;
        }
        const KernelTable& level = kernelsFor(isa);
        for (const int64_t blocks :
             {int64_t{1}, int64_t{3}, int64_t{17}, int64_t{28}, kQ4_0x8MaxBlocks}) {
            std::mt19937 generator(static_cast<uint32_t>(blocks));
            constexpr int64_t rows = 40;
            const Bytes matrix =
                randomRow(GgmlType::Q4_0, rows * blocks * 32, blocks % 2 ? 1.0f : 0.01f, generator);
            const Bytes copy = regrouped(matrix, rows, blocks);
            const Bytes activations =
                activationsFor(GgmlType::Q4_0, randomValues(blocks * 32, 2.0f, generator));
            std::vector<float> expected(rows, -1.0f);
            portable.quantRows(GgmlType::Q4_0, matrix.data(), blocks * kBlockBytes, blocks,
                               activations.data(), expected.data(), 8, 32);
            for (const RowStreams streams : {RowStreams::Grouped, RowStreams::Single}) {
                setRowStreams(streams);
                std::vector<float> got(rows, -1.0f);
                level.q4_0x8Rows(copy.data(), blocks, activations.data(), got.data(), 8, 32);
                requireSameBits(got, expected,
                                QStringLiteral("%1, %2 rows, %3 blocks")
                                    .arg(isaName(isa), rowStreamsName(streams))
                                    .arg(blocks));
            }
        }
        qInfo("%s: Q4_0x8 rows equal the row-major kernels'", isaName(isa));
    }
    setRowStreams(active);
}

void TestRowLayout::gemmKernelsEqualRowMajorAtEveryLevel() {
    for (const Isa isa : kAllIsas) {
        if (!isaSupported(isa)) continue;
        const KernelTable& level = kernelsFor(isa);
        for (const int tokens : {1, 11, 37}) {
            std::mt19937 generator(static_cast<uint32_t>(tokens));
            constexpr int64_t rows = 40, blocks = 28;
            const Bytes matrix = randomRow(GgmlType::Q4_0, rows * blocks * 32, 0.1f, generator);
            const Bytes copy = regrouped(matrix, rows, blocks);
            Bytes activations;
            size_t activationBytes = 0;
            for (int t = 0; t < tokens; ++t) {
                const Bytes row =
                    activationsFor(GgmlType::Q4_0, randomValues(blocks * 32, 1.0f + t, generator));
                activationBytes = row.size();
                activations.insert(activations.end(), row.begin(), row.end());
            }
            std::vector<float> got(rows * tokens, -1.0f), expected(rows * tokens, -1.0f);
            level.q4_0x8Gemm(copy.data(), blocks, activations.data(), activationBytes, tokens,
                             got.data(), rows, 8, 32);
            level.quantGemm(GgmlType::Q4_0, matrix.data(), blocks * kBlockBytes, blocks,
                            activations.data(), activationBytes, tokens, expected.data(), rows, 8,
                            32);
            requireSameBits(got, expected,
                            QStringLiteral("%1, %2 tokens").arg(isaName(isa)).arg(tokens));
        }
    }
}

// quantMatvec and quantMatmatPrepared on a pool of threads, matvec, matmat and matrixRow through
// a Matrix: the same values in either layout.
void TestRowLayout::productsAndLookupsTakeTheLayout() {
    std::mt19937 generator(11);
    constexpr int rows = 64, cols = 896;
    const Bytes matrix = randomRow(GgmlType::Q4_0, int64_t{rows} * cols, 0.1f, generator);
    const Bytes copy = regrouped(matrix, rows, cols / 32);
    Matrix rowMajor{nullptr, rows, cols, GgmlType::Q4_0, matrix.data(), cols / 32 * kBlockBytes};
    Matrix grouped = rowMajor;
    grouped.quantized = copy.data();
    grouped.layout = RowLayout::Q4_0x8;
    OwnedThreadPool pool(2);
    constexpr int tokens = 5;
    const std::vector<float> x = randomValues(size_t{tokens} * cols, 1.0f, generator);
    std::vector<float> expected(size_t{tokens} * rows), got(size_t{tokens} * rows);
    matmat(rowMajor, x.data(), tokens, expected.data());
    matmat(grouped, x.data(), tokens, got.data(), pool.get());
    requireSameBits(got, expected, "matmat");
    for (int t = 0; t < tokens; ++t) {
        std::vector<float> one(rows);
        matvec(grouped, x.data() + static_cast<size_t>(t) * cols, one.data(), pool.get());
        requireSameBits(
            one, std::vector<float>(expected.begin() + t * rows, expected.begin() + (t + 1) * rows),
            QStringLiteral("matvec, token %1").arg(t));
    }
    for (const int row : {0, 7, 8, 63}) {
        std::vector<float> a(cols), b(cols);
        matrixRow(rowMajor, row, a.data());
        matrixRow(grouped, row, b.data());
        requireSameBits(b, a, QStringLiteral("row %1").arg(row));
    }
}

void TestRowLayout::layoutsThatCannotHoldAMatrixAreRefused() {
    std::vector<std::byte> scratch;
    const std::vector<float> x(64, 1.0f);
    std::vector<float> out(16);
    const Bytes q8(16 * 2 * 34), q4(12 * 2 * kBlockBytes);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             quantMatvec(GgmlType::Q8_0, q8.data(), 16, 64, x.data(), out.data(),
                                         scratch, nullptr, RowLayout::Q4_0x8));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             quantMatvec(GgmlType::Q4_0, q4.data(), 12, 64, x.data(), out.data(),
                                         scratch, nullptr, RowLayout::Q4_0x8));
}

// A Q4_0 model opened from a file: every product matrix is regrouped (the tied embedding reads
// the output's copy), and after a prefill and a few decoded tokens none of the originals' pages
// is mapped in, so the process holds about the file's size, not twice it.
void TestRowLayout::loadedQ4_0ModelsRegroupAndReleaseTheOriginals() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = (dir.path() + "/q4_0.gguf").toStdString();
    SyntheticSpec spec;
    spec.nVocab = 1024;
    spec.nEmbd = 256;
    spec.nFf = 512;
    spec.weightType = GgmlType::Q4_0;
    spec.tiedOutput = true;
    std::string error;
    QVERIFY2(writeSyntheticModel(spec, path, error), error.c_str());
    auto model = Model::load(path, error);
    QVERIFY2(model, error.c_str());
    QVERIFY(model->file().isMapped());
    const ModelWeights& w = model->weights();
    // On a CPU with AMX the rows take that level's layout (tests/model/test_tile_layout.cpp).
    const RowLayout expected = kernels().tileRows ? RowLayout::Tiles16 : RowLayout::Q4_0x8;
    QCOMPARE(w.output.layout, expected);
    QCOMPARE(w.tokenEmbedding.quantized, w.output.quantized);
    for (const LayerWeights& l : w.layers)
        for (const Matrix* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.wGate, &l.wUp, &l.wDown})
            QCOMPARE(m->layout, expected);

    SessionOptions options;
    Session session(*model, options);
    std::vector<int32_t> prompt;
    for (int i = 0; i < 40; ++i)
        prompt.push_back(300 + 7 * i);
    session.prefill(prompt);
    for (int i = 0; i < 4; ++i)
        session.feed(400 + i);
    // The check can see mapped pages: the regrouped output, read by every decoded token.
    QVERIFY(presentPages(w.output.quantized, w.output.rowBytes * w.output.rows) > 0);
    for (const GgufTensorInfo& t : model->file().tensors()) {
        if (t.type != GgmlType::Q4_0) continue;
        QVERIFY2(presentPages(t.data, t.byteSize) == 0,
                 qPrintable(QStringLiteral("%1: %2 pages of the original mapped")
                                .arg(QString::fromStdString(t.name))
                                .arg(presentPages(t.data, t.byteSize))));
    }
}

QTEST_GUILESS_MAIN(TestRowLayout)
#include "test_row_layout.moc"
