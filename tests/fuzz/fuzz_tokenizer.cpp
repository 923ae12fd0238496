// libFuzzer target: any bytes, as text, through the SentencePiece tokenizer with a small fixed
// vocabulary (fuzz_vocabulary.h), with and without the space prefix.
//
// Properties (a violation aborts, which libFuzzer reports as a crash):
//   - every id is inside the vocabulary, and BOS comes first when asked for;
//   - decode(encode(text), stripSpacePrefix) == text for ANY bytes, valid UTF-8 or not, with one
//     documented exception: a literal U+2581 in the text decodes as ' ', because the vocabulary
//     stores spaces as U+2581 (SentencePiece, and llama.cpp, lose that distinction too);
//   - parsing special tokens and decoding arbitrary ids (negative, past the end) never crash;
//   - an input takes at most a second of CPU time (fuzz_limits.h).
#include "fuzz_limits.h"
#include "fuzz_vocabulary.h"
#include "tokenizer/tokenizer.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace {

using sinkscope::Tokenizer;

constexpr std::string_view kSpaceMarker = "\xE2\x96\x81"; // U+2581

[[noreturn]] void finding(const char* what, std::string_view text) {
    std::fprintf(stderr, "fuzz_tokenizer: %s (input of %zu bytes)\n", what, text.size());
    std::abort();
}

// What decoding must give back: the text with each U+2581 read as a space.
std::string expectedRoundTrip(std::string_view text) {
    std::string expected;
    size_t start = 0;
    for (size_t found = text.find(kSpaceMarker); found != std::string_view::npos;
         found = text.find(kSpaceMarker, start)) {
        expected.append(text.substr(start, found - start)).push_back(' ');
        start = found + kSpaceMarker.size();
    }
    return expected.append(text.substr(start));
}

void requireIdsInVocabulary(const Tokenizer& tokenizer, const std::vector<int32_t>& ids,
                            std::string_view text) {
    for (const int32_t id : ids)
        if (id < 0 || id >= tokenizer.size()) finding("an id outside the vocabulary", text);
}

void checkRoundTrip(const Tokenizer& tokenizer, std::string_view text) {
    const std::vector<int32_t> ids = tokenizer.encode(text, false);
    requireIdsInVocabulary(tokenizer, ids, text);
    if (tokenizer.decode(ids, true) != expectedRoundTrip(text))
        finding("decode(encode(text)) differs from the text", text);
}

void checkSpecialParsing(const Tokenizer& tokenizer, std::string_view text) {
    const std::vector<int32_t> ids = tokenizer.encode(text, true, true);
    if (ids.empty() || ids.front() != tokenizer.bos()) finding("BOS is not the first id", text);
    requireIdsInVocabulary(tokenizer, ids, text);
}

// The input's bytes read as int32 ids, whatever their value.
void checkDecodeOfAnyIds(const Tokenizer& tokenizer, std::string_view text) {
    std::vector<int32_t> ids(text.size() / sizeof(int32_t));
    if (ids.empty()) return; // memcpy from the null data of an empty input is undefined
    std::memcpy(ids.data(), text.data(), ids.size() * sizeof(int32_t));
    for (const int32_t id : ids)
        (void)tokenizer.piece(id, true);
    (void)tokenizer.decode(ids, true);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const Tokenizer prefixed(sinkscope::fuzz::fuzzVocabulary(true));
    static const Tokenizer unprefixed(sinkscope::fuzz::fuzzVocabulary(false));
    const sinkscope::fuzz::CpuClock clock;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    checkRoundTrip(prefixed, text);
    checkRoundTrip(unprefixed, text);
    checkSpecialParsing(prefixed, text);
    checkDecodeOfAnyIds(prefixed, text);
    if (clock.elapsedSeconds() > sinkscope::fuzz::kMaxCpuSecondsPerInput)
        finding("an input took more than a second of CPU time", text);
    return 0;
}
