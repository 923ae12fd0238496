// GGUF bytes the reader accepts: the writer's round trip and layout, every value type, tensors.
#include "gguf/dequantize.h"
#include "gguf/gguf.h"
#include "gguf/gguf_writer.h"
#include "gguf_test_support.h"

#include <QTemporaryDir>
#include <QtTest>

#include <cstring>

using namespace sinkscope;
using namespace sinkscope::test;

namespace {

std::vector<uint8_t> floatBytes(const std::vector<float>& values) {
    std::vector<uint8_t> bytes(values.size() * sizeof(float));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return bytes;
}

} // namespace

class TestGgufFormat : public QObject {
    Q_OBJECT

private slots:
    void writerRoundTrip_data();
    void writerRoundTrip();
    void writerLayoutIsStandard();
    void decodesEveryValueType();
    void valueAccessorsRejectOtherKinds();
    void acceptsKnownButUnsupportedTensorTypes();
    void tensorsInAnyOrder();
};

void TestGgufFormat::writerRoundTrip_data() {
    QTest::addColumn<uint32_t>("version");
    QTest::addColumn<uint32_t>("alignment");
    QTest::addColumn<bool>("throughFile");
    QTest::newRow("v3 via open()") << 3u << 32u << true;
    QTest::newRow("v2 via open()") << 2u << 32u << true;
    QTest::newRow("v3 in memory") << 3u << 32u << false;
    QTest::newRow("v2 in memory, alignment 64") << 2u << 64u << false;
    QTest::newRow("v3 via open(), alignment 256") << 3u << 256u << true;
}

void TestGgufFormat::writerRoundTrip() {
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
void TestGgufFormat::writerLayoutIsStandard() {
    GgufWriter writer;
    writer.setUint32("k", 7);
    writer.addTensor("t", GgmlType::F32, {2}, floatBytes({1.0f, 2.0f}));
    Bytes expected = header(1, 1);
    expected.str("k").u32(static_cast<uint32_t>(GgufValueType::Uint32)).u32(7);
    expected.tensor("t", {2}, kF32, 0).padTo(32);
    expected.put(1.0f).put(2.0f).padTo(32);
    QCOMPARE(writer.bytes(), expected.data());
}

void TestGgufFormat::decodesEveryValueType() {
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

void TestGgufFormat::valueAccessorsRejectOtherKinds() {
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
void TestGgufFormat::acceptsKnownButUnsupportedTensorTypes() {
    const auto iq2 = static_cast<uint32_t>(GgmlType::IQ2_XXS);
    Bytes bytes = header(1, 0);
    bytes.tensor("k", {256, 2}, iq2, 0).padTo(32).zeros(2 * 66);
    std::string error;
    const auto file = GgufFile::fromBytes(bytes.data(), error);
    QVERIFY2(file, error.c_str());
    QCOMPARE(file->tensors()[0].type, GgmlType::IQ2_XXS);
    QCOMPARE(file->tensors()[0].byteSize, uint64_t(132));
}

void TestGgufFormat::tensorsInAnyOrder() {
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

QTEST_GUILESS_MAIN(TestGgufFormat)
#include "test_gguf_format.moc"
