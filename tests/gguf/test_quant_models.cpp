// Real tensors of every type: the qwen2-tiny files in ../shared/reference/models (one per weight
// type, quantized by llama.cpp from the same random weights) read through GgufFile and
// dequantized row by row. Their type counts must be llama.cpp's, every value finite, and every
// tensor close to the same tensor of the F16 file, within its type's quantization error.
#include "gguf/dequantize.h"
#include "gguf/gguf.h"
#include "model/quant_dot.h"
#include "test_support.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace sinkscope;

namespace {

const char* const kFiles[] = {"F16",    "BF16", "Q8_0", "Q6_K",   "Q5_K_M", "Q5_1",   "Q5_0",
                              "Q4_K_M", "Q4_1", "Q4_0", "IQ4_NL", "IQ4_XS", "Q3_K_M", "Q2_K"};

QString modelPath(const QString& preset) {
    return test::sharedPath(QStringLiteral("reference/models/qwen2-tiny-%1.gguf").arg(preset));
}

std::unique_ptr<GgufFile> openModel(const QString& preset) {
    std::string error;
    auto file = GgufFile::open(modelPath(preset).toStdString(), error);
    if (!file) qWarning("%s", error.c_str());
    return file;
}

// Every value of a tensor, row by row ([rows][ne0]).
std::vector<float> dequantizeTensor(const GgufTensorInfo& tensor) {
    const int64_t rowLength = tensor.dims[0];
    const uint64_t rows = tensor.elementCount / rowLength;
    const uint64_t rowBytes = *ggmlByteSize(tensor.type, rowLength);
    std::vector<float> values(tensor.elementCount);
    for (uint64_t r = 0; r < rows; ++r)
        dequantizeRow(tensor.type, tensor.data + r * rowBytes, values.data() + r * rowLength,
                      rowLength);
    return values;
}

// The rms difference to the F16 file's tensor, relative to its rms, that each type stays within.
// Measured on these files and given ~25% room; in line with test_quantize's Gaussian round trips
// (the files were quantized without an importance matrix).
double relativeErrorBound(GgmlType type) {
    switch (type) {
    case GgmlType::F32:
        return 0.0; // norms and biases are f32 in every file: identical
    case GgmlType::F16:
        return 0.0;
    case GgmlType::BF16:
        return 0.004;
    case GgmlType::Q8_0:
        return 0.0065;
    case GgmlType::Q6_K:
        return 0.025;
    case GgmlType::Q5_0:
    case GgmlType::Q5_1:
    case GgmlType::Q5_K:
        return 0.055;
    case GgmlType::Q4_0:
    case GgmlType::Q4_1:
    case GgmlType::Q4_K:
        return 0.11;
    case GgmlType::IQ4_NL:
    case GgmlType::IQ4_XS:
        return 0.11;
    case GgmlType::Q3_K:
        return 0.2;
    case GgmlType::Q2_K:
        return 0.4;
    default:
        return -1.0;
    }
}

} // namespace

class TestQuantModels : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void everyTensorDequantizes_data();
    void everyTensorDequantizes();
    void quantizedDotsFollowTheF16Rows();

private:
    QJsonObject m_reference; // llamacpp.json's "files"
    std::unique_ptr<GgufFile> m_f16;
    std::map<std::string, std::vector<float>> m_f16Values; // tensor name -> values
};

void TestQuantModels::initTestCase() {
    QFile json(test::sharedPath("reference/models/llamacpp.json"));
    if (!json.open(QIODevice::ReadOnly) || !QFileInfo::exists(modelPath("F16")))
        QSKIP(qPrintable(
            QStringLiteral("the qwen2-tiny reference models are not at %1 (set SINKSCOPE_SHARED)")
                .arg(modelPath("F16"))));
    m_reference = QJsonDocument::fromJson(json.readAll()).object().value("files").toObject();
    m_f16 = openModel("F16");
    QVERIFY(m_f16);
    for (const GgufTensorInfo& tensor : m_f16->tensors())
        m_f16Values[tensor.name] = dequantizeTensor(tensor);
}

void TestQuantModels::everyTensorDequantizes_data() {
    QTest::addColumn<QString>("preset");
    for (const char* preset : kFiles)
        QTest::newRow(preset) << QString(preset);
}

void TestQuantModels::everyTensorDequantizes() {
    QFETCH(QString, preset);
    const auto file = openModel(preset);
    QVERIFY(file);
    const QString name = QFileInfo(modelPath(preset)).fileName();
    const QJsonObject expectedCounts =
        m_reference.value(name).toObject().value("tensor_types").toObject();
    QVERIFY2(!expectedCounts.isEmpty(), qPrintable(name));
    std::map<QString, int> counts;
    std::map<QString, double> worst; // type -> largest relative rms error
    for (const GgufTensorInfo& tensor : file->tensors()) {
        const QString type = ggmlTypeName(tensor.type);
        ++counts[type];
        QVERIFY2(ggmlTypeSupported(tensor.type), qPrintable(type));
        const std::vector<float> values = dequantizeTensor(tensor);
        const std::vector<float>& f16 = m_f16Values.at(tensor.name);
        QCOMPARE(values.size(), f16.size());
        double error = 0.0, total = 0.0;
        for (size_t i = 0; i < values.size(); ++i) {
            if (!std::isfinite(values[i]))
                QFAIL(qPrintable(QStringLiteral("%1 value %2 is %3")
                                     .arg(QString::fromStdString(tensor.name))
                                     .arg(i)
                                     .arg(values[i])));
            error += (double(values[i]) - f16[i]) * (double(values[i]) - f16[i]);
            total += double(f16[i]) * f16[i];
        }
        QVERIFY2(total > 0.0, tensor.name.c_str());
        const double relative = std::sqrt(error / total);
        worst[type] = std::max(worst[type], relative);
        if (!(relative <= relativeErrorBound(tensor.type)))
            QFAIL(qPrintable(QStringLiteral("%1 (%2): rms error %3 of the F16 tensor")
                                 .arg(QString::fromStdString(tensor.name), type)
                                 .arg(relative)));
    }
    for (const auto& [type, relative] : worst)
        qInfo("%s %s: %d tensors, worst rms error %.4f", qPrintable(name), qPrintable(type),
              counts[type], relative);
    QCOMPARE(int(counts.size()), int(expectedCounts.size()));
    for (const auto& [type, count] : counts)
        QCOMPARE(count, expectedCounts.value(type).toInt());
}

// One real matrix per type through quantMatvec: each output against the dot of the F16 file's row
// with the same activations, within the weights' and the activations' quantization error.
void TestQuantModels::quantizedDotsFollowTheF16Rows() {
    for (const char* preset : kFiles) {
        const auto file = openModel(preset);
        QVERIFY(file);
        const GgufTensorInfo* tensor = file->findTensor("blk.0.ffn_down.weight");
        QVERIFY(tensor);
        const int64_t cols = tensor->dims[0];
        const int64_t rows = int64_t(tensor->elementCount) / cols;
        std::vector<float> x(cols);
        for (int64_t i = 0; i < cols; ++i)
            x[i] = std::sin(0.37 * double(i)) * 2.0f;
        std::vector<float> out(rows);
        std::vector<std::byte> scratch;
        quantMatvec(tensor->type, tensor->data, rows, cols, x.data(), out.data(), scratch);
        const std::vector<float>& f16 = m_f16Values.at(tensor->name);
        double error = 0.0, total = 0.0;
        for (int64_t r = 0; r < rows; ++r) {
            double exact = 0.0;
            for (int64_t c = 0; c < cols; ++c)
                exact += double(f16[r * cols + c]) * x[c];
            error += (out[r] - exact) * (out[r] - exact);
            total += exact * exact;
        }
        const double relative = std::sqrt(error / total);
        qInfo("%s %s: matvec rms error %.4f", preset, ggmlTypeName(tensor->type), relative);
        QVERIFY2(relative <= relativeErrorBound(tensor->type) + 0.01, preset);
    }
}

QTEST_GUILESS_MAIN(TestQuantModels)
#include "test_quant_models.moc"
