// A llama-family model: its configuration (from GGUF metadata), read-only weights, and tokenizer.
#pragma once

#include "gguf/gguf.h"
#include "model/row_layout.h"
#include "tokenizer/tokenizer.h"

#include <memory>
#include <string>
#include <vector>

namespace sinkscope {

enum class RopeStyle {
    AdjacentPairs, // rotates (x[2i], x[2i+1]); llama.cpp's "norm" rope, used by `llama`
    HalfSplit,     // rotates (x[i], x[i + d/2]); llama.cpp's "neox" rope
};

struct ModelConfig {
    std::string architecture;
    std::string name;
    int nVocab = 0;
    int nEmbd = 0;
    int nLayer = 0;
    int nHead = 0;
    int nHeadKv = 0;
    int headDim = 0;
    int nFf = 0;
    int nCtxTrain = 0;
    float ropeBase = 10000.0f;
    float rmsEps = 1e-5f;
    RopeStyle rope = RopeStyle::AdjacentPairs;
    bool attentionBiases = false; // qwen2: Q, K and V projections add a bias
    bool queryKeyNorm = false;    // qwen3: per-head RMS norm on Q and K before RoPE
    // Hints a model may carry for Sinkscope (sinkscope.kv_window, sinkscope.position_mode;
    // 0 and "" when absent); defaultSessionOptions (session_defaults.h) applies them.
    int suggestedKvWindow = 0;
    std::string suggestedPositionMode;
    int kvDim() const { return nHeadKv * headDim; }
};

// A row-major matrix [rows][cols]: f32 values, or rows kept in their ggml type inside the mapped
// file (quantized weights are never expanded to f32: the products run on them, model/quant_dot.h).
struct Matrix {
    const float* data = nullptr; // [rows][cols] f32 (F32 in place, F16/BF16 converted at load), or
                                 // nullptr when the rows stay in `type`
    int rows = 0;
    int cols = 0;
    GgmlType type = GgmlType::F32;
    const uint8_t* quantized = nullptr; // [rows][rowBytes] in `type` when data is nullptr
    size_t rowBytes = 0;
    RowLayout layout = RowLayout::RowMajor; // the order of the quantized rows' blocks
};

struct LayerWeights {
    const float* attnNorm = nullptr; // [n_embd]
    Matrix wq;                       // [n_head * head_dim][n_embd]
    Matrix wk;                       // [n_head_kv * head_dim][n_embd]
    Matrix wv;                       // [n_head_kv * head_dim][n_embd]
    const float* bq = nullptr;       // [n_head * head_dim], or nullptr (no attention biases)
    const float* bk = nullptr;       // [n_head_kv * head_dim], or nullptr
    const float* bv = nullptr;       // [n_head_kv * head_dim], or nullptr
    const float* qNorm = nullptr;    // [head_dim], or nullptr (no query/key norm)
    const float* kNorm = nullptr;    // [head_dim], or nullptr
    Matrix wo;                       // [n_embd][n_head * head_dim]
    const float* ffnNorm = nullptr;  // [n_embd]
    Matrix wGate;                    // [n_ff][n_embd]
    Matrix wUp;                      // [n_ff][n_embd]
    Matrix wDown;                    // [n_embd][n_ff]
};

struct ModelWeights {
    Matrix tokenEmbedding;             // [n_vocab][n_embd]
    std::vector<LayerWeights> layers;  // [n_layer]
    const float* outputNorm = nullptr; // [n_embd]
    Matrix output;                     // [n_vocab][n_embd]; the embedding when tied
    const float* outputBias = nullptr; // [n_vocab], or nullptr
    // [head_dim / 2] divisors of each rotated pair's frequency (Llama-3's rope scaling), or
    // nullptr
    const float* ropeFreqs = nullptr;
};

class Model {
public:
    // nullptr + a one-line message on failure (bad file, unsupported architecture, missing key
    // or tensor, wrong shape).
    static std::unique_ptr<Model> load(const std::string& path, std::string& error);
    static std::unique_ptr<Model> fromGguf(std::unique_ptr<GgufFile> file, std::string& error);

    const ModelConfig& config() const { return m_config; }
    const ModelWeights& weights() const { return m_weights; }
    const Tokenizer& tokenizer() const { return *m_tokenizer; }
    const GgufFile& file() const { return *m_file; }
    int64_t parameterCount() const;

private:
    Model() = default;
    ModelConfig m_config;
    ModelWeights m_weights;
    std::unique_ptr<Tokenizer> m_tokenizer;
    std::unique_ptr<GgufFile> m_file;                 // keeps the mapping alive
    std::vector<std::vector<float>> m_dequantized;    // tensors stored as F16/Q8_0/Q4_0
    std::vector<std::unique_ptr<uint8_t[]>> m_relaid; // matrices in another RowLayout
};

} // namespace sinkscope
