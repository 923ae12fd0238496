// Writes the fuzzers' seed corpora and dictionaries from the project's own writer:
//   make_fuzz_corpus DIR    (DIR = tests/fuzz; the files are committed, regenerate after a format
//                            change)
// DIR/corpus/fuzz_gguf/       tiny valid models (each 32-value block type, both RoPE styles, tied
//                             output, v2, other alignments; qwen2 with biases, a byte-level BPE
//                             vocabulary and a chat template; llama with rope_freqs; qwen3 with
//                             Q/K norms), a synthetic model, and one corrupt file per failure
//                             family (header, counts, lengths, duplicates, tokenizer, merges,
//                             shapes, bias and rope_freqs lengths, K-quant rows, types,
//                             truncation)
// DIR/corpus/fuzz_tokenizer/  texts: ASCII, spaces, multi-byte UTF-8, invalid UTF-8, specials
// DIR/corpus/fuzz_bpe_tokenizer/  texts for the pre-tokenizers: contractions, digit runs,
//                             whitespace runs, scripts, punctuation, invalid UTF-8, specials
// DIR/corpus/fuzz_tool_schema/  the tools of every preset in resources/presets (compact and
//                               indented), and one broken schema per kind of issue
// DIR/corpus/fuzz_call_grammar/, fuzz_tool_calls/
//                             a preset's tools, a 0 byte, then a call for them: the grammar's
//                             shortest complete call, the same cut in half, and a wrong name
// DIR/fuzz_gguf.dict          every key and tensor name of the tiny model, plus optional keys
// DIR/fuzz_tokenizer.dict     the fuzz vocabulary's pieces
// DIR/fuzz_bpe_tokenizer.dict the BPE fuzz vocabulary's pieces, as the bytes they stand for
// DIR/fuzz_tools.dict         JSON punctuation, literals and the schema and call keywords
#include "fuzz_bpe_vocabulary.h"
#include "fuzz_vocabulary.h"
#include "gguf/gguf.h"
#include "gguf/gguf_writer.h"
#include "model/synthetic.h"
#include "tools/call_matcher.h"
#include "tools/tool_preset.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

using namespace sinkscope;
namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

// A one-layer llama small enough for the fuzzer to mutate quickly (about 2 kB in F32).
struct TinySpec {
    GgmlType type = GgmlType::F32; // matrices; norms stay F32
    int embd = 4;                  // 32 for the block types (rows are whole blocks)
    int ff = 4;
    std::string architecture = "llama";
    bool tiedOutput = false;
    bool explicitKeyLength = false;
    uint32_t version = 3;
    uint32_t alignment = 32;
    std::string omitTensor;
    std::map<std::string, uint32_t> uint32Overrides; // key -> value written instead
    // qwen2 / qwen3 / Llama-3 parts: a byte-level BPE vocabulary (with `merges`, tokenizer.ggml.pre
    // `pre`), Q/K/V biases, rope_freqs ([head_dim / 2] unless ropeFreqsLength), Q/K norms.
    bool bpe = false;
    std::vector<std::string> merges = {"a b", "\xC4\xA0 a"};
    std::string pre = "qwen2";
    std::string chatTemplate;
    bool qkvBias = false;
    int biasLength = 0; // 0: the projection's width
    bool ropeFreqs = false;
    int ropeFreqsLength = 0;
    bool qkNorm = false;
};

constexpr int kTinyHeads = 2;
constexpr int kTinyKvHeads = 1;

const std::vector<std::string> kTinyPieces = {"<unk>",
                                              "<s>",
                                              "</s>",
                                              "\xE2\x96\x81",
                                              "a",
                                              "b",
                                              "ab",
                                              "\xE2\x96\x81"
                                              "a",
                                              "<|im_start|>",
                                              "<0x0A>"};
const std::vector<float> kTinyScores = {0, 0, 0, -1, -2, -2, -3, -4, 0, 0};
const std::vector<int32_t> kTinyTypes = {2, 3, 3, 1, 1, 1, 1, 1, 3, 6};
// GPT-2's byte characters (U+0120 is the space), a merge chain, and control tokens.
const std::vector<std::string> kTinyBpePieces = {"a",
                                                 "b",
                                                 "ab",
                                                 "\xC4\xA0",
                                                 "\xC4\xA0"
                                                 "a",
                                                 "\xC4\x8A",
                                                 "<|endoftext|>",
                                                 "<|im_start|>",
                                                 "<|im_end|>",
                                                 "c"};
const std::vector<int32_t> kTinyBpeTypes = {1, 1, 1, 1, 1, 1, 3, 3, 3, 1};

void writeTinyVocabulary(GgufWriter& w, const TinySpec& spec,
                         const std::function<void(const std::string&, uint32_t)>& u32) {
    if (!spec.bpe) {
        w.setString("tokenizer.ggml.model", "llama");
        w.setStringArray("tokenizer.ggml.tokens", kTinyPieces);
        w.setFloat32Array("tokenizer.ggml.scores", kTinyScores);
        w.setInt32Array("tokenizer.ggml.token_type", kTinyTypes);
        u32("tokenizer.ggml.bos_token_id", 1);
        u32("tokenizer.ggml.eos_token_id", 2);
        return;
    }
    w.setString("tokenizer.ggml.model", "gpt2");
    w.setString("tokenizer.ggml.pre", spec.pre);
    w.setStringArray("tokenizer.ggml.tokens", kTinyBpePieces);
    w.setInt32Array("tokenizer.ggml.token_type", kTinyBpeTypes);
    w.setStringArray("tokenizer.ggml.merges", spec.merges);
    u32("tokenizer.ggml.bos_token_id", 6);
    u32("tokenizer.ggml.eos_token_id", 8);
    w.setBool("tokenizer.ggml.add_bos_token", false);
    if (!spec.chatTemplate.empty()) w.setString("tokenizer.chat_template", spec.chatTemplate);
}

std::vector<float> pattern(size_t count, float phase) {
    std::vector<float> values(count);
    for (size_t i = 0; i < count; ++i)
        values[i] = 0.5f * std::sin(phase + 0.7f * static_cast<float>(i));
    return values;
}

GgufWriter tinyModel(const TinySpec& spec) {
    GgufWriter w(spec.version, spec.alignment);
    const std::string& arch = spec.architecture;
    const auto u32 = [&](const std::string& key, uint32_t value) {
        const auto override = spec.uint32Overrides.find(key);
        w.setUint32(key, override == spec.uint32Overrides.end() ? value : override->second);
    };
    const int headDim = spec.embd / kTinyHeads;
    const int kvDim = kTinyKvHeads * headDim;
    const int vocab = static_cast<int>(spec.bpe ? kTinyBpePieces.size() : kTinyPieces.size());
    w.setString("general.architecture", arch);
    w.setString("general.name", "tiny fuzz seed");
    u32(arch + ".context_length", 64);
    u32(arch + ".embedding_length", static_cast<uint32_t>(spec.embd));
    u32(arch + ".block_count", 1);
    u32(arch + ".feed_forward_length", static_cast<uint32_t>(spec.ff));
    u32(arch + ".attention.head_count", kTinyHeads);
    u32(arch + ".attention.head_count_kv", kTinyKvHeads);
    if (spec.explicitKeyLength) u32(arch + ".attention.key_length", static_cast<uint32_t>(headDim));
    w.setFloat32(arch + ".rope.freq_base", 10000.0f);
    w.setFloat32(arch + ".attention.layer_norm_rms_epsilon", 1e-5f);
    writeTinyVocabulary(w, spec, u32);

    float phase = 0;
    const auto tensor = [&](const std::string& name, std::vector<int64_t> dims, GgmlType type) {
        phase += 1.0f;
        if (name == spec.omitTensor) return;
        size_t count = 1;
        for (int64_t dim : dims)
            count *= static_cast<size_t>(dim);
        w.addTensorFromFloats(name, dims, pattern(count, phase), type);
    };
    const auto matrix = [&](const std::string& name, int rows, int cols) {
        tensor(name, {cols, rows}, spec.type);
    };
    const auto norm = [&](const std::string& name) { tensor(name, {spec.embd}, GgmlType::F32); };
    matrix("token_embd.weight", vocab, spec.embd);
    norm("output_norm.weight");
    if (!spec.tiedOutput) matrix("output.weight", vocab, spec.embd);
    norm("blk.0.attn_norm.weight");
    matrix("blk.0.attn_q.weight", spec.embd, spec.embd);
    matrix("blk.0.attn_k.weight", kvDim, spec.embd);
    matrix("blk.0.attn_v.weight", kvDim, spec.embd);
    matrix("blk.0.attn_output.weight", spec.embd, spec.embd);
    if (spec.qkvBias) {
        const auto width = [&](int natural) { return spec.biasLength ? spec.biasLength : natural; };
        tensor("blk.0.attn_q.bias", {width(spec.embd)}, GgmlType::F32);
        tensor("blk.0.attn_k.bias", {width(kvDim)}, GgmlType::F32);
        tensor("blk.0.attn_v.bias", {width(kvDim)}, GgmlType::F32);
    }
    if (spec.qkNorm) {
        tensor("blk.0.attn_q_norm.weight", {headDim}, GgmlType::F32);
        tensor("blk.0.attn_k_norm.weight", {headDim}, GgmlType::F32);
    }
    if (spec.ropeFreqs)
        tensor("rope_freqs.weight", {spec.ropeFreqsLength ? spec.ropeFreqsLength : headDim / 2},
               GgmlType::F32);
    norm("blk.0.ffn_norm.weight");
    matrix("blk.0.ffn_gate.weight", spec.ff, spec.embd);
    matrix("blk.0.ffn_up.weight", spec.ff, spec.embd);
    matrix("blk.0.ffn_down.weight", spec.embd, spec.ff);
    return w;
}

TinySpec blockTyped(GgmlType type) {
    TinySpec spec;
    spec.type = type;
    spec.embd = 32;
    spec.ff = 32;
    return spec;
}

template <typename T> void patch(Bytes& bytes, size_t offset, T value) {
    std::memcpy(bytes.data() + offset, &value, sizeof value);
}

// A tensor's info in the header: its name (u64 length, bytes), u32 n_dims, n_dims u64 dims, then
// the u32 type id rewritten here.
void patchTensorType(Bytes& bytes, const std::string& name, GgmlType type) {
    const auto at = std::search(bytes.begin(), bytes.end(), name.begin(), name.end());
    if (at == bytes.end()) throw std::runtime_error("no tensor " + name + " to patch");
    const size_t dimsAt = static_cast<size_t>(at - bytes.begin()) + name.size();
    uint32_t dims = 0;
    std::memcpy(&dims, bytes.data() + dimsAt, sizeof dims);
    patch<uint32_t>(bytes, dimsAt + 4 + 8 * dims, static_cast<uint32_t>(type));
}

Bytes patched(Bytes bytes, const std::function<void(Bytes&)>& edit) {
    edit(bytes);
    return bytes;
}

// The header's fields: u32 magic @0, u32 version @4, u64 n_tensors @8, u64 n_kv @16, then the
// first key's u64 length @24.
std::map<std::string, Bytes> ggufSeeds() {
    const Bytes tiny = tinyModel({}).bytes();
    std::map<std::string, Bytes> seeds = {
        {"tiny-f32.gguf", tiny},
        {"tiny-f16.gguf", tinyModel({.type = GgmlType::F16}).bytes()},
        {"tiny-q8_0.gguf", tinyModel(blockTyped(GgmlType::Q8_0)).bytes()},
        {"tiny-q4_0.gguf", tinyModel(blockTyped(GgmlType::Q4_0)).bytes()},
        {"tiny-exaone-tied.gguf",
         tinyModel({.architecture = "exaone", .tiedOutput = true, .explicitKeyLength = true})
             .bytes()},
        {"tiny-v2-align64.gguf", tinyModel({.version = 2, .alignment = 64}).bytes()},
        {"tiny-align1.gguf", tinyModel({.alignment = 1}).bytes()},
        {"synthetic.gguf", syntheticModelBytes({.nVocab = 259,
                                                .nEmbd = 8,
                                                .nLayer = 1,
                                                .nHead = 2,
                                                .nHeadKv = 1,
                                                .nFf = 8,
                                                .nCtxTrain = 64})},
        {"bad-magic.gguf", patched(tiny, [](Bytes& b) { b[0] = 'X'; })},
        {"version-1.gguf", patched(tiny, [](Bytes& b) { patch<uint32_t>(b, 4, 1); })},
        {"huge-n-tensors.gguf", patched(tiny, [](Bytes& b) { patch<uint64_t>(b, 8, ~0ull); })},
        {"huge-n-kv.gguf", patched(tiny, [](Bytes& b) { patch<uint64_t>(b, 16, 1ull << 40); })},
        {"huge-key-length.gguf",
         patched(tiny, [](Bytes& b) { patch<uint64_t>(b, 24, ~0ull - 7); })},
        {"truncated-header.gguf", Bytes(tiny.begin(), tiny.begin() + 40)},
        {"truncated-data.gguf", Bytes(tiny.begin(), tiny.end() - 100)},
        {"missing-tensor.gguf", tinyModel({.omitTensor = "blk.0.ffn_down.weight"}).bytes()},
        {"wrong-shape.gguf",
         tinyModel({.uint32Overrides = {{"llama.attention.head_count_kv", 2}}}).bytes()},
        {"bos-out-of-range.gguf",
         tinyModel({.uint32Overrides = {{"tokenizer.ggml.bos_token_id", 99}}}).bytes()},
        {"no-layers.gguf", tinyModel({.uint32Overrides = {{"llama.block_count", 0}}}).bytes()},
    };
    const std::string chatml =
        "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";
    const TinySpec qwen2{.architecture = "qwen2",
                         .tiedOutput = true,
                         .bpe = true,
                         .chatTemplate = chatml,
                         .qkvBias = true};
    seeds["tiny-qwen2-bpe.gguf"] = tinyModel(qwen2).bytes();
    seeds["tiny-llama3-rope-freqs.gguf"] =
        tinyModel({.bpe = true, .pre = "llama-bpe", .ropeFreqs = true}).bytes();
    seeds["tiny-qwen3-qk-norm.gguf"] =
        tinyModel({.architecture = "qwen3", .explicitKeyLength = true, .bpe = true, .qkNorm = true})
            .bytes();
    for (const GgmlType type :
         {GgmlType::BF16, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::IQ4_NL}) {
        std::string name = std::string("tiny-") + ggmlTypeName(type) + ".gguf";
        std::transform(name.begin(), name.end(), name.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        seeds[name] = tinyModel(blockTyped(type)).bytes();
    }
    TinySpec unknownPre = qwen2;
    unknownPre.pre = "not-a-pre-tokenizer";
    seeds["unknown-pre-tokenizer.gguf"] = tinyModel(unknownPre).bytes();
    TinySpec missingMerge = qwen2;
    missingMerge.merges = {"a b", "x y"};
    seeds["merge-of-missing-tokens.gguf"] = tinyModel(missingMerge).bytes();
    TinySpec shortBias = qwen2;
    shortBias.biasLength = 3;
    seeds["bias-wrong-length.gguf"] = tinyModel(shortBias).bytes();
    seeds["rope-freqs-wrong-length.gguf"] =
        tinyModel({.bpe = true, .ropeFreqs = true, .ropeFreqsLength = 5}).bytes();
    TinySpec brokenTemplate = qwen2;
    brokenTemplate.chatTemplate = "{% for m in messages %}{{ m.content ";
    seeds["template-does-not-parse.gguf"] = tinyModel(brokenTemplate).bytes();
    // A K-quant weight whose rows (4 values) are not whole 256-value super-blocks: the tiny
    // model with one tensor's type id rewritten (the writer itself refuses such a shape).
    seeds["k-quant-short-rows.gguf"] = patched(
        tiny, [](Bytes& b) { patchTensorType(b, "blk.0.ffn_down.weight", GgmlType::Q4_K); });
    GgufWriter duplicate = tinyModel({});
    duplicate.setString("general.name", "twice");
    seeds["duplicate-key.gguf"] = duplicate.bytes();
    // A norm may only be F32 (ggml's norms read floats).
    GgufWriter unsupported = tinyModel({.omitTensor = "output_norm.weight"});
    unsupported.addTensor("output_norm.weight", GgmlType::Q4_K, {256}, Bytes(144, 0));
    seeds["unsupported-type.gguf"] = unsupported.bytes();
    return seeds;
}

std::map<std::string, std::string> tokenizerSeeds() {
    return {
        {"ascii.txt", "the cat sat on the mat"},
        {"spaces.txt", "  two leading, two trailing  \t\n"},
        {"merges.txt", "abc abcabc the theth"},
        {"utf8.txt", "caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x99\x82 na\xC3\xAFve"},
        {"invalid-utf8.txt", "a\xC3\x28 \xFF\xFE \xE2\x96 \xF0\x9F\x99"},
        {"marker.txt", "\xE2\x96\x81literal marker\xE2\x96\x81"},
        {"specials.txt", "<s>hi</s><|im_start|>user\n<unk>"},
        {"bytes.txt", std::string("\0\x01\x7f<0x0A>", 9)},
        {"empty.txt", ""},
    };
}

std::map<std::string, std::string> bpeTokenizerSeeds() {
    return {
        {"contractions.txt", "I'm sure they'll've done it; we'd WE'D you'Re ' era"},
        {"digits.txt", "1 12 123 1234 12345 3.14159 1,000,000 \xD9\xA3\xD9\xA4 \xC2\xBD"},
        {"whitespace.txt", "a  b   c\n\n d\t\te \r\n  \n \xC2\xA0x\xE3\x80\x80y   "},
        {"scripts.txt", "Führer на Български 日本語のテキスト 한국어 ಕನ್ನಡ \xF0\x9F\xA6\x99.cpp"},
        {"punctuation.txt", "hello!!world a+=b --x $$ `c` \xE2\x80\x94 \xEF\xBC\x81 \xE3\x80\x82"},
        {"invalid-utf8.txt", "a\x80\xBF b\xC3 \xE2\x82x\xC0\x80 \xF5\x80\x80\x80 \xFF\xED\xA0\x80"},
        {"specials.txt", "<|im_start|>user\nhi<tool> x<|endoftext|><|im_start"},
        {"merges.txt",
         "the cat at the caf\xC3\xA9 hello \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x99\x82"},
        {"empty.txt", ""},
    };
}

// The tool sets of the shipped presets, by file stem.
std::map<std::string, ToolSet> presetTools(const fs::path& presets) {
    std::map<std::string, ToolSet> tools;
    for (const fs::directory_entry& entry : fs::directory_iterator(presets)) {
        if (entry.path().extension() != ".json") continue;
        std::ifstream in(entry.path(), std::ios::binary);
        const std::string text{std::istreambuf_iterator<char>(in), {}};
        PresetParseResult parsed = parsePreset(text);
        if (!parsed.preset) throw std::runtime_error("preset " + entry.path().string() + " fails");
        tools.emplace(entry.path().stem().string(), std::move(parsed.preset->tools));
    }
    if (tools.empty()) throw std::runtime_error("no presets in " + presets.string());
    return tools;
}

std::string indentedJson(const ToolSet& tools) {
    nlohmann::ordered_json array = nlohmann::ordered_json::array();
    for (const ToolSchema& tool : tools.tools)
        array.push_back(tool.definition);
    return array.dump(2);
}

std::map<std::string, std::string> toolSchemaSeeds(const std::map<std::string, ToolSet>& presets) {
    std::map<std::string, std::string> seeds = {
        {"wrapped.json", R"([{"type":"function","function":{"name":"f","parameters":{}}}])"},
        {"every-keyword.json",
         R"([{"name":"k","description":"d","parameters":{"type":"object","properties":{)"
         R"("s":{"type":"string","minLength":1,"maxLength":4,"default":"ab"},)"
         R"("i":{"type":"integer","minimum":-5,"exclusiveMaximum":10},)"
         R"("n":{"type":"number","exclusiveMinimum":true,"minimum":0.5,"maximum":2.25},)"
         R"("e":{"enum":["x","y"]},"c":{"const":3},"b":{"type":"boolean"},)"
         R"("a":{"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":3},)"
         R"("o":{"type":"object","properties":{"p":{"type":"string"}},"required":["p"]}},)"
         R"("required":["s","o"],"additionalProperties":false}}])"},
        {"unknown-type.json",
         R"([{"name":"t","parameters":{"type":"object","properties":{"a":{"type":"int"}}}}])"},
        {"unsupported-keyword.json",
         R"([{"name":"t","parameters":{"properties":{"a":{"type":"string","pattern":"^a"}}}}])"},
        {"duplicate-names.json", R"([{"name":"a"},{"name":"a"}])"},
        {"bad-name.json", R"([{"name":"1 bad"}])"},
        {"lengths-crossed.json",
         R"([{"name":"t","parameters":{"properties":{"a":{"type":"string","minLength":5,)"
         R"("maxLength":2}}}}])"},
        {"too-deep.json",
         R"([{"name":"t","parameters":{"properties":{"a":{"type":"array","items":{"type":"array",)"
         R"("items":{"type":"array","items":{"type":"array","items":{"type":"array","items":)"
         R"({"type":"array","items":{"type":"array","items":{"type":"string"}}}}}}}}}}}])"},
        {"trailing-comma.json", R"([{"name":"a"},])"},
        {"not-an-array.json", R"({"name":"a"})"},
        {"empty.json", "[]"},
        {"invalid-utf8.json", "[{\"name\":\"a\",\"description\":\"\xC3\x28\"}]"},
    };
    for (const auto& [name, tools] : presets) {
        seeds["preset-" + name + ".json"] = tools.compactJson();
        seeds["preset-" + name + "-indented.json"] = indentedJson(tools);
    }
    return seeds;
}

// The tools, the 0 byte, and a call text.
std::string toolCallInput(const ToolSet& tools, std::string_view calls) {
    std::string input = tools.compactJson();
    input.push_back('\0');
    return input.append(calls);
}

std::map<std::string, std::string> toolCallSeeds(const std::map<std::string, ToolSet>& presets) {
    std::map<std::string, std::string> seeds;
    for (const auto& [name, tools] : presets) {
        const std::string call = CallMatcher(CallGrammar(tools)).completion();
        seeds[name + "-shortest.txt"] = toolCallInput(tools, call);
        seeds[name + "-cut.txt"] = toolCallInput(tools, call.substr(0, call.size() / 2));
        seeds[name + "-unknown-tool.txt"] =
            toolCallInput(tools, R"([{"name":"no_such_tool","arguments":{}}])");
    }
    return seeds;
}

const char* const kToolWords[] = {
    "[",
    "]",
    "{",
    "}",
    ":",
    ",",
    "\"",
    "\\",
    "\\u00e9",
    "\\ud83d",
    "true",
    "false",
    "null",
    "-0",
    "1e308",
    "0.000001",
    "\"name\"",
    "\"arguments\"",
    "\"type\"",
    "\"function\"",
    "\"parameters\"",
    "\"properties\"",
    "\"required\"",
    "\"description\"",
    "\"enum\"",
    "\"const\"",
    "\"default\"",
    "\"minimum\"",
    "\"maximum\"",
    "\"exclusiveMinimum\"",
    "\"exclusiveMaximum\"",
    "\"minLength\"",
    "\"maxLength\"",
    "\"minItems\"",
    "\"maxItems\"",
    "\"items\"",
    "\"additionalProperties\"",
    "\"string\"",
    "\"integer\"",
    "\"number\"",
    "\"boolean\"",
    "\"array\"",
    "\"object\"",
    "</tool_call>",
};

// libFuzzer dictionary syntax: "text" with \\, \" and non-printable bytes as \xNN.
std::string dictionaryEntry(std::string_view text) {
    std::string entry = "\"";
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20 || byte >= 0x7f || c == '"' || c == '\\') {
            char escaped[5];
            std::snprintf(escaped, sizeof escaped, "\\x%02X", byte);
            entry += escaped;
        } else {
            entry += c;
        }
    }
    return entry + "\"";
}

// The tiny model's keys and tensor names, the optional keys the loader reads, and the magic.
std::set<std::string> ggufDictionary() {
    std::string error;
    const auto file = GgufFile::fromBytes(tinyModel({}).bytes(), error);
    if (!file) throw std::runtime_error("the tiny model does not parse: " + error);
    std::set<std::string> words = {"GGUF",
                                   "general.alignment",
                                   "llama.attention.key_length",
                                   "exaone",
                                   "qwen2",
                                   "qwen3",
                                   "gpt2",
                                   "llama-bpe",
                                   "smollm",
                                   "tokenizer.ggml.merges",
                                   "tokenizer.ggml.pre",
                                   "tokenizer.chat_template",
                                   "rope_freqs.weight",
                                   "blk.0.attn_q.bias",
                                   "blk.0.attn_k.bias",
                                   "blk.0.attn_v.bias",
                                   "blk.0.attn_q_norm.weight",
                                   "blk.0.attn_k_norm.weight",
                                   "output.bias",
                                   "llama.attention.value_length",
                                   "tokenizer.ggml.unknown_token_id",
                                   "tokenizer.ggml.add_bos_token",
                                   "tokenizer.ggml.add_space_prefix",
                                   "sinkscope.kv_window",
                                   "sinkscope.position_mode"};
    for (const GgufKeyValue& entry : file->metadata())
        words.insert(entry.key);
    for (const GgufTensorInfo& tensor : file->tensors())
        words.insert(tensor.name);
    return words;
}

std::set<std::string> tokenizerDictionary() {
    const Vocabulary vocab = fuzz::fuzzVocabulary(true);
    std::set<std::string> words;
    for (size_t id = 0; id < vocab.pieces.size(); ++id)
        if (vocab.types[id] != TokenType::Byte) words.insert(vocab.pieces[id]);
    return words;
}

std::set<std::string> bpeTokenizerDictionary() {
    const Vocabulary vocab = fuzz::fuzzBpeVocabulary("gpt-2");
    std::set<std::string> words;
    for (size_t id = 256; id < vocab.pieces.size(); ++id) // past the 256 byte characters
        words.insert(vocab.types[id] == TokenType::Normal ? gpt2BytesOf(vocab.pieces[id])
                                                          : vocab.pieces[id]);
    return words;
}

void writeFile(const fs::path& path, const void* data, size_t size) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!out) throw std::runtime_error("cannot write " + path.string());
}

void writeDictionary(const fs::path& path, const std::set<std::string>& words) {
    std::string text = "# Generated by make_fuzz_corpus; regenerate rather than edit.\n";
    for (const std::string& word : words)
        text += dictionaryEntry(word) + "\n";
    writeFile(path, text.data(), text.size());
}

// Replaces the directory's files, so that a seed that is no longer made does not linger.
fs::path freshDirectory(const fs::path& path) {
    fs::remove_all(path);
    fs::create_directories(path);
    return path;
}

} // namespace

void writeTexts(const fs::path& directory, const std::map<std::string, std::string>& texts) {
    freshDirectory(directory);
    for (const auto& [name, content] : texts)
        writeFile(directory / name, content.data(), content.size());
}

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: make_fuzz_corpus DIR (the tests/fuzz folder)\n";
        return 2;
    }
    try {
        const fs::path root = argv[1];
        const fs::path gguf = freshDirectory(root / "corpus" / "fuzz_gguf");
        for (const auto& [name, bytes] : ggufSeeds())
            writeFile(gguf / name, bytes.data(), bytes.size());
        writeTexts(root / "corpus" / "fuzz_tokenizer", tokenizerSeeds());
        writeTexts(root / "corpus" / "fuzz_bpe_tokenizer", bpeTokenizerSeeds());
        const auto presets = presetTools(root / ".." / ".." / "resources" / "presets");
        writeTexts(root / "corpus" / "fuzz_tool_schema", toolSchemaSeeds(presets));
        writeTexts(root / "corpus" / "fuzz_call_grammar", toolCallSeeds(presets));
        writeTexts(root / "corpus" / "fuzz_tool_calls", toolCallSeeds(presets));
        writeDictionary(root / "fuzz_gguf.dict", ggufDictionary());
        writeDictionary(root / "fuzz_tokenizer.dict", tokenizerDictionary());
        writeDictionary(root / "fuzz_bpe_tokenizer.dict", bpeTokenizerDictionary());
        writeDictionary(root / "fuzz_tools.dict",
                        std::set<std::string>(std::begin(kToolWords), std::end(kToolWords)));
    } catch (const std::exception& e) {
        std::cerr << "make_fuzz_corpus: " << e.what() << '\n';
        return 1;
    }
    return 0;
}
