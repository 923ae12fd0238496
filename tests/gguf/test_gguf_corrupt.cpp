// GGUF bytes the reader rejects or survives: corrupt, truncated, damaged, and fuzzer findings.
#include "gguf/gguf.h"
#include "gguf/gguf_writer.h"
#include "gguf_test_support.h"
#include "model/model.h"
#include "model/synthetic.h"
#include "session/sampler.h"
#include "session/session.h"

#include <QtTest>

#include <algorithm>
#include <cstring>
#include <limits>
#include <random>

using namespace sinkscope;
using namespace sinkscope::test;

namespace {

// A header with one key "a" whose value starts with the given type id.
Bytes oneKey(uint32_t valueType) {
    return header(0, 1).str("a").u32(valueType);
}

// The parse error for `bytes`, or "<parsed>" when the bytes were accepted.
QString parseError(std::vector<uint8_t> bytes) {
    std::string error;
    const auto file = GgufFile::fromBytes(std::move(bytes), error, "corrupt.gguf");
    if (file) return QStringLiteral("<parsed>");
    return QString::fromStdString(error);
}

// A small valid file: a few values of several kinds and two F32 tensors whose sizes are whole
// multiples of the alignment, so that cutting any byte off leaves an invalid file.
std::vector<uint8_t> smallValidFile() {
    GgufWriter writer;
    writer.setString("general.architecture", "llama");
    writer.setUint32("llama.block_count", 5);
    writer.setFloat32Array("scores", {0.5f, -1.0f});
    writer.setStringArray("tokens", {"a", "bc"});
    std::vector<float> values(8, 1.0f);
    writer.addTensorFromFloats("w1", {8}, values);
    writer.addTensorFromFloats("w2", {4, 2}, values);
    return writer.bytes();
}

// `bytes` with `tensor`'s data located (by its first 16 bytes, unique for random weights) and the
// float at `index` overwritten.
std::vector<uint8_t> withWeight(std::vector<uint8_t> bytes, const std::string& tensor, size_t index,
                                float value) {
    std::string error;
    const auto file = GgufFile::fromBytes(bytes, error);
    const GgufTensorInfo* info = file ? file->findTensor(tensor) : nullptr;
    if (!info) return {};
    const auto at = std::search(bytes.begin(), bytes.end(), info->data, info->data + 16);
    if (at == bytes.end()) return {};
    std::memcpy(&*at + index * sizeof(float), &value, sizeof(float));
    return bytes;
}

// `bytes` with the string value of `key` replaced by `text` of the same length.
std::vector<uint8_t> withStringValue(std::vector<uint8_t> bytes, std::string_view key,
                                     std::string_view text) {
    const auto keyAt = std::search(bytes.begin(), bytes.end(), key.begin(), key.end());
    if (keyAt == bytes.end()) return {};
    const auto valueAt = keyAt + static_cast<std::ptrdiff_t>(key.size() + 4 + 8); // type, length
    std::copy(text.begin(), text.end(), valueAt);
    return bytes;
}

// A valid llama of `layers` layers, 2 wide, with alignment 1: 9 tensors a layer, as small as the
// format allows, so that the file holds as many tensors as it can.
std::vector<uint8_t> narrowDeepModel(int layers) {
    GgufWriter w(3, 1);
    w.setString("general.architecture", "llama");
    w.setUint32("llama.context_length", 8);
    w.setUint32("llama.embedding_length", 2);
    w.setUint32("llama.block_count", static_cast<uint32_t>(layers));
    w.setUint32("llama.feed_forward_length", 1);
    w.setUint32("llama.attention.head_count", 1);
    w.setString("tokenizer.ggml.model", "llama");
    w.setStringArray("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>"});
    const auto matrix = [&](const std::string& name, int rows, int cols) {
        w.addTensorFromFloats(name, {cols, rows}, std::vector<float>(size_t(rows) * cols, 0.1f));
    };
    const auto norm = [&](const std::string& name) {
        w.addTensorFromFloats(name, {2}, {1.0f, 1.0f});
    };
    matrix("token_embd.weight", 3, 2);
    norm("output_norm.weight");
    for (int i = 0; i < layers; ++i) {
        const std::string p = "blk." + std::to_string(i) + ".";
        norm(p + "attn_norm.weight");
        for (const char* name : {"attn_q", "attn_k", "attn_v", "attn_output"})
            matrix(p + name + ".weight", 2, 2);
        norm(p + "ffn_norm.weight");
        matrix(p + "ffn_gate.weight", 1, 2);
        matrix(p + "ffn_up.weight", 1, 2);
        matrix(p + "ffn_down.weight", 2, 1);
    }
    return w.bytes();
}

} // namespace

class TestGgufCorrupt : public QObject {
    Q_OBJECT

private slots:
    void corruptFile_data();
    void corruptFile();
    void truncatedAtEveryByte();
    void survivesRandomDamage();
    void fuzzFindings_data();
    void fuzzFindings();
    void mostLayersLoad();
};

void TestGgufCorrupt::corruptFile_data() {
    QTest::addColumn<std::vector<uint8_t>>("bytes");
    QTest::addColumn<QString>("expected");

    Bytes badMagic;
    badMagic.u32(0x58554747u).u32(3).u64(0).u64(0);
    QTest::newRow("bad magic") << badMagic.data()
                               << "corrupt.gguf: header: bad magic: not a GGUF file";
    QTest::newRow("version 1") << header(0, 0, 1).data()
                               << "unsupported GGUF version 1 (Sinkscope reads v2 and v3)";
    QTest::newRow("version 4") << header(0, 0, 4).data() << "unsupported GGUF version 4";
    QTest::newRow("huge n_tensors")
        << header(1ull << 60, 0).data()
        << "n_tensors 1152921504606846976 runs past the end of the file (at least 32 bytes "
           "each, 0 left)";
    QTest::newRow("huge n_kv")
        << header(0, UINT64_MAX).zeros(40).data()
        << "n_kv 18446744073709551615 runs past the end of the file (at least 13 bytes "
           "each, 40 left)";
    QTest::newRow("key length past end")
        << header(0, 1).u64(1000).u32(0).u8(0).data()
        << "metadata entry 0: key length 1000 runs past the end of the file";
    QTest::newRow("string length past end")
        << header(0, 1).str("general.name").u32(8).u64(99999999).data()
        << "metadata key 'general.name': string length 99999999 runs past the end of the file";
    QTest::newRow("string length 2^64-1")
        << header(0, 1).str("s").u32(8).u64(UINT64_MAX).data()
        << "metadata key 's': string length 18446744073709551615 runs past the end";
    QTest::newRow("unknown value type")
        << oneKey(13).u64(0).data() << "metadata key 'a': unknown value type 13";
    QTest::newRow("bad array element type") << oneKey(kArray).u32(13).u64(1).u64(0).data()
                                            << "metadata key 'a': unknown array element type 13";
    QTest::newRow("array of arrays") << oneKey(kArray).u32(kArray).u64(1).u32(0).u64(0).data()
                                     << "metadata key 'a': arrays of arrays are not supported";
    QTest::newRow("huge array length")
        << oneKey(kArray).u32(static_cast<uint32_t>(GgufValueType::Float32)).u64(1ull << 62).data()
        << "metadata key 'a': array length 4611686018427387904 runs past the end of the file";
    QTest::newRow("huge string array")
        << oneKey(kArray)
               .u32(static_cast<uint32_t>(GgufValueType::String))
               .u64(1ull << 40)
               .str("x")
               .data()
        << "array length 1099511627776 runs past the end of the file (at least 8 bytes each, "
           "9 left)";
    QTest::newRow("array string past end")
        << oneKey(kArray)
               .u32(static_cast<uint32_t>(GgufValueType::String))
               .u64(2)
               .str("x")
               .u64(50)
               .data()
        << "metadata key 'a': array string length 50 runs past the end of the file";
    QTest::newRow("uint64 element above int64")
        << oneKey(kArray)
               .u32(static_cast<uint32_t>(GgufValueType::Uint64))
               .u64(1)
               .u64(1ull << 63)
               .data()
        << "array element 0: uint64 value 9223372036854775808 does not fit in int64";
    QTest::newRow("bool byte 2") << oneKey(static_cast<uint32_t>(GgufValueType::Bool)).u8(2).data()
                                 << "metadata key 'a': bool value 2 is not 0 or 1";
    QTest::newRow("value past end")
        << oneKey(static_cast<uint32_t>(GgufValueType::Uint64)).u32(0).data()
        << "metadata key 'a': uint64 value runs past the end of the file";

    GgufWriter duplicateKey;
    duplicateKey.setUint32("llama.block_count", 1);
    duplicateKey.setUint32("llama.block_count", 2);
    QTest::newRow("duplicate key")
        << duplicateKey.bytes() << "duplicate metadata key 'llama.block_count'";
    QTest::newRow("control bytes in a key stay on one line")
        << header(0, 2).str("a\nb").u32(0).u8(0).str("a\nb").u32(0).u8(0).data()
        << "duplicate metadata key 'a?b'";

    for (uint32_t alignment : {0u, 3u, 24u}) {
        GgufWriter writer;
        writer.setUint32("general.alignment", alignment);
        QTest::addRow("alignment %u", alignment)
            << writer.bytes()
            << QStringLiteral("general.alignment must be a power of two (got %1)").arg(alignment);
    }
    GgufWriter stringAlignment;
    stringAlignment.setString("general.alignment", "32");
    QTest::newRow("alignment as string")
        << stringAlignment.bytes() << "general.alignment must be a uint32 (got string)";

    QTest::newRow("5 dims") << header(1, 0).tensor("t", {1, 1, 1, 1, 1}, kF32, 0).data()
                            << "tensor 't': has 5 dimensions (at least 1, at most 4)";
    QTest::newRow("0 dims") << header(1, 0).tensor("t", {}, kF32, 0).zeros(16).data()
                            << "tensor 't': has 0 dimensions";
    QTest::newRow("huge n_dims") << header(1, 0).str("t").u32(UINT32_MAX).zeros(32).data()
                                 << "tensor 't': has 4294967295 dimensions";
    QTest::newRow("negative dim")
        << header(1, 0).tensor("blk.3.attn_q.weight", {4, uint64_t(-5)}, kF32, 0).data()
        << "tensor 'blk.3.attn_q.weight': dimension 1 is negative (-5)";
    QTest::newRow("zero dim") << header(1, 0).tensor("t", {4, 0}, kF32, 0).data()
                              << "tensor 't': dimension 1 is zero";
    QTest::newRow("element count overflows")
        << header(1, 0).tensor("t", {1ull << 32, 1ull << 32}, kF32, 0).data()
        << "tensor 't': element count overflows";
    QTest::newRow("byte size overflows")
        << header(1, 0)
               .tensor("t", {1ull << 31, 1ull << 31}, static_cast<uint32_t>(GgmlType::F64), 0)
               .data()
        << "tensor 't': byte size overflows";
    QTest::newRow("unknown tensor type")
        << header(1, 0).tensor("t", {4}, 77, 0).data() << "tensor 't': unknown tensor type 77";
    QTest::newRow("retired tensor type")
        << header(1, 0).tensor("t", {4}, 4, 0).data() << "tensor 't': unknown tensor type 4";
    QTest::newRow("row not whole blocks")
        << header(1, 0).tensor("t", {33, 32}, static_cast<uint32_t>(GgmlType::Q8_0), 0).data()
        << "tensor 't': row length 33 is not a multiple of the Q8_0 block size 32";
    QTest::newRow("K-quant row not whole super-blocks")
        << header(1, 0).tensor("t", {192, 4}, static_cast<uint32_t>(GgmlType::Q4_K), 0).data()
        << "tensor 't': row length 192 is not a multiple of the Q4_K block size 256";
    QTest::newRow("duplicate tensor name") << header(2, 0)
                                                  .tensor("w", {8}, kF32, 0)
                                                  .tensor("w", {8}, kF32, 32)
                                                  .padTo(32)
                                                  .zeros(64)
                                                  .data()
                                           << "duplicate tensor name 'w'";
    QTest::newRow("misaligned offset")
        << header(1, 0).tensor("t", {4}, kF32, 17).padTo(32).zeros(64).data()
        << "corrupt.gguf: tensor 't' offset 17 is not a multiple of the alignment 32";
    QTest::newRow("overlapping tensors") << header(2, 0)
                                                .tensor("a", {16}, kF32, 0)
                                                .tensor("b", {16}, kF32, 32)
                                                .padTo(32)
                                                .zeros(96)
                                                .data()
                                         << "tensors 'a' and 'b' overlap";
    QTest::newRow("data past end")
        << header(1, 0).tensor("blk.3.attn_q.weight", {16}, kF32, 0).padTo(32).zeros(32).data()
        << "tensor 'blk.3.attn_q.weight' data ends past the end of the file (offset 0, size 64, "
           "data section at 96, file 128)";
    QTest::newRow("offset past end")
        << header(1, 0).tensor("t", {4}, kF32, 1ull << 63).padTo(32).zeros(32).data()
        << "tensor 't' data ends past the end of the file (offset 9223372036854775808";
    QTest::newRow("no data section")
        << header(1, 0).tensor("t", {4}, kF32, 0).data()
        << "tensor 't' data ends past the end of the file (offset 0, size 16, data section at 64, "
           "file 57)";
    QTest::newRow("empty") << std::vector<uint8_t>{} << "corrupt.gguf: the file is empty";
}

void TestGgufCorrupt::corruptFile() {
    QFETCH(std::vector<uint8_t>, bytes);
    QFETCH(QString, expected);
    const QString error = parseError(bytes);
    QVERIFY2(error.contains(expected), qPrintable(QStringLiteral("got: ") + error));
    QVERIFY(error.startsWith("corrupt.gguf: "));
    QVERIFY(!error.contains('\n'));
}

void TestGgufCorrupt::truncatedAtEveryByte() {
    const std::vector<uint8_t> whole = smallValidFile();
    QCOMPARE(parseError(whole), QStringLiteral("<parsed>"));
    for (size_t length = 0; length < whole.size(); ++length) {
        const std::vector<uint8_t> prefix(whole.begin(), whole.begin() + length);
        const QString error = parseError(prefix);
        const bool clean = error.startsWith("corrupt.gguf: ") &&
                           (error.contains("past the end of the file") || error.contains("empty"));
        if (!clean)
            QFAIL(qPrintable(QStringLiteral("prefix of %1 bytes: %2").arg(length).arg(error)));
    }
}

// Random byte damage to a valid file must give either a file or a message, never a crash
// (run under the sanitizers this also checks every read stays in bounds).
void TestGgufCorrupt::survivesRandomDamage() {
    const std::vector<uint8_t> whole = smallValidFile();
    std::mt19937 generator(1234);
    int rejected = 0;
    for (int trial = 0; trial < 20000; ++trial) {
        std::vector<uint8_t> damaged = whole;
        const int flips = 1 + static_cast<int>(generator() % 4);
        for (int i = 0; i < flips; ++i) {
            const size_t at = generator() % damaged.size();
            damaged[at] = trial % 3 == 0 ? 0xff : static_cast<uint8_t>(generator());
        }
        std::string error;
        const auto file = GgufFile::fromBytes(std::move(damaged), error, "damaged");
        QVERIFY(bool(file) == error.empty());
        rejected += file ? 0 : 1;
    }
    QVERIFY(rejected > 1000); // the damage really reached the parser
}

// Inputs tests/fuzz/fuzz_gguf found (or that guard what it checks): each must load and run, or
// fail with a one-line message. Under the sanitizer build (SINKSCOPE_SANITIZE) they also prove
// the fixes: the NaN row was undefined behaviour in the int8 cache before.
void TestGgufCorrupt::fuzzFindings_data() {
    QTest::addColumn<std::vector<uint8_t>>("bytes");
    QTest::addColumn<QString>("expectedError"); // empty: the model must load and run
    const std::vector<uint8_t> model = syntheticModelBytes(smallSpec());
    QTest::newRow("NaN in one K weight: a K row mixes NaN and finite values")
        << withWeight(model, "blk.0.attn_k.weight", 5, std::numeric_limits<float>::quiet_NaN())
        << QString();
    QTest::newRow("infinity in one V weight")
        << withWeight(model, "blk.1.attn_v.weight", 7, std::numeric_limits<float>::infinity())
        << QString();
    QTest::newRow("line break in the architecture name")
        << withStringValue(model, "general.architecture", "ll\nma")
        << "fuzz: unsupported architecture 'll?ma'";
}

void TestGgufCorrupt::fuzzFindings() {
    QFETCH(std::vector<uint8_t>, bytes);
    QFETCH(QString, expectedError);
    QVERIFY(!bytes.empty());
    std::string error;
    auto file = GgufFile::fromBytes(std::move(bytes), error, "fuzz");
    const auto model = file ? Model::fromGguf(std::move(file), error) : nullptr;
    if (!expectedError.isEmpty()) {
        QVERIFY(!model);
        QVERIFY2(QString::fromStdString(error).startsWith(expectedError), error.c_str());
        QVERIFY(error.find('\n') == std::string::npos);
        return;
    }
    QVERIFY2(model, error.c_str());
    SessionOptions options;
    options.kvWindow = 4; // the ring wraps: evicted rows are rewritten
    Session session(*model, options);
    Sampler greedy(SamplerOptions{.greedy = true});
    std::span<const float> logits = session.prefill(std::vector<int32_t>{1, 100, 150});
    for (int step = 0; step < 8; ++step) {
        const int32_t next = greedy.sample(logits);
        QVERIFY(next >= 0 && next < model->config().nVocab);
        logits = session.feed(next);
    }
}

// The loader accepts up to 4096 layers, 9 tensors each. Tensor lookup by name is a hash map: a
// linear search made this 2.7 MB file take over a second to load (see tests/fuzz/README.md).
void TestGgufCorrupt::mostLayersLoad() {
    std::vector<uint8_t> bytes = narrowDeepModel(4096);
    std::string error;
    const auto model = Model::fromGguf(GgufFile::fromBytes(std::move(bytes), error), error);
    QVERIFY2(model, error.c_str());
    QCOMPARE(model->config().nLayer, 4096);
    QCOMPARE(model->file().tensors().size(), size_t(2 + 9 * 4096));
    QVERIFY(model->file().findTensor("blk.4095.ffn_down.weight"));
    QVERIFY(!model->file().findTensor("blk.4096.ffn_down.weight"));
}

QTEST_GUILESS_MAIN(TestGgufCorrupt)
#include "test_gguf_corrupt.moc"
