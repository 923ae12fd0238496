#include "model/model.h"

#include "model/quant_dot.h"

#include "gguf/dequantize.h"
#include "gguf/quant_blocks.h"
#include "model/kernels/kernel_table.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace sinkscope {

namespace {

struct ModelError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// What each architecture Sinkscope runs changes in the common block (RMSNorm, GQA attention with
// RoPE, SwiGLU; llama's tensor names). llama.cpp chooses the RoPE form from the architecture alone.
struct ArchitectureSpec {
    const char* name;
    RopeStyle rope;
    bool attentionBiases;
    bool queryKeyNorm;
};

constexpr ArchitectureSpec kArchitectures[] = {
    {"llama", RopeStyle::AdjacentPairs, false, false},
    {"exaone", RopeStyle::HalfSplit, false, false},
    {"qwen2", RopeStyle::HalfSplit, true, false},
    {"qwen3", RopeStyle::HalfSplit, false, true},
};

const ArchitectureSpec& architectureSpec(const std::string& architecture) {
    std::string names;
    for (const ArchitectureSpec& spec : kArchitectures) {
        if (architecture == spec.name) return spec;
        names += std::string(names.empty() ? "" : ", ") + "'" + spec.name + "'";
    }
    throw ModelError("unsupported architecture '" + architecture + "' (Sinkscope runs " + names +
                     ")");
}

int64_t requireInt(const GgufFile& file, const std::string& key, int64_t min, int64_t max) {
    const auto value = file.getInt(key);
    if (!value) throw ModelError("missing required key '" + key + "'");
    if (*value < min || *value > max)
        throw ModelError("key '" + key + "' = " + std::to_string(*value) + " is out of range [" +
                         std::to_string(min) + ", " + std::to_string(max) + "]");
    return *value;
}

float optionalFloat(const GgufFile& file, const std::string& key, float fallback) {
    if (!file.find(key)) return fallback;
    const auto value = file.getFloat(key);
    if (!value || !(*value > 0)) throw ModelError("key '" + key + "' must be a positive number");
    return static_cast<float>(*value);
}

// Sinkscope's own keys, both optional: the window the model was trained with and its position
// mode. A key that is present must be valid: a wrong hint would quietly run the model in a
// setting it never saw.
void readSinkscopeHints(const GgufFile& file, ModelConfig& c) {
    constexpr char kWindowKey[] = "sinkscope.kv_window";
    constexpr char kPositionsKey[] = "sinkscope.position_mode";
    if (file.find(kWindowKey))
        c.suggestedKvWindow = static_cast<int>(requireInt(file, kWindowKey, 1, 1 << 20));
    if (!file.find(kPositionsKey)) return;
    const auto mode = file.getString(kPositionsKey);
    if (!mode || (*mode != "absolute" && *mode != "streaming"))
        throw ModelError(std::string("key '") + kPositionsKey +
                         "' must be the string \"absolute\" or \"streaming\"");
    c.suggestedPositionMode = *mode;
}

ModelConfig readConfig(const GgufFile& file) {
    ModelConfig c;
    const auto arch = file.getString("general.architecture");
    if (!arch) throw ModelError("missing required key 'general.architecture'");
    c.architecture = *arch;
    const ArchitectureSpec& spec = architectureSpec(c.architecture);
    c.rope = spec.rope;
    c.attentionBiases = spec.attentionBiases;
    c.queryKeyNorm = spec.queryKeyNorm;
    c.name = file.getString("general.name").value_or("");
    const std::string p = c.architecture + ".";
    constexpr int64_t kMaxDim = 1 << 20;
    c.nEmbd = static_cast<int>(requireInt(file, p + "embedding_length", 1, kMaxDim));
    c.nLayer = static_cast<int>(requireInt(file, p + "block_count", 1, 4096));
    c.nFf = static_cast<int>(requireInt(file, p + "feed_forward_length", 1, kMaxDim));
    c.nHead = static_cast<int>(requireInt(file, p + "attention.head_count", 1, 4096));
    c.nHeadKv = file.find(p + "attention.head_count_kv")
                    ? static_cast<int>(requireInt(file, p + "attention.head_count_kv", 1, c.nHead))
                    : c.nHead;
    if (c.nHead % c.nHeadKv != 0)
        throw ModelError("attention.head_count " + std::to_string(c.nHead) +
                         " is not a multiple of head_count_kv " + std::to_string(c.nHeadKv));
    c.headDim = file.find(p + "attention.key_length")
                    ? static_cast<int>(requireInt(file, p + "attention.key_length", 2, kMaxDim))
                    : c.nEmbd / c.nHead;
    if (c.headDim % 2 != 0 || c.headDim < 2)
        throw ModelError("head dimension " + std::to_string(c.headDim) + " must be even");
    if (file.find(p + "attention.value_length") &&
        requireInt(file, p + "attention.value_length", 2, kMaxDim) != c.headDim)
        throw ModelError("attention.value_length differs from the head dimension " +
                         std::to_string(c.headDim) + " (Sinkscope needs them equal)");
    c.nCtxTrain = static_cast<int>(requireInt(file, p + "context_length", 1, 1 << 24));
    c.ropeBase = optionalFloat(file, p + "rope.freq_base", 10000.0f);
    c.rmsEps = optionalFloat(file, p + "attention.layer_norm_rms_epsilon", 1e-5f);
    readSinkscopeHints(file, c);
    return c;
}

class WeightBinder {
public:
    WeightBinder(const GgufFile& file, std::vector<std::vector<float>>& dequantized)
        : m_file(file), m_dequantized(dequantized) {}

    const GgufTensorInfo* find(const std::string& name) const { return m_file.findTensor(name); }

    // A [rows][cols] matrix; GGUF stores it as ne = {cols, rows}.
    Matrix matrix(const std::string& name, int rows, int cols) {
        const GgufTensorInfo& t = require(name);
        if (t.dims.size() != 2 || t.dims[0] != cols || t.dims[1] != rows)
            throw ModelError("tensor '" + name + "' has shape " + shapeText(t.dims) +
                             ", expected [" + std::to_string(cols) + ", " + std::to_string(rows) +
                             "]");
        // F32 rows are read as floats; every other type stays in the mapping and the products run
        // on its rows with the activations converted as ggml converts them (F16 and BF16 round
        // them to 16 bits: an f32 product lands 0.003-0.03 away from llama.cpp).
        if (t.type == GgmlType::F32) return Matrix{floats(t), rows, cols};
        if (!quantDotSupported(t.type))
            throw ModelError("tensor '" + name + "' has type " + ggmlTypeName(t.type) +
                             ", which cannot be a weight matrix");
        return Matrix{nullptr, rows, cols, t.type, t.data, static_cast<size_t>(t.byteSize / rows)};
    }

    // The same for a tensor a model may leave out: nullptr when absent.
    const float* optionalVector(const std::string& name, int length) {
        return m_file.findTensor(name) ? vector(name, length) : nullptr;
    }

    const float* vector(const std::string& name, int length) {
        const GgufTensorInfo& t = require(name);
        if (t.dims.size() != 1 || t.dims[0] != length)
            throw ModelError("tensor '" + name + "' has shape " + shapeText(t.dims) +
                             ", expected [" + std::to_string(length) + "]");
        return ownedFloats(t);
    }

private:
    const GgufTensorInfo& require(const std::string& name) const {
        const GgufTensorInfo* t = m_file.findTensor(name);
        if (!t) throw ModelError("missing required tensor '" + name + "'");
        if (!ggmlTypeSupported(t->type))
            throw ModelError("tensor '" + name + "' has type " + ggmlTypeName(t->type) +
                             ", which Sinkscope cannot compute with (it reads F32, F16, BF16, "
                             "Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K ... Q6_K, IQ4_NL and IQ4_XS)");
        return *t;
    }

    // Aligned F32 tensors are used in place; the others are dequantized (or copied) once, at load.
    const float* floats(const GgufTensorInfo& t) {
        if (t.type == GgmlType::F32 && reinterpret_cast<uintptr_t>(t.data) % alignof(float) == 0)
            return reinterpret_cast<const float*>(t.data);
        return ownedFloats(t);
    }

    // A copy, dequantized as needed. Vectors (norms, biases: a few KiB each) are always copied:
    // read in place they would map the pages around them back in every layer (the kernel maps a
    // fault's neighbours too), pages of originals that relayoutMatrices handed back.
    const float* ownedFloats(const GgufTensorInfo& t) {
        std::vector<float>& out = m_dequantized.emplace_back(t.elementCount);
        const int64_t rowLength = t.dims[0];
        const uint64_t rowBytes = t.byteSize / (t.elementCount / rowLength);
        for (uint64_t r = 0; r < t.elementCount / rowLength; ++r)
            dequantizeRow(t.type, t.data + r * rowBytes, out.data() + r * rowLength, rowLength);
        return out.data();
    }

    static std::string shapeText(const std::vector<int64_t>& dims) {
        std::string text = "[";
        for (size_t i = 0; i < dims.size(); ++i)
            text += (i ? ", " : "") + std::to_string(dims[i]);
        return text + "]";
    }

    const GgufFile& m_file;
    std::vector<std::vector<float>>& m_dequantized;
};

ModelWeights bindWeights(const ModelConfig& c, WeightBinder& bind) {
    ModelWeights w;
    const int qDim = c.nHead * c.headDim;
    w.tokenEmbedding = bind.matrix("token_embd.weight", c.nVocab, c.nEmbd);
    w.outputNorm = bind.vector("output_norm.weight", c.nEmbd);
    w.output = bind.find("output.weight") ? bind.matrix("output.weight", c.nVocab, c.nEmbd)
                                          : w.tokenEmbedding;
    w.outputBias = bind.optionalVector("output.bias", c.nVocab);
    w.ropeFreqs = bind.optionalVector("rope_freqs.weight", c.headDim / 2);
    for (int i = 0; i < c.nLayer; ++i) {
        const std::string p = "blk." + std::to_string(i) + ".";
        LayerWeights& l = w.layers.emplace_back();
        l.attnNorm = bind.vector(p + "attn_norm.weight", c.nEmbd);
        l.wq = bind.matrix(p + "attn_q.weight", qDim, c.nEmbd);
        l.wk = bind.matrix(p + "attn_k.weight", c.kvDim(), c.nEmbd);
        l.wv = bind.matrix(p + "attn_v.weight", c.kvDim(), c.nEmbd);
        l.wo = bind.matrix(p + "attn_output.weight", c.nEmbd, qDim);
        if (c.attentionBiases) {
            l.bq = bind.vector(p + "attn_q.bias", qDim);
            l.bk = bind.vector(p + "attn_k.bias", c.kvDim());
            l.bv = bind.vector(p + "attn_v.bias", c.kvDim());
        }
        if (c.queryKeyNorm) {
            l.qNorm = bind.vector(p + "attn_q_norm.weight", c.headDim);
            l.kNorm = bind.vector(p + "attn_k_norm.weight", c.headDim);
        }
        l.ffnNorm = bind.vector(p + "ffn_norm.weight", c.nEmbd);
        l.wGate = bind.matrix(p + "ffn_gate.weight", c.nFf, c.nEmbd);
        l.wUp = bind.matrix(p + "ffn_up.weight", c.nFf, c.nEmbd);
        l.wDown = bind.matrix(p + "ffn_down.weight", c.nEmbd, c.nFf);
    }
    return w;
}

constexpr size_t kRelayoutSliceBytes = size_t{4} << 20;

// The layout a product matrix takes (model/row_layout.h): Tiles16 where this CPU runs the AMX
// kernels, else Q4_0's runs of eight, else the file's.
RowLayout layoutFor(const Matrix& m) {
    const int64_t blocks = m.cols / quant::kBlockValues;
    if (kernels().tileRows && canTile(m.type, m.rows, blocks)) return RowLayout::Tiles16;
    if (m.type == GgmlType::Q4_0 && canRegroupQ4_0(m.rows, blocks)) return RowLayout::Q4_0x8;
    return RowLayout::RowMajor;
}

// m's rows in `layout`, a slice of whole runs at a time, each slice's pages of the mapping handed
// back once copied, so that the original and its copy are never both held whole (76 MiB each for
// the 0.5B models' Q4_0 output).
std::unique_ptr<uint8_t[]> relaidCopy(const GgufFile& file, const Matrix& m, RowLayout layout) {
    const int64_t blocks = m.cols / quant::kBlockValues;
    auto copy = std::make_unique_for_overwrite<uint8_t[]>(m.rowBytes * static_cast<size_t>(m.rows));
    constexpr int64_t run = kTileRows; // a multiple of both layouts' runs
    const int64_t sliceRows =
        std::max<int64_t>(run, static_cast<int64_t>(kRelayoutSliceBytes / m.rowBytes) / run * run);
    for (int64_t r = 0; r < m.rows; r += sliceRows) {
        const int64_t rows = std::min<int64_t>(sliceRows, m.rows - r);
        const size_t at = static_cast<size_t>(r) * m.rowBytes;
        if (layout == RowLayout::Tiles16)
            tileRows(m.type, m.quantized + at, rows, blocks, copy.get() + at);
        else
            regroupQ4_0(m.quantized + at, rows, blocks, copy.get() + at);
        file.releasePages(m.quantized + at, static_cast<size_t>(rows) * m.rowBytes);
    }
    return copy;
}

// The product matrices that take another layout than the file's (layoutFor), each copied once at
// load; the mapping's pages of the originals go back to the system, since no product reads them
// again, so the process holds about the file's size. A tied embedding reads its rows from the
// output's copy; an untied one stays in place (it is only ever looked up row by row).
void relayoutMatrices(const GgufFile& file, ModelWeights& w,
                      std::vector<std::unique_ptr<uint8_t[]>>& store) {
    struct Relaid {
        const uint8_t* original;
        size_t bytes;
        const uint8_t* copy;
        RowLayout layout;
    };
    std::vector<Relaid> done;
    // Points m at its original's copy, made on first sight when `copyIfNew`.
    const auto relayout = [&](Matrix& m, bool copyIfNew) {
        if (m.data) return;
        auto known = std::find_if(done.begin(), done.end(),
                                  [&](const Relaid& r) { return r.original == m.quantized; });
        if (known == done.end()) {
            const RowLayout layout = layoutFor(m);
            if (!copyIfNew || layout == RowLayout::RowMajor) return;
            store.push_back(relaidCopy(file, m, layout));
            known = done.insert(done.end(), {m.quantized, m.rowBytes * static_cast<size_t>(m.rows),
                                             store.back().get(), layout});
        }
        m.quantized = known->copy;
        m.layout = known->layout;
    };
    relayout(w.output, true);
    for (LayerWeights& l : w.layers)
        for (Matrix* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.wGate, &l.wUp, &l.wDown})
            relayout(*m, true);
    relayout(w.tokenEmbedding, false);
    // Once more now that every copy is made: reading one slice can map pages of the next ones
    // (the kernel's read-ahead and fault-around), after those were handed back.
    for (const Relaid& r : done)
        file.releasePages(r.original, r.bytes);
}

// Messages quote names from the file (architecture, tokenizer model); the contract is one line,
// so line breaks and other control bytes become '?' (tests/fuzz/fuzz_gguf checks it).
std::string oneLine(std::string message) {
    for (char& c : message)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    return message;
}

} // namespace

std::unique_ptr<Model> Model::load(const std::string& path, std::string& error) {
    auto file = GgufFile::open(path, error);
    if (!file) return nullptr;
    return fromGguf(std::move(file), error);
}

std::unique_ptr<Model> Model::fromGguf(std::unique_ptr<GgufFile> file, std::string& error) {
    const std::string where = file->path();
    try {
        std::unique_ptr<Model> model(new Model());
        model->m_config = readConfig(*file);
        auto tokenizer = Tokenizer::fromGguf(*file, error);
        if (!tokenizer) throw ModelError(error);
        model->m_tokenizer = std::make_unique<Tokenizer>(std::move(*tokenizer));
        model->m_config.nVocab = model->m_tokenizer->size();
        WeightBinder bind(*file, model->m_dequantized);
        model->m_weights = bindWeights(model->m_config, bind);
        relayoutMatrices(*file, model->m_weights, model->m_relaid);
        if (!file->detachFromFile(error)) throw ModelError(error);
        model->m_file = std::move(file);
        return model;
    } catch (const std::exception& e) {
        error = oneLine(where + ": " + e.what());
        return nullptr;
    }
}

int64_t Model::parameterCount() const {
    int64_t count = 0;
    for (const GgufTensorInfo& t : m_file->tensors())
        count += static_cast<int64_t>(t.elementCount);
    return count;
}

} // namespace sinkscope
