// GGUF reader and writer: round trips, one hand-made corrupt file per failure mode, truncation at
// every byte, random damage, the real open() path and stories260K.
#include "gguf.h"
#include "gguf/dequantize.h"
#include "gguf_writer.h"
#include "model.h"
#include "sampler.h"
#include "session.h"
#include "synthetic.h"
#include "test_support.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace sinkscope;

namespace {

// Little-endian byte builder for hand-made (often corrupt) files.
class Bytes {
public:
    template <typename T> Bytes& put(T value) {
        const size_t at = m_data.size();
        m_data.resize(at + sizeof(T));
        std::memcpy(m_data.data() + at, &value, sizeof(T));
        return *this;
    }
    Bytes& u8(uint8_t value) { return put(value); }
    Bytes& u32(uint32_t value) { return put(value); }
    Bytes& u64(uint64_t value) { return put(value); }
    Bytes& str(std::string_view text) {
        u64(text.size());
        m_data.insert(m_data.end(), text.begin(), text.end());
        return *this;
    }
    Bytes& zeros(size_t count) {
        m_data.resize(m_data.size() + count, 0);
        return *this;
    }
    Bytes& padTo(size_t alignment) {
        m_data.resize((m_data.size() + alignment - 1) / alignment * alignment, 0);
        return *this;
    }
    // A tensor info: name, n_dims, ne[], ggml type, offset.
    Bytes& tensor(std::string_view name, const std::vector<uint64_t>& dims, uint32_t type,
                  uint64_t offset) {
        str(name).u32(static_cast<uint32_t>(dims.size()));
        for (uint64_t dim : dims)
            u64(dim);
        return u32(type).u64(offset);
    }
    std::vector<uint8_t> data() const { return m_data; }

private:
    std::vector<uint8_t> m_data;
};

Bytes header(uint64_t tensorCount, uint64_t keyValueCount, uint32_t version = 3) {
    Bytes bytes;
    bytes.u32(0x46554747u).u32(version).u64(tensorCount).u64(keyValueCount);
    return bytes;
}

// A header with one key "a" whose value starts with the given type id.
Bytes oneKey(uint32_t valueType) {
    return header(0, 1).str("a").u32(valueType);
}

constexpr uint32_t kF32 = static_cast<uint32_t>(GgmlType::F32);
constexpr uint32_t kArray = static_cast<uint32_t>(GgufValueType::Array);

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

std::vector<uint8_t> floatBytes(const std::vector<float>& values) {
    std::vector<uint8_t> bytes(values.size() * sizeof(float));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return bytes;
}

// A small synthetic model: 2 layers of F32 weights.
SyntheticSpec smallSpec() {
    SyntheticSpec spec;
    spec.nVocab = 300;
    spec.nEmbd = 32;
    spec.nFf = 64;
    return spec;
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

// The logits of BOS and a few tokens through a fresh session.
std::vector<float> logitsAfterPrompt(const Model& model) {
    Session session(model, SessionOptions{});
    const std::vector<int32_t> prompt = {1, 100, 150, 200};
    const std::span<const float> logits = session.prefill(prompt);
    return {logits.begin(), logits.end()};
}

} // namespace

class TestGguf : public QObject {
    Q_OBJECT

private slots:
    void writerRoundTrip_data();
    void writerRoundTrip();
    void writerLayoutIsStandard();
    void decodesEveryValueType();
    void valueAccessorsRejectOtherKinds();
    void acceptsKnownButUnsupportedTensorTypes();
    void tensorsInAnyOrder();
    void corruptFile_data();
    void corruptFile();
    void truncatedAtEveryByte();
    void survivesRandomDamage();
    void openEmptyFile();
    void openDirectory();
    void openMissingFile();
    void openStories260K();
    void openMapsOrCopies();
    void copiedModelSurvivesTruncation();
    void fuzzFindings_data();
    void fuzzFindings();
    void mostLayersLoad();
};

void TestGguf::writerRoundTrip_data() {
    QTest::addColumn<uint32_t>("version");
    QTest::addColumn<uint32_t>("alignment");
    QTest::addColumn<bool>("throughFile");
    QTest::newRow("v3 via open()") << 3u << 32u << true;
    QTest::newRow("v2 via open()") << 2u << 32u << true;
    QTest::newRow("v3 in memory") << 3u << 32u << false;
    QTest::newRow("v2 in memory, alignment 64") << 2u << 64u << false;
    QTest::newRow("v3 via open(), alignment 256") << 3u << 256u << true;
}

void TestGguf::writerRoundTrip() {
    QFETCH(uint32_t, version);
    QFETCH(uint32_t, alignment);
    QFETCH(bool, throughFile);

    GgufWriter writer(version, alignment);
    writer.setUint32("u32", 4000000000u);
    writer.setInt32("i32", -123456);
    writer.setUint64("u64.small", 1ull << 40);
    writer.setUint64("u64.huge", UINT64_MAX);
    writer.setFloat32("f32", 0.1f);
    writer.setBool("yes", true);
    writer.setBool("no", false);
    writer.setString("text", "h\xc3\xa9llo, world");
    writer.setString("empty", "");
    writer.setStringArray("strings", {"", "a", "\xe2\x96\x81the"});
    writer.setFloat32Array("floats", {1.5f, -2.25f, 1e-8f});
    writer.setInt32Array("ints", {-1, 0, 2147483647});
    writer.setInt32Array("no.ints", {});

    const std::vector<float> f32Values{1, 2, 3, 4, 5, 6};
    writer.addTensor("f32", GgmlType::F32, {3, 2}, floatBytes(f32Values));
    std::vector<float> ramp(64);
    for (size_t i = 0; i < ramp.size(); ++i)
        ramp[i] = 0.25f * static_cast<float>(i) - 7.0f;
    writer.addTensorFromFloats("f16", {16, 4}, ramp, GgmlType::F16);
    writer.addTensorFromFloats("q8", {32, 2}, ramp, GgmlType::Q8_0);
    writer.addTensorFromFloats("q4", {64}, ramp, GgmlType::Q4_0);

    std::string error;
    std::unique_ptr<GgufFile> file;
    QTemporaryDir dir;
    if (throughFile) {
        QVERIFY(dir.isValid());
        const std::string path = dir.filePath("round.gguf").toStdString();
        QVERIFY2(writer.writeFile(path, error), error.c_str());
        file = GgufFile::open(path, error);
    } else {
        file = GgufFile::fromBytes(writer.bytes(), error);
    }
    QVERIFY2(file, error.c_str());
    QCOMPARE(file->version(), version);
    QCOMPARE(file->alignment(), uint64_t(alignment));
    QCOMPARE(file->fileSize(), uint64_t(writer.bytes().size()));

    // Metadata in insertion order; general.alignment comes first when it is not the default.
    std::vector<std::string> keys;
    for (const GgufKeyValue& entry : file->metadata())
        keys.push_back(entry.key);
    std::vector<std::string> expectedKeys{"u32",    "i32",  "u64.small", "u64.huge", "f32",
                                          "yes",    "no",   "text",      "empty",    "strings",
                                          "floats", "ints", "no.ints"};
    if (alignment != 32) expectedKeys.insert(expectedKeys.begin(), "general.alignment");
    QCOMPARE(keys, expectedKeys);

    QCOMPARE(file->find("u32")->type(), GgufValueType::Uint32);
    QCOMPARE(file->getInt("u32"), std::optional<int64_t>(4000000000));
    QCOMPARE(file->find("i32")->type(), GgufValueType::Int32);
    QCOMPARE(file->getInt("i32"), std::optional<int64_t>(-123456));
    QCOMPARE(file->getInt("u64.small"), std::optional<int64_t>(1ll << 40));
    QCOMPARE(file->find("u64.huge")->type(), GgufValueType::Uint64);
    QCOMPARE(file->getInt("u64.huge"), std::nullopt); // does not fit int64
    QCOMPARE(file->find("f32")->type(), GgufValueType::Float32);
    QCOMPARE(file->getFloat("f32"), std::optional<double>(double(0.1f)));
    QCOMPARE(file->find("yes")->asBool(), std::optional<bool>(true));
    QCOMPARE(file->find("no")->asBool(), std::optional<bool>(false));
    QCOMPARE(file->getString("text"), std::optional<std::string>("h\xc3\xa9llo, world"));
    QCOMPARE(file->getString("empty"), std::optional<std::string>(""));

    const GgufValue* strings = file->find("strings");
    QCOMPARE(strings->type(), GgufValueType::Array);
    QCOMPARE(strings->elementType(), GgufValueType::String);
    QCOMPARE(*strings->asStringArray(), (std::vector<std::string>{"", "a", "\xe2\x96\x81the"}));
    QCOMPARE(strings->arraySize(), size_t(3));
    QCOMPARE(file->find("floats")->elementType(), GgufValueType::Float32);
    QCOMPARE(*file->find("floats")->asFloatArray(),
             (std::vector<double>{1.5, -2.25, double(1e-8f)}));
    QCOMPARE(file->find("ints")->elementType(), GgufValueType::Int32);
    QCOMPARE(*file->find("ints")->asIntArray(), (std::vector<int64_t>{-1, 0, 2147483647}));
    QCOMPARE(file->find("no.ints")->arraySize(), size_t(0));
    QVERIFY(file->find("no.ints")->asIntArray());
    QCOMPARE(file->find("missing"), nullptr);

    // Tensors: shapes, types, sizes, aligned offsets and the bytes that were written.
    QCOMPARE(file->tensors().size(), size_t(4));
    const GgufTensorInfo* f32 = file->findTensor("f32");
    QVERIFY(f32);
    QCOMPARE(f32->dims, (std::vector<int64_t>{3, 2}));
    QCOMPARE(f32->elementCount, uint64_t(6));
    QCOMPARE(f32->byteSize, uint64_t(24));
    QCOMPARE(std::memcmp(f32->data, floatBytes(f32Values).data(), 24), 0);
    QCOMPARE(file->findTensor("f16")->type, GgmlType::F16);
    QCOMPARE(file->findTensor("q8")->byteSize, uint64_t(68));
    QCOMPARE(file->findTensor("q4")->byteSize, uint64_t(36));
    const uint8_t* dataSection = file->tensors()[0].data - file->tensors()[0].offset;
    for (const GgufTensorInfo& tensor : file->tensors()) {
        QCOMPARE(tensor.offset % alignment, uint64_t(0));
        QCOMPARE(tensor.data - tensor.offset, dataSection); // one data section for all
        if (throughFile) // a page-aligned mapping makes the pointers themselves aligned
            QCOMPARE(reinterpret_cast<uintptr_t>(tensor.data) % alignment, uintptr_t(0));
    }
    std::vector<float> back(64);
    dequantizeRow(GgmlType::F16, file->findTensor("f16")->data, back.data(), 64);
    QCOMPARE(back, ramp); // quarter steps are exact in f16
    std::vector<uint8_t> q4(36);
    quantizeRow(GgmlType::Q4_0, ramp.data(), q4.data(), 64);
    QCOMPARE(std::memcmp(file->findTensor("q4")->data, q4.data(), 36), 0);
    QCOMPARE(file->findTensor("missing"), nullptr);
}

// The bytes ggml would write for one key and one tensor: header, key-value, tensor info,
// zero padding to 32, then the data padded to 32.
void TestGguf::writerLayoutIsStandard() {
    GgufWriter writer;
    writer.setUint32("k", 7);
    writer.addTensor("t", GgmlType::F32, {2}, floatBytes({1.0f, 2.0f}));
    Bytes expected = header(1, 1);
    expected.str("k").u32(static_cast<uint32_t>(GgufValueType::Uint32)).u32(7);
    expected.tensor("t", {2}, kF32, 0).padTo(32);
    expected.put(1.0f).put(2.0f).padTo(32);
    QCOMPARE(writer.bytes(), expected.data());
}

void TestGguf::decodesEveryValueType() {
    using T = GgufValueType;
    const auto typeId = [](T type) { return static_cast<uint32_t>(type); };
    Bytes bytes = header(0, 25);
    bytes.str("u8").u32(typeId(T::Uint8)).u8(200);
    bytes.str("i8").u32(typeId(T::Int8)).put<int8_t>(-100);
    bytes.str("u16").u32(typeId(T::Uint16)).put<uint16_t>(60000);
    bytes.str("i16").u32(typeId(T::Int16)).put<int16_t>(-30000);
    bytes.str("u32").u32(typeId(T::Uint32)).u32(4000000000u);
    bytes.str("i32").u32(typeId(T::Int32)).put<int32_t>(-2000000000);
    bytes.str("f32").u32(typeId(T::Float32)).put(2.5f);
    bytes.str("bool").u32(typeId(T::Bool)).u8(1);
    bytes.str("str").u32(typeId(T::String)).str("hi");
    bytes.str("u64").u32(typeId(T::Uint64)).u64(1ull << 63);
    bytes.str("i64").u32(typeId(T::Int64)).put<int64_t>(INT64_MIN);
    bytes.str("f64").u32(typeId(T::Float64)).put(-1e300);
    // Arrays of every element type but array.
    bytes.str("a.u8").u32(kArray).u32(typeId(T::Uint8)).u64(2).u8(0).u8(255);
    bytes.str("a.i8").u32(kArray).u32(typeId(T::Int8)).u64(1).put<int8_t>(-128);
    bytes.str("a.u16").u32(kArray).u32(typeId(T::Uint16)).u64(1).put<uint16_t>(65535);
    bytes.str("a.i16").u32(kArray).u32(typeId(T::Int16)).u64(1).put<int16_t>(-32768);
    bytes.str("a.u32").u32(kArray).u32(typeId(T::Uint32)).u64(1).u32(UINT32_MAX);
    bytes.str("a.i32").u32(kArray).u32(typeId(T::Int32)).u64(1).put<int32_t>(INT32_MIN);
    bytes.str("a.f32").u32(kArray).u32(typeId(T::Float32)).u64(2).put(0.5f).put(-0.25f);
    bytes.str("a.bool").u32(kArray).u32(typeId(T::Bool)).u64(3).u8(1).u8(0).u8(1);
    bytes.str("a.str").u32(kArray).u32(typeId(T::String)).u64(2).str("x").str("");
    bytes.str("a.u64").u32(kArray).u32(typeId(T::Uint64)).u64(1).u64(INT64_MAX);
    bytes.str("a.i64").u32(kArray).u32(typeId(T::Int64)).u64(1).put<int64_t>(-5);
    bytes.str("a.f64").u32(kArray).u32(typeId(T::Float64)).u64(1).put(0.125);
    bytes.str("a.empty").u32(kArray).u32(typeId(T::Float64)).u64(0);

    std::string error;
    const auto file = GgufFile::fromBytes(bytes.data(), error);
    QVERIFY2(file, error.c_str());
    QCOMPARE(file->metadata().size(), size_t(25));
    QCOMPARE(file->getInt("u8"), std::optional<int64_t>(200));
    QCOMPARE(file->getInt("i8"), std::optional<int64_t>(-100));
    QCOMPARE(file->getInt("u16"), std::optional<int64_t>(60000));
    QCOMPARE(file->getInt("i16"), std::optional<int64_t>(-30000));
    QCOMPARE(file->getInt("u32"), std::optional<int64_t>(4000000000));
    QCOMPARE(file->getInt("i32"), std::optional<int64_t>(-2000000000));
    QCOMPARE(file->getFloat("f32"), std::optional<double>(2.5));
    QCOMPARE(file->find("bool")->asBool(), std::optional<bool>(true));
    QCOMPARE(file->getString("str"), std::optional<std::string>("hi"));
    QCOMPARE(file->getInt("u64"), std::nullopt); // 2^63 does not fit int64
    QCOMPARE(file->find("u64")->type(), GgufValueType::Uint64);
    QCOMPARE(file->getInt("i64"), std::optional<int64_t>(INT64_MIN));
    QCOMPARE(file->getFloat("f64"), std::optional<double>(-1e300));
    QCOMPARE(*file->find("a.u8")->asIntArray(), (std::vector<int64_t>{0, 255}));
    QCOMPARE(file->find("a.u8")->elementType(), GgufValueType::Uint8);
    QCOMPARE(*file->find("a.i8")->asIntArray(), (std::vector<int64_t>{-128}));
    QCOMPARE(*file->find("a.u16")->asIntArray(), (std::vector<int64_t>{65535}));
    QCOMPARE(*file->find("a.i16")->asIntArray(), (std::vector<int64_t>{-32768}));
    QCOMPARE(*file->find("a.u32")->asIntArray(), (std::vector<int64_t>{UINT32_MAX}));
    QCOMPARE(*file->find("a.i32")->asIntArray(), (std::vector<int64_t>{INT32_MIN}));
    QCOMPARE(*file->find("a.f32")->asFloatArray(), (std::vector<double>{0.5, -0.25}));
    QCOMPARE(file->find("a.bool")->arraySize(), size_t(3));
    QCOMPARE(file->find("a.bool")->elementType(), GgufValueType::Bool);
    QCOMPARE(*file->find("a.str")->asStringArray(), (std::vector<std::string>{"x", ""}));
    QCOMPARE(*file->find("a.u64")->asIntArray(), (std::vector<int64_t>{INT64_MAX}));
    QCOMPARE(*file->find("a.i64")->asIntArray(), (std::vector<int64_t>{-5}));
    QCOMPARE(*file->find("a.f64")->asFloatArray(), (std::vector<double>{0.125}));
    QCOMPARE(file->find("a.empty")->arraySize(), size_t(0));
    QVERIFY(file->tensors().empty());
}

void TestGguf::valueAccessorsRejectOtherKinds() {
    GgufWriter writer;
    writer.setString("s", "7");
    writer.setFloat32("f", 7.0f);
    writer.setInt32Array("ints", {7});
    std::string error;
    const auto file = GgufFile::fromBytes(writer.bytes(), error);
    QVERIFY2(file, error.c_str());
    QCOMPARE(file->getInt("s"), std::nullopt);
    QCOMPARE(file->getFloat("s"), std::nullopt);
    QCOMPARE(file->getInt("f"), std::nullopt); // floats do not turn into integers
    QCOMPARE(file->getString("f"), std::nullopt);
    QCOMPARE(file->find("s")->asBool(), std::nullopt);
    QCOMPARE(file->find("s")->arraySize(), size_t(0));
    QCOMPARE(file->find("ints")->asFloatArray(), nullptr);
    QCOMPARE(file->find("ints")->asStringArray(), nullptr);
    QCOMPARE(file->getInt("ints"), std::nullopt);
    QCOMPARE(file->getInt("absent"), std::nullopt);
}

// Known types the engine cannot compute with still parse: the model loader names them later.
void TestGguf::acceptsKnownButUnsupportedTensorTypes() {
    const auto iq2 = static_cast<uint32_t>(GgmlType::IQ2_XXS);
    Bytes bytes = header(1, 0);
    bytes.tensor("k", {256, 2}, iq2, 0).padTo(32).zeros(2 * 66);
    std::string error;
    const auto file = GgufFile::fromBytes(bytes.data(), error);
    QVERIFY2(file, error.c_str());
    QCOMPARE(file->tensors()[0].type, GgmlType::IQ2_XXS);
    QCOMPARE(file->tensors()[0].byteSize, uint64_t(132));
}

void TestGguf::tensorsInAnyOrder() {
    Bytes bytes = header(2, 0);
    bytes.tensor("late", {8}, kF32, 32).tensor("early", {8}, kF32, 0).padTo(32);
    bytes.put(1.0f).zeros(28).put(2.0f).zeros(28);
    std::string error;
    const auto file = GgufFile::fromBytes(bytes.data(), error);
    QVERIFY2(file, error.c_str());
    float first = 0;
    std::memcpy(&first, file->findTensor("late")->data, sizeof first);
    QCOMPARE(first, 2.0f);
}

void TestGguf::corruptFile_data() {
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

void TestGguf::corruptFile() {
    QFETCH(std::vector<uint8_t>, bytes);
    QFETCH(QString, expected);
    const QString error = parseError(bytes);
    QVERIFY2(error.contains(expected), qPrintable(QStringLiteral("got: ") + error));
    QVERIFY(error.startsWith("corrupt.gguf: "));
    QVERIFY(!error.contains('\n'));
}

void TestGguf::truncatedAtEveryByte() {
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
void TestGguf::survivesRandomDamage() {
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

void TestGguf::openEmptyFile() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath("empty.gguf");
    QFile empty(path);
    QVERIFY(empty.open(QIODevice::WriteOnly));
    empty.close();
    std::string error;
    QVERIFY(!GgufFile::open(path.toStdString(), error));
    QCOMPARE(QString::fromStdString(error),
             path + ": the file is empty (0 bytes), not a GGUF file");
}

void TestGguf::openDirectory() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    std::string error;
    QVERIFY(!GgufFile::open(dir.path().toStdString(), error));
    QCOMPARE(QString::fromStdString(error), dir.path() + " is a directory");
}

void TestGguf::openMissingFile() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath("absent.gguf");
    std::string error;
    QVERIFY(!GgufFile::open(path.toStdString(), error));
    QCOMPARE(QString::fromStdString(error), "cannot open " + path + ": No such file or directory");
}

void TestGguf::openStories260K() {
    SINKSCOPE_REQUIRE_STORIES();
    std::string error;
    const auto file = GgufFile::open(sinkscope::test::storiesModelPath().toStdString(), error);
    QVERIFY2(file, error.c_str());
    QCOMPARE(file->version(), 3u);
    QCOMPARE(file->alignment(), uint64_t(32));
    QCOMPARE(file->tensors().size(), size_t(48)); // embeddings, output norm, output, 5 x 9
    QCOMPARE(file->getString("general.architecture"), std::optional<std::string>("llama"));
    QCOMPARE(file->getInt("llama.block_count"), std::optional<int64_t>(5));
    QCOMPARE(file->getInt("llama.embedding_length"), std::optional<int64_t>(64));
    QCOMPARE(file->getInt("tokenizer.ggml.bos_token_id"), std::optional<int64_t>(1));
    QCOMPARE(file->find("tokenizer.ggml.tokens")->arraySize(), size_t(512));
    const GgufTensorInfo* embeddings = file->findTensor("token_embd.weight");
    QVERIFY(embeddings);
    QCOMPARE(embeddings->type, GgmlType::F32);
    QCOMPARE(embeddings->dims, (std::vector<int64_t>{64, 512}));
    QCOMPARE(reinterpret_cast<uintptr_t>(embeddings->data) % 32, uintptr_t(0));
    const auto* weights = reinterpret_cast<const float*>(embeddings->data);
    for (int i = 0; i < 64 * 512; ++i)
        QVERIFY(std::isfinite(weights[i]));
    QCOMPARE(file->findTensor("blk.4.ffn_down.weight")->dims, (std::vector<int64_t>{172, 64}));
}

void TestGguf::openMapsOrCopies() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath("small.gguf").toStdString();
    std::string error;
    QVERIFY2(writeSyntheticModel(smallSpec(), path, error), error.c_str());
    const auto mapped = GgufFile::open(path, error, GgufReadMode::Map);
    const auto copied = GgufFile::open(path, error, GgufReadMode::Copy);
    QVERIFY2(mapped && copied, error.c_str());
    QVERIFY(mapped->isMapped());
    QVERIFY(!copied->isMapped());
    QCOMPARE(copied->fileSize(), mapped->fileSize());
    QCOMPARE(copied->tensors().size(), mapped->tensors().size());
    for (const GgufTensorInfo& tensor : mapped->tensors()) {
        const GgufTensorInfo* twin = copied->findTensor(tensor.name);
        QVERIFY(twin && twin->data != tensor.data);
        QVERIFY(std::memcmp(twin->data, tensor.data, tensor.byteSize) == 0);
    }
    const std::string missing = dir.filePath("absent.gguf").toStdString();
    QVERIFY(!GgufFile::open(missing, error, GgufReadMode::Copy));
    QCOMPARE(error, "cannot open " + missing + ": No such file or directory");
}

// A copied model is the process's own: truncating its file afterwards changes nothing. (A mapped
// one would take SIGBUS on its next F32 weight: see GgufFile::open in gguf.cpp.)
void TestGguf::copiedModelSurvivesTruncation() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath("truncated-later.gguf");
    std::string error;
    QVERIFY2(writeSyntheticModel(smallSpec(), path.toStdString(), error), error.c_str());
    const auto model =
        Model::fromGguf(GgufFile::open(path.toStdString(), error, GgufReadMode::Copy), error);
    QVERIFY2(model, error.c_str());
    QVERIFY(!model->file().isMapped());
    QVERIFY(QFile::resize(path, 0));
    QCOMPARE(QFileInfo(path).size(), 0);

    const auto reference =
        Model::fromGguf(GgufFile::fromBytes(syntheticModelBytes(smallSpec()), error), error);
    QVERIFY2(reference, error.c_str());
    QCOMPARE(logitsAfterPrompt(*model), logitsAfterPrompt(*reference));
}

// Inputs tests/fuzz/fuzz_gguf found (or that guard what it checks): each must load and run, or
// fail with a one-line message. Under the sanitizer build (SINKSCOPE_SANITIZE) they also prove
// the fixes: the NaN row was undefined behaviour in the int8 cache before.
void TestGguf::fuzzFindings_data() {
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

void TestGguf::fuzzFindings() {
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
void TestGguf::mostLayersLoad() {
    std::vector<uint8_t> bytes = narrowDeepModel(4096);
    std::string error;
    const auto model = Model::fromGguf(GgufFile::fromBytes(std::move(bytes), error), error);
    QVERIFY2(model, error.c_str());
    QCOMPARE(model->config().nLayer, 4096);
    QCOMPARE(model->file().tensors().size(), size_t(2 + 9 * 4096));
    QVERIFY(model->file().findTensor("blk.4095.ffn_down.weight"));
    QVERIFY(!model->file().findTensor("blk.4096.ffn_down.weight"));
}

QTEST_GUILESS_MAIN(TestGguf)
#include "test_gguf.moc"
