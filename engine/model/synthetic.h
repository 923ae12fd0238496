// Deterministic synthetic models ("random weights") of every architecture Sinkscope runs, written
// with GgufWriter, so that tests and benchmarks need no download.
#pragma once

#include "gguf/ggml_types.h"
#include "model/model.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sinkscope {

struct SyntheticSpec {
    int nVocab = 512; // >= 259: <unk>, <s>, </s>, 256 byte tokens, then word pieces
    int nEmbd = 64;
    int nLayer = 2;
    int nHead = 4;
    int nHeadKv = 2;
    int nFf = 128;
    int nCtxTrain = 2048;
    uint64_t seed = 1;
    GgmlType weightType = GgmlType::F32;
    // The matrices as llama.cpp's Q4_K_M writes them instead of all in weightType: Q6_K for the
    // output (the embeddings when tied) and for attn_v and ffn_down in the layers it gives more
    // bits, Q4_K elsewhere; rows that are not whole 256-value super-blocks fall back to Q8_0 and
    // Q5_0 (Qwen2.5-0.5B's and SmolLM2's 896- and 576-wide rows).
    bool q4KMediumMix = false;
    // "llama" (adjacent-pair RoPE), "exaone" (half-split RoPE), "qwen2" (half-split, Q/K/V
    // biases) or "qwen3" (half-split, per-head Q/K norms)
    std::string architecture = "llama";
    int headDim = 0;        // 0: n_embd / n_head; otherwise written as attention.key_length
    bool ropeFreqs = false; // a rope_freqs.weight tensor (Llama-3's per-pair frequency divisors)
    bool tiedOutput = false;
    std::vector<std::string> extraSpecialTokens; // control tokens appended to the vocabulary
    // user-defined tokens appended after them, as Qwen's vocabulary holds <tool_call>: a marker
    // that the tokenizer always reads as one token and whose text a decoder shows
    std::vector<std::string> userDefinedTokens;
    std::string chatTemplate; // written as tokenizer.chat_template when not empty
    std::string name = "synthetic (random weights)";
};

std::vector<uint8_t> syntheticModelBytes(const SyntheticSpec& spec);
bool writeSyntheticModel(const SyntheticSpec& spec, const std::string& path, std::string& error);

} // namespace sinkscope
