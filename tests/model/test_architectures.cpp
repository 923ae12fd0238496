// Every architecture Sinkscope runs (llama with and without rope_freqs, exaone, qwen2, qwen3)
// against a reference forward pass written here in double precision from the file's own tensors:
// full causal attention, nothing shared with the engine's kernels. qwen3 has no llama.cpp
// reference at the commit the other figures come from, so this is its check.
#include "gguf/dequantize.h"
#include "gguf/gguf.h"
#include "gguf/gguf_writer.h"
#include "gguf_copy_support.h"
#include "model/model.h"
#include "model/synthetic.h"
#include "session/session.h"

#include <QtTest>

#include <cmath>
#include <memory>

using namespace sinkscope;

namespace {

using Vector = std::vector<double>;

// A tensor of the file as doubles, row-major as ggml stores it (ne[0] fastest).
Vector tensor(const GgufFile& file, const std::string& name) {
    const GgufTensorInfo* info = file.findTensor(name);
    if (!info) return {};
    std::vector<float> values(info->elementCount);
    const int64_t rowLength = info->dims[0];
    const uint64_t rows = info->elementCount / rowLength;
    const uint64_t rowBytes = info->byteSize / rows;
    for (uint64_t r = 0; r < rows; ++r)
        dequantizeRow(info->type, info->data + r * rowBytes, values.data() + r * rowLength,
                      rowLength);
    return Vector(values.begin(), values.end());
}

// out[rows] = W[rows][cols] . x[cols]
Vector multiply(const Vector& w, const Vector& x) {
    const size_t cols = x.size();
    Vector out(w.size() / cols);
    for (size_t r = 0; r < out.size(); ++r)
        for (size_t c = 0; c < cols; ++c)
            out[r] += w[r * cols + c] * x[c];
    return out;
}

void addTo(Vector& x, const Vector& delta) {
    if (delta.empty()) return;
    for (size_t i = 0; i < x.size(); ++i)
        x[i] += delta[i];
}

// Each `width`-long piece of x normalised by its root mean square and scaled by weight[width].
Vector rmsNormed(const Vector& x, const Vector& weight, double eps) {
    const size_t width = weight.size();
    Vector out(x.size());
    for (size_t start = 0; start < x.size(); start += width) {
        double sum = 0;
        for (size_t i = 0; i < width; ++i)
            sum += x[start + i] * x[start + i];
        const double scale = 1.0 / std::sqrt(sum / double(width) + eps);
        for (size_t i = 0; i < width; ++i)
            out[start + i] = x[start + i] * scale * weight[i];
    }
    return out;
}

void rotate(Vector& x, int headDim, int64_t position, const ModelConfig& c, const Vector& freqs) {
    const int half = headDim / 2;
    for (size_t head = 0; head < x.size(); head += size_t(headDim)) {
        for (int i = 0; i < half; ++i) {
            double angle = double(position) * std::pow(double(c.ropeBase), -2.0 * i / headDim);
            if (!freqs.empty()) angle /= freqs[size_t(i)];
            const bool adjacent = c.rope == RopeStyle::AdjacentPairs;
            double& a = x[head + size_t(adjacent ? 2 * i : i)];
            double& b = x[head + size_t(adjacent ? 2 * i + 1 : i + half)];
            const double x0 = a, x1 = b;
            a = x0 * std::cos(angle) - x1 * std::sin(angle);
            b = x0 * std::sin(angle) + x1 * std::cos(angle);
        }
    }
}

// The logits at every position of `tokens`, from the model's file alone.
std::vector<Vector> referenceLogits(const Model& model, const std::vector<int32_t>& tokens) {
    const ModelConfig& c = model.config();
    const GgufFile& file = model.file();
    const Vector embedding = tensor(file, "token_embd.weight");
    Vector output = tensor(file, "output.weight");
    if (output.empty()) output = embedding;
    const Vector freqs = tensor(file, "rope_freqs.weight");
    const size_t hd = size_t(c.headDim);
    const size_t group = size_t(c.nHead / c.nHeadKv);
    std::vector<std::vector<Vector>> keys(size_t(c.nLayer)), values(size_t(c.nLayer));
    std::vector<Vector> logits;
    for (size_t pos = 0; pos < tokens.size(); ++pos) {
        Vector x(embedding.begin() + std::ptrdiff_t(tokens[pos]) * c.nEmbd,
                 embedding.begin() + std::ptrdiff_t(tokens[pos] + 1) * c.nEmbd);
        for (int layer = 0; layer < c.nLayer; ++layer) {
            const std::string p = "blk." + std::to_string(layer) + ".";
            const Vector xn = rmsNormed(x, tensor(file, p + "attn_norm.weight"), c.rmsEps);
            Vector q = multiply(tensor(file, p + "attn_q.weight"), xn);
            Vector k = multiply(tensor(file, p + "attn_k.weight"), xn);
            Vector v = multiply(tensor(file, p + "attn_v.weight"), xn);
            addTo(q, tensor(file, p + "attn_q.bias"));
            addTo(k, tensor(file, p + "attn_k.bias"));
            addTo(v, tensor(file, p + "attn_v.bias"));
            if (const Vector qNorm = tensor(file, p + "attn_q_norm.weight"); !qNorm.empty()) {
                q = rmsNormed(q, qNorm, c.rmsEps);
                k = rmsNormed(k, tensor(file, p + "attn_k_norm.weight"), c.rmsEps);
            }
            rotate(q, c.headDim, int64_t(pos), c, freqs);
            rotate(k, c.headDim, int64_t(pos), c, freqs);
            keys[size_t(layer)].push_back(k);
            values[size_t(layer)].push_back(v);
            Vector attended(q.size());
            for (size_t h = 0; h < size_t(c.nHead); ++h) {
                const size_t kvHead = h / group;
                Vector weights(pos + 1);
                double largest = -INFINITY;
                for (size_t t = 0; t <= pos; ++t) {
                    double score = 0;
                    for (size_t d = 0; d < hd; ++d)
                        score += q[h * hd + d] * keys[size_t(layer)][t][kvHead * hd + d];
                    weights[t] = score / std::sqrt(double(hd));
                    largest = std::max(largest, weights[t]);
                }
                double total = 0;
                for (double& w : weights)
                    total += (w = std::exp(w - largest));
                for (size_t t = 0; t <= pos; ++t)
                    for (size_t d = 0; d < hd; ++d)
                        attended[h * hd + d] +=
                            weights[t] / total * values[size_t(layer)][t][kvHead * hd + d];
            }
            addTo(x, multiply(tensor(file, p + "attn_output.weight"), attended));
            const Vector xf = rmsNormed(x, tensor(file, p + "ffn_norm.weight"), c.rmsEps);
            Vector gate = multiply(tensor(file, p + "ffn_gate.weight"), xf);
            const Vector up = multiply(tensor(file, p + "ffn_up.weight"), xf);
            for (size_t i = 0; i < gate.size(); ++i)
                gate[i] = gate[i] / (1.0 + std::exp(-gate[i])) * up[i];
            addTo(x, multiply(tensor(file, p + "ffn_down.weight"), gate));
        }
        Vector out = multiply(output, rmsNormed(x, tensor(file, "output_norm.weight"), c.rmsEps));
        addTo(out, tensor(file, "output.bias"));
        logits.push_back(out);
    }
    return logits;
}

// The synthetic model of `spec` with one f32 tensor replaced by `length` values, metadata kept.
std::vector<uint8_t> withResizedTensor(const SyntheticSpec& spec, const std::string& name,
                                       int64_t length) {
    std::string error;
    const auto file = GgufFile::fromBytes(syntheticModelBytes(spec), error, "model.gguf");
    GgufWriter w;
    test::copyMetadata(*file, w);
    for (const GgufTensorInfo& t : file->tensors()) {
        if (t.name == name)
            w.addTensorFromFloats(name, {length}, std::vector<float>(size_t(length), 1.0f));
        else
            w.addTensor(t.name, t.type, t.dims, std::vector<uint8_t>(t.data, t.data + t.byteSize));
    }
    return w.bytes();
}

} // namespace

class TestArchitectures : public QObject {
    Q_OBJECT
private slots:
    void forwardMatchesTheReference_data() {
        QTest::addColumn<QString>("architecture");
        QTest::addColumn<int>("headDim");
        QTest::addColumn<bool>("ropeFreqs");
        QTest::addColumn<bool>("tied");
        QTest::newRow("llama") << "llama" << 0 << false << false;
        QTest::newRow("llama, rope_freqs, tied") << "llama" << 0 << true << true;
        QTest::newRow("exaone") << "exaone" << 0 << false << false;
        QTest::newRow("qwen2, tied") << "qwen2" << 0 << false << true;
        // head size 32 while n_embd / n_head is 16, as qwen3's 128 against 64
        QTest::newRow("qwen3, key_length") << "qwen3" << 32 << false << false;
    }

    void forwardMatchesTheReference() {
        QFETCH(QString, architecture);
        QFETCH(int, headDim);
        QFETCH(bool, ropeFreqs);
        QFETCH(bool, tied);
        SyntheticSpec spec;
        spec.architecture = architecture.toStdString();
        spec.headDim = headDim;
        spec.ropeFreqs = ropeFreqs;
        spec.tiedOutput = tied;
        std::string error;
        auto file = GgufFile::fromBytes(syntheticModelBytes(spec), error, "synthetic");
        QVERIFY2(file, error.c_str());
        auto model = Model::fromGguf(std::move(file), error);
        QVERIFY2(model, error.c_str());
        QCOMPARE(model->config().architecture, spec.architecture);
        QCOMPARE(model->config().headDim, headDim ? headDim : spec.nEmbd / spec.nHead);

        const std::vector<int32_t> tokens = {1, 300, 301, 17, 402, 403, 99, 288, 511, 260, 5, 6};
        const std::vector<Vector> expected = referenceLogits(*model, tokens);
        SessionOptions options;
        options.kvWindow = 64;
        options.kvBits = 32;
        Session session(*model, options);
        double worst = 0;
        for (size_t pos = 0; pos < tokens.size(); ++pos) {
            const std::span<const float> logits = session.feed(tokens[pos]);
            for (size_t id = 0; id < expected[pos].size(); ++id)
                worst = std::max(worst, std::fabs(double(logits[id]) - expected[pos][id]));
        }
        qInfo("largest logit difference from the reference: %.2e", worst);
        QVERIFY2(worst < 1e-3, qPrintable(QString("largest difference %1").arg(worst)));
    }

    // A bias, norm or frequency tensor of the wrong length is refused by name.
    void rejectsMisshapenTensors_data() {
        QTest::addColumn<QString>("architecture");
        QTest::addColumn<QString>("tensor");
        QTest::addColumn<QString>("message");
        QTest::newRow("qwen2 bias") << "qwen2"
                                    << "blk.1.attn_k.bias"
                                    << "tensor 'blk.1.attn_k.bias' has shape [31], expected [32]";
        QTest::newRow("qwen3 norm") << "qwen3"
                                    << "blk.0.attn_q_norm.weight"
                                    << "tensor 'blk.0.attn_q_norm.weight' has shape [15], "
                                       "expected [16]";
        QTest::newRow("rope_freqs") << "llama"
                                    << "rope_freqs.weight"
                                    << "tensor 'rope_freqs.weight' has shape [7], expected [8]";
    }
    void rejectsMisshapenTensors() {
        QFETCH(QString, architecture);
        QFETCH(QString, tensor);
        QFETCH(QString, message);
        SyntheticSpec spec;
        spec.architecture = architecture.toStdString();
        spec.ropeFreqs = tensor == "rope_freqs.weight";
        std::string error;
        auto file = GgufFile::fromBytes(syntheticModelBytes(spec), error, "model.gguf");
        const int64_t length = file->findTensor(tensor.toStdString())->dims[0] - 1;
        file = GgufFile::fromBytes(withResizedTensor(spec, tensor.toStdString(), length), error,
                                   "model.gguf");
        QVERIFY2(file, error.c_str());
        QVERIFY(!Model::fromGguf(std::move(file), error));
        QVERIFY2(QString::fromStdString(error) == "model.gguf: " + message, error.c_str());
    }
};

QTEST_GUILESS_MAIN(TestArchitectures)
#include "test_architectures.moc"
