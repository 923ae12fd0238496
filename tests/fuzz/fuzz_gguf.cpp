// libFuzzer target: any bytes -> GgufFile::fromBytes -> Model::fromGguf -> a model or an error.
//
// Properties (a violation aborts, which libFuzzer reports as a crash):
//   - a failed load says why, in one non-empty line;
//   - loading holds at most kHeapBytesPerFileByte * file size + kHeapSlackBytes of heap at once
//     (the allocation bound documented in README.md; -rss_limit_mb backs it up);
//   - an input takes at most a second of CPU time (fuzz_limits.h);
//   - a model that loads is usable: it tokenizes a text and runs a few decode steps through a small
//     cache, giving one logit per vocabulary entry and a sampled id inside the vocabulary.
// Sanitizers (ASan, UBSan, no recovery) turn memory errors and undefined behaviour into crashes;
// an exception escaping the engine aborts too.
#include "fuzz_limits.h"
#include "gguf/gguf.h"
#include "model/model.h"
#include "session/sampler.h"
#include "session/session.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace sinkscope;

constexpr int64_t kHeapBytesPerFileByte = 32;
constexpr int64_t kHeapSlackBytes = 1 << 20;
constexpr int kDecodeSteps = 2;

[[noreturn]] void finding(const std::string& what) {
    std::fprintf(stderr, "fuzz_gguf: %s\n", what.c_str());
    std::abort();
}

void requireOneLineMessage(const std::string& error) {
    if (error.empty()) finding("a load failed without a message");
    if (error.find_first_of("\r\n") != std::string::npos)
        finding("the error message spans several lines: " + error);
}

std::unique_ptr<Model> loadWithinHeapBound(const uint8_t* data, size_t size, std::string& error) {
    std::vector<uint8_t> bytes(data, data + size);
    const fuzz::HeapPeak heap;
    std::unique_ptr<GgufFile> file = GgufFile::fromBytes(std::move(bytes), error, "fuzz input");
    std::unique_ptr<Model> model = file ? Model::fromGguf(std::move(file), error) : nullptr;
    const int64_t bound = kHeapBytesPerFileByte * static_cast<int64_t>(size) + kHeapSlackBytes;
    if (heap.peakBytes() > bound)
        finding("loading " + std::to_string(size) + " bytes held " +
                std::to_string(heap.peakBytes()) + " bytes of heap (bound " +
                std::to_string(bound) + ")");
    return model;
}

void requireUsable(const Model& model) {
    const int nVocab = model.config().nVocab;
    SessionOptions options;
    options.recordHistory = true; // decoded below
    options.kvWindow = 4;         // smaller than the prompt: the ring wraps and evicts
    Session session(model, options);
    Sampler greedy(SamplerOptions{.greedy = true});
    std::vector<int32_t> prompt = model.tokenizer().encode("Once upon a time", true);
    if (prompt.empty()) prompt.push_back(model.tokenizer().bos());
    std::span<const float> logits = session.prefill(prompt);
    for (int step = 0; step < kDecodeSteps; ++step) {
        if (static_cast<int>(logits.size()) != nVocab)
            finding("logits do not match the vocabulary");
        const int32_t next = greedy.sample(logits);
        if (next < 0 || next >= nVocab) finding("sampled an id outside the vocabulary");
        logits = session.feed(next);
    }
    (void)model.tokenizer().decode(session.history(), true);
}

void loadAndRun(const uint8_t* data, size_t size) {
    std::string error;
    const std::unique_ptr<Model> model = loadWithinHeapBound(data, size, error);
    if (!model) {
        requireOneLineMessage(error);
        return;
    }
    requireUsable(*model);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const fuzz::CpuClock clock;
    loadAndRun(data, size);
    if (clock.elapsedSeconds() > fuzz::kMaxCpuSecondsPerInput)
        finding("an input of " + std::to_string(size) + " bytes took " +
                std::to_string(clock.elapsedSeconds()) + " s of CPU time");
    return 0;
}
