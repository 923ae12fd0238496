#include "tokenizer/gguf_vocabulary.h"

#include "gguf/gguf.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/quoted.h"

#include <algorithm>
#include <cstdint>

namespace sinkscope {

namespace {

struct SpecialDefaults {
    int32_t bos;
    int32_t eos;
    int32_t unk; // -1: none
};

constexpr SpecialDefaults kSentencePieceDefaults = {1, 2, 0};
constexpr SpecialDefaults kBytePairDefaults = {11, 11, -1};

std::optional<int64_t> readOptionalInt(const GgufFile& file, std::string_view key, int64_t fallback,
                                       std::string& error) {
    const GgufValue* value = file.find(key);
    if (!value) return fallback;
    const std::optional<int64_t> number = value->asInt();
    if (!number) error = std::string(key) + " is not an integer";
    return number;
}

std::optional<bool> readOptionalBool(const GgufFile& file, std::string_view key, bool fallback,
                                     std::string& error) {
    const GgufValue* value = file.find(key);
    if (!value) return fallback;
    const std::optional<bool> flag = value->asBool();
    if (!flag) error = std::string(key) + " is not a boolean";
    return flag;
}

// The id under `key`, or `fallback` when absent; either must lie inside the vocabulary, except
// an absent key whose fallback is -1 (no such token).
std::optional<int32_t> readTokenId(const GgufFile& file, std::string_view key, int32_t fallback,
                                   size_t vocabSize, std::string& error) {
    const bool present = file.find(key) != nullptr;
    if (!present && fallback < 0) return fallback;
    const std::optional<int64_t> id = readOptionalInt(file, key, fallback, error);
    if (!id) return std::nullopt;
    if (*id < 0 || static_cast<uint64_t>(*id) >= vocabSize) {
        error = std::string(key) + (present ? " = " : " is absent and its default ") +
                std::to_string(*id) + " is outside the vocabulary of " + std::to_string(vocabSize) +
                " tokens";
        return std::nullopt;
    }
    return static_cast<int32_t>(*id);
}

// tokenizer.ggml.token_type values outside the enum read as Undefined, as llama.cpp does.
TokenType tokenTypeFromGguf(int64_t value) {
    if (value < static_cast<int64_t>(TokenType::Undefined) ||
        value > static_cast<int64_t>(TokenType::Byte)) {
        return TokenType::Undefined;
    }
    return static_cast<TokenType>(value);
}

bool readModel(const GgufFile& file, Vocabulary& vocab, std::string& error) {
    const GgufValue* model = file.find("tokenizer.ggml.model");
    if (!model || !model->asString()) {
        error = "tokenizer.ggml.model is missing or not a string";
        return false;
    }
    const std::string& name = *model->asString();
    if (name == "llama") {
        vocab.model = TokenizerModel::SentencePiece;
    } else if (name == "gpt2") {
        vocab.model = TokenizerModel::BytePairEncoding;
    } else {
        error = "tokenizer model " + quotedText(name) +
                " is not supported (only \"llama\", SentencePiece, and \"gpt2\", byte-level BPE)";
        return false;
    }
    return true;
}

// Fills pieces, scores and types; scores and types are optional (0 and Normal when absent).
bool readTokenArrays(const GgufFile& file, Vocabulary& vocab, std::string& error) {
    const GgufValue* tokens = file.find("tokenizer.ggml.tokens");
    if (!tokens || !tokens->asStringArray()) {
        error = "tokenizer.ggml.tokens is missing or not an array of strings";
        return false;
    }
    vocab.pieces = *tokens->asStringArray();
    const size_t count = vocab.pieces.size();
    if (count == 0) {
        error = "tokenizer.ggml.tokens is empty: the vocabulary has no tokens";
        return false;
    }
    if (count > static_cast<size_t>(INT32_MAX)) {
        error = "tokenizer.ggml.tokens has more tokens than 32-bit ids can address";
        return false;
    }
    auto checkLength = [&](const char* key, size_t length) {
        if (length == count) return true;
        error = std::string(key) + " has " + std::to_string(length) +
                " entries but tokenizer.ggml.tokens has " + std::to_string(count);
        return false;
    };

    vocab.scores.assign(count, 0.0f);
    if (const GgufValue* scores = file.find("tokenizer.ggml.scores")) {
        const std::vector<double>* values = scores->asFloatArray();
        if (!values) {
            error = "tokenizer.ggml.scores is not an array of floats";
            return false;
        }
        if (!checkLength("tokenizer.ggml.scores", values->size())) return false;
        std::transform(values->begin(), values->end(), vocab.scores.begin(),
                       [](double score) { return static_cast<float>(score); });
    }

    vocab.types.assign(count, TokenType::Normal);
    if (const GgufValue* types = file.find("tokenizer.ggml.token_type")) {
        const std::vector<int64_t>* values = types->asIntArray();
        if (!values) {
            error = "tokenizer.ggml.token_type is not an array of integers";
            return false;
        }
        if (!checkLength("tokenizer.ggml.token_type", values->size())) return false;
        std::transform(values->begin(), values->end(), vocab.types.begin(), tokenTypeFromGguf);
    }
    return true;
}

bool readBytePairSettings(const GgufFile& file, Vocabulary& vocab, std::string& error) {
    const GgufValue* merges = file.find("tokenizer.ggml.merges");
    if (!merges) {
        error = "tokenizer.ggml.merges is missing: a gpt2 (byte-level BPE) vocabulary needs them";
        return false;
    }
    if (!merges->asStringArray()) {
        error = "tokenizer.ggml.merges is not an array of strings";
        return false;
    }
    vocab.merges = *merges->asStringArray();
    if (const GgufValue* pre = file.find("tokenizer.ggml.pre")) {
        if (!pre->asString()) {
            error = "tokenizer.ggml.pre is not a string";
            return false;
        }
        vocab.preTokenizer = *pre->asString();
    }
    return true;
}

bool readSpecialSettings(const GgufFile& file, Vocabulary& vocab, std::string& error) {
    const bool bytePair = vocab.model == TokenizerModel::BytePairEncoding;
    const SpecialDefaults defaults = bytePair ? kBytePairDefaults : kSentencePieceDefaults;
    const size_t count = vocab.pieces.size();
    const auto bos = readTokenId(file, "tokenizer.ggml.bos_token_id", defaults.bos, count, error);
    if (!bos) return false;
    const auto eos = readTokenId(file, "tokenizer.ggml.eos_token_id", defaults.eos, count, error);
    if (!eos) return false;
    const auto unk =
        readTokenId(file, "tokenizer.ggml.unknown_token_id", defaults.unk, count, error);
    if (!unk) return false;
    std::string ignoredWarning; // the tokenizer reports it when it picks the pre-tokenizer
    const bool defaultAddBos =
        !bytePair || PreTokenizer::forName(vocab.preTokenizer, ignoredWarning).addsBosByDefault();
    const auto addBos =
        readOptionalBool(file, "tokenizer.ggml.add_bos_token", defaultAddBos, error);
    if (!addBos) return false;
    // llama.cpp's BPE tokenizer never adds a space prefix, whatever the file says.
    const auto addSpacePrefix =
        bytePair ? std::optional<bool>(false)
                 : readOptionalBool(file, "tokenizer.ggml.add_space_prefix", true, error);
    if (!addSpacePrefix) return false;
    vocab.bos = *bos;
    vocab.eos = *eos;
    vocab.unk = *unk;
    vocab.addBos = *addBos;
    vocab.addSpacePrefix = *addSpacePrefix;
    return true;
}

} // namespace

std::optional<Vocabulary> readVocabulary(const GgufFile& file, std::string& error) {
    Vocabulary vocab;
    if (!readModel(file, vocab, error) || !readTokenArrays(file, vocab, error)) return std::nullopt;
    if (vocab.model == TokenizerModel::BytePairEncoding &&
        !readBytePairSettings(file, vocab, error)) {
        return std::nullopt;
    }
    if (!readSpecialSettings(file, vocab, error)) return std::nullopt;
    return vocab;
}

} // namespace sinkscope
