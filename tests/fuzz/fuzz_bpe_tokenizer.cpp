// libFuzzer target: any bytes, as text, through the byte-level BPE tokenizer with a small fixed
// vocabulary (fuzz_bpe_vocabulary.h), once per implemented pre-tokenizer family.
//
// Properties (a violation aborts, which libFuzzer reports as a crash):
//   - the pre-tokenizer's words are non-empty and add up to the text;
//   - every id is inside the vocabulary, and decode(encode(text)) == text for ANY bytes, valid
//     UTF-8 or not (no exception: BPE works on bytes and adds no space prefix);
//   - with special tokens parsed, BOS comes first and the pieces shown with their text still
//     give the text back;
//   - decoding arbitrary ids (negative, past the end) never crashes;
//   - an input takes at most a second of CPU time (fuzz_limits.h), all families together.
#include "fuzz_bpe_vocabulary.h"
#include "fuzz_limits.h"
#include "tokenizer/tokenizer.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace {

using sinkscope::Tokenizer;

[[noreturn]] void finding(const char* what, std::string_view pre, std::string_view text) {
    std::fprintf(stderr,
                 "fuzz_bpe_tokenizer: %s with pre-tokenizer \"%.*s\" (input of %zu bytes)\n", what,
                 static_cast<int>(pre.size()), pre.data(), text.size());
    std::abort();
}

std::vector<std::unique_ptr<const Tokenizer>> makeTokenizers() {
    std::vector<std::unique_ptr<const Tokenizer>> tokenizers;
    for (const std::string_view pre : sinkscope::fuzz::fuzzPreTokenizers()) {
        auto tokenizer = std::make_unique<const Tokenizer>(sinkscope::fuzz::fuzzBpeVocabulary(pre));
        if (!tokenizer->warnings().empty()) finding("the vocabulary gives a warning", pre, "");
        tokenizers.push_back(std::move(tokenizer));
    }
    return tokenizers;
}

void requireIdsInVocabulary(const Tokenizer& tokenizer, const std::vector<int32_t>& ids,
                            std::string_view pre, std::string_view text) {
    for (const int32_t id : ids)
        if (id < 0 || id >= tokenizer.size()) finding("an id outside the vocabulary", pre, text);
}

void checkWords(const Tokenizer& tokenizer, std::string_view pre, std::string_view text) {
    std::string joined;
    for (const std::string_view word : tokenizer.preTokenizer()->split(text)) {
        if (word.empty()) finding("an empty word", pre, text);
        joined.append(word);
    }
    if (joined != text) finding("the words do not add up to the text", pre, text);
}

void checkRoundTrip(const Tokenizer& tokenizer, std::string_view pre, std::string_view text) {
    const std::vector<int32_t> ids = tokenizer.encode(text, false);
    requireIdsInVocabulary(tokenizer, ids, pre, text);
    if (tokenizer.decode(ids) != text)
        finding("decode(encode(text)) differs from the text", pre, text);
}

void checkSpecialParsing(const Tokenizer& tokenizer, std::string_view pre, std::string_view text) {
    const std::vector<int32_t> ids = tokenizer.encode(text, true, true);
    if (ids.empty() || ids.front() != tokenizer.bos())
        finding("BOS is not the first id", pre, text);
    requireIdsInVocabulary(tokenizer, ids, pre, text);
    std::string shown;
    for (size_t i = 1; i < ids.size(); ++i)
        shown += tokenizer.piece(ids[i], true);
    if (shown != text) finding("the pieces with special text differ from the text", pre, text);
}

// The input's bytes read as int32 ids, whatever their value.
void checkDecodeOfAnyIds(const Tokenizer& tokenizer, std::string_view text) {
    std::vector<int32_t> ids(text.size() / sizeof(int32_t));
    if (ids.empty()) return; // memcpy from the null data of an empty input is undefined
    std::memcpy(ids.data(), text.data(), ids.size() * sizeof(int32_t));
    for (const int32_t id : ids)
        (void)tokenizer.piece(id, true);
    (void)tokenizer.decode(ids);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const std::vector<std::unique_ptr<const Tokenizer>> tokenizers = makeTokenizers();
    const sinkscope::fuzz::CpuClock clock;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto& names = sinkscope::fuzz::fuzzPreTokenizers();
    for (size_t i = 0; i < tokenizers.size(); ++i) {
        checkWords(*tokenizers[i], names[i], text);
        checkRoundTrip(*tokenizers[i], names[i], text);
        checkSpecialParsing(*tokenizers[i], names[i], text);
    }
    checkDecodeOfAnyIds(*tokenizers.front(), text);
    if (clock.elapsedSeconds() > sinkscope::fuzz::kMaxCpuSecondsPerInput)
        finding("an input took more than a second of CPU time", "all", text);
    return 0;
}
