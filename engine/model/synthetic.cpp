#include "model/synthetic.h"

#include "gguf/gguf_writer.h"

#include <cmath>
#include <cstdio>
#include <set>
#include <stdexcept>

namespace sinkscope {

namespace {

// splitmix64: a tiny, well-mixed generator whose output is the same on every platform.
class Random {
public:
    explicit Random(uint64_t seed) : m_state(seed) {}
    uint64_t next() {
        uint64_t z = (m_state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    float uniform(float limit) { // in [-limit, limit)
        return (static_cast<float>(next() >> 40) / static_cast<float>(1u << 24) * 2.0f - 1.0f) *
               limit;
    }

private:
    uint64_t m_state;
};

const char* const kWords[] = {
    "the",  "and",  "was",    "she", "he",    "they", "said", "with", "day",
    "time", "one",  "little", "big", "happy", "play", "tool", "call", "light",
    "door", "name", "you",    "to",  "of",    "in",   "it",   "is",   "for",
    "on",   "that", "what",   "set", "get",   "send", "find", "turn",
};

// <unk>, <s>, </s>, the 256 byte tokens, single characters, word prefixes ("▁t", "▁th", "▁the"),
// letter pairs and triples, padded with unused tokens; then the extra control and user-defined
// tokens.
Vocabulary syntheticVocabulary(const SyntheticSpec& spec) {
    Vocabulary v;
    std::set<std::string> seen;
    const auto add = [&](const std::string& piece, TokenType type) {
        if (static_cast<int>(v.pieces.size()) >= spec.nVocab || !seen.insert(piece).second) return;
        v.pieces.push_back(piece);
        v.types.push_back(type);
        v.scores.push_back(type == TokenType::Normal ? -static_cast<float>(v.pieces.size()) : 0.0f);
    };
    const int specials =
        static_cast<int>(spec.extraSpecialTokens.size() + spec.userDefinedTokens.size());
    add("<unk>", TokenType::Unknown);
    add("<s>", TokenType::Control);
    add("</s>", TokenType::Control);
    for (int b = 0; b < 256; ++b) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "<0x%02X>", b);
        add(hex, TokenType::Byte);
    }
    const int normalLimit = spec.nVocab - specials;
    const auto addNormal = [&](const std::string& piece) {
        if (static_cast<int>(v.pieces.size()) < normalLimit) add(piece, TokenType::Normal);
    };
    const std::string space = "\xE2\x96\x81"; // U+2581, SentencePiece's space
    addNormal(space);
    for (char c = 'a'; c <= 'z'; ++c)
        addNormal(std::string(1, c));
    for (const char* punctuation : {".", ",", "!", "?", "'", "\"", ":", "{", "}", "[", "]"})
        addNormal(punctuation);
    for (const char* word : kWords)
        for (size_t n = 1; n <= std::string(word).size(); ++n)
            addNormal(space + std::string(word, n));
    for (char a = 'a'; a <= 'z'; ++a)
        for (char b = 'a'; b <= 'z'; ++b)
            addNormal(std::string{a, b});
    for (char a = 'a'; a <= 'z'; ++a)
        for (char b = 'a'; b <= 'z'; ++b)
            for (char c = 'a'; c <= 'z'; ++c)
                addNormal(std::string{a, b, c});
    while (static_cast<int>(v.pieces.size()) < normalLimit)
        add("<unused" + std::to_string(v.pieces.size()) + ">", TokenType::Unused);
    for (const std::string& special : spec.extraSpecialTokens)
        add(special, TokenType::Control);
    for (const std::string& marker : spec.userDefinedTokens)
        add(marker, TokenType::UserDefined);
    return v;
}

std::vector<float> randomValues(Random& random, size_t count, float limit) {
    std::vector<float> values(count);
    for (float& value : values)
        value = random.uniform(limit);
    return values;
}

int headDimOf(const SyntheticSpec& spec) {
    return spec.headDim > 0 ? spec.headDim : spec.nEmbd / spec.nHead;
}

void validateSpec(const SyntheticSpec& spec) {
    if (spec.nVocab < 259 + static_cast<int>(spec.extraSpecialTokens.size()) || spec.nEmbd <= 0 ||
        spec.nLayer <= 0 || spec.nHead <= 0 || spec.nHeadKv <= 0 || spec.nHead % spec.nHeadKv ||
        spec.nFf <= 0 || spec.headDim < 0 || (spec.headDim == 0 && spec.nEmbd % spec.nHead) ||
        headDimOf(spec) % 2)
        throw std::invalid_argument("invalid synthetic model shape");
    const std::set<std::string> architectures = {"llama", "exaone", "qwen2", "qwen3"};
    if (!architectures.contains(spec.architecture))
        throw std::invalid_argument("no synthetic models of architecture '" + spec.architecture +
                                    "'");
    const int64_t block = spec.q4KMediumMix ? 32 : ggmlBlockValues(spec.weightType);
    const int64_t qDim = int64_t{spec.nHead} * headDimOf(spec);
    if (!ggmlTypeSupported(spec.weightType) || spec.nEmbd % block || spec.nFf % block ||
        qDim % block)
        throw std::invalid_argument(std::string("synthetic weights of type ") +
                                    ggmlTypeName(spec.weightType) +
                                    " need n_embd, n_ff and the heads' width to be multiples of "
                                    "its block size");
}

// llama.cpp's use_more_bits: the first and last eighth of the layers and every third between.
bool layerGetsMoreBits(int layer, int layers) {
    return layer < layers / 8 || layer >= 7 * layers / 8 || (layer - layers / 8) % 3 == 2;
}

// A matrix's type: spec.weightType, or the Q4_K_M choice (SyntheticSpec::q4KMediumMix) for a
// matrix of rows of `cols` values; `moreBits` for the output and the favoured attn_v / ffn_down.
GgmlType matrixType(const SyntheticSpec& spec, int cols, bool moreBits) {
    if (!spec.q4KMediumMix) return spec.weightType;
    const bool superBlocks = cols % 256 == 0;
    if (moreBits) return superBlocks ? GgmlType::Q6_K : GgmlType::Q8_0;
    return superBlocks ? GgmlType::Q4_K : GgmlType::Q5_0;
}

GgufWriter syntheticModelWriter(const SyntheticSpec& spec) {
    validateSpec(spec);
    const std::string& arch = spec.architecture;
    const int headDim = headDimOf(spec);
    const int qDim = spec.nHead * headDim;
    const int kvDim = spec.nHeadKv * headDim;
    const Vocabulary vocab = syntheticVocabulary(spec);

    GgufWriter w;
    w.setString("general.architecture", arch);
    w.setString("general.name", spec.name);
    w.setUint32(arch + ".context_length", static_cast<uint32_t>(spec.nCtxTrain));
    w.setUint32(arch + ".embedding_length", static_cast<uint32_t>(spec.nEmbd));
    w.setUint32(arch + ".block_count", static_cast<uint32_t>(spec.nLayer));
    w.setUint32(arch + ".feed_forward_length", static_cast<uint32_t>(spec.nFf));
    w.setUint32(arch + ".attention.head_count", static_cast<uint32_t>(spec.nHead));
    w.setUint32(arch + ".attention.head_count_kv", static_cast<uint32_t>(spec.nHeadKv));
    w.setUint32(arch + ".rope.dimension_count", static_cast<uint32_t>(headDim));
    if (spec.headDim > 0) {
        w.setUint32(arch + ".attention.key_length", static_cast<uint32_t>(headDim));
        w.setUint32(arch + ".attention.value_length", static_cast<uint32_t>(headDim));
    }
    w.setFloat32(arch + ".rope.freq_base", 10000.0f);
    w.setFloat32(arch + ".attention.layer_norm_rms_epsilon", 1e-5f);
    w.setString("tokenizer.ggml.model", "llama");
    w.setStringArray("tokenizer.ggml.tokens", vocab.pieces);
    w.setFloat32Array("tokenizer.ggml.scores", vocab.scores);
    std::vector<int32_t> types;
    for (TokenType type : vocab.types)
        types.push_back(static_cast<int32_t>(type));
    w.setInt32Array("tokenizer.ggml.token_type", types);
    w.setUint32("tokenizer.ggml.bos_token_id", 1);
    w.setUint32("tokenizer.ggml.eos_token_id", 2);
    w.setUint32("tokenizer.ggml.unknown_token_id", 0);
    if (!spec.chatTemplate.empty()) w.setString("tokenizer.chat_template", spec.chatTemplate);

    Random random(spec.seed);
    const auto matrix = [&](const std::string& name, int rows, int cols, bool moreBits = false) {
        w.addTensorFromFloats(name, {cols, rows},
                              randomValues(random, static_cast<size_t>(rows) * cols,
                                           1.7f / std::sqrt(static_cast<float>(cols))),
                              matrixType(spec, cols, moreBits));
    };
    const auto norm = [&](const std::string& name) {
        w.addTensorFromFloats(name, {spec.nEmbd}, std::vector<float>(spec.nEmbd, 1.0f));
    };
    // Biases, per-head norms and frequency divisors are f32 in real files too.
    const auto vector = [&](const std::string& name, int length, float center, float spread) {
        std::vector<float> values = randomValues(random, static_cast<size_t>(length), spread);
        for (float& value : values)
            value += center;
        w.addTensorFromFloats(name, {length}, values);
    };
    if (spec.ropeFreqs) vector("rope_freqs.weight", headDim / 2, 4.0f, 3.0f);
    w.addTensorFromFloats("token_embd.weight", {spec.nEmbd, spec.nVocab},
                          randomValues(random, static_cast<size_t>(spec.nVocab) * spec.nEmbd, 1.0f),
                          matrixType(spec, spec.nEmbd, spec.tiedOutput));
    norm("output_norm.weight");
    if (!spec.tiedOutput) matrix("output.weight", spec.nVocab, spec.nEmbd, true);
    for (int i = 0; i < spec.nLayer; ++i) {
        const std::string p = "blk." + std::to_string(i) + ".";
        norm(p + "attn_norm.weight");
        matrix(p + "attn_q.weight", qDim, spec.nEmbd);
        matrix(p + "attn_k.weight", kvDim, spec.nEmbd);
        const bool moreBits = layerGetsMoreBits(i, spec.nLayer);
        matrix(p + "attn_v.weight", kvDim, spec.nEmbd, moreBits);
        matrix(p + "attn_output.weight", spec.nEmbd, qDim);
        if (arch == "qwen2") {
            vector(p + "attn_q.bias", qDim, 0.0f, 0.5f);
            vector(p + "attn_k.bias", kvDim, 0.0f, 0.5f);
            vector(p + "attn_v.bias", kvDim, 0.0f, 0.5f);
        }
        if (arch == "qwen3") {
            vector(p + "attn_q_norm.weight", headDim, 1.0f, 0.5f);
            vector(p + "attn_k_norm.weight", headDim, 1.0f, 0.5f);
        }
        norm(p + "ffn_norm.weight");
        matrix(p + "ffn_gate.weight", spec.nFf, spec.nEmbd);
        matrix(p + "ffn_up.weight", spec.nFf, spec.nEmbd);
        matrix(p + "ffn_down.weight", spec.nEmbd, spec.nFf, moreBits);
    }
    return w;
}

} // namespace

std::vector<uint8_t> syntheticModelBytes(const SyntheticSpec& spec) {
    return syntheticModelWriter(spec).bytes();
}

bool writeSyntheticModel(const SyntheticSpec& spec, const std::string& path, std::string& error) {
    try {
        return syntheticModelWriter(spec).writeFile(path, error);
    } catch (const std::exception& e) {
        error = e.what();
        return false;
    }
}

} // namespace sinkscope
