// Speed of quantMatvec against the f32 matvec of the forward pass (engine/ops.h), for one
// 896 x 4864 matrix (Qwen2-0.5B's ffn_down shape) in each type. Not a test: run it by hand,
// preferably as `nice -n 19 build/tests/bench_quant_matvec [repetitions]`.
//
// Two figures per type: "hot", the same matrix again and again (it may stay in the caches), and
// "streamed", a round robin over copies totalling >= 256 MiB, so that every product reads its
// weights from memory as a model's forward pass does. Times are the fastest of the repetitions:
// the machine is shared, and the minimum is the figure least disturbed by other work.
#include "gguf/dequantize.h"
#include "model/ops.h"
#include "model/quant_dot.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

using namespace sinkscope;

namespace {

constexpr int kRows = 896;
constexpr int kCols = 4864;
constexpr size_t kStreamedBytes = size_t(256) << 20;

// The fastest of `repetitions` rounds of run(copy) over copies 0..copies-1, in milliseconds per
// call.
template <typename Run> double bestMilliseconds(int repetitions, size_t copies, Run run) {
    double best = 1e30;
    for (int i = 0; i < repetitions; ++i) {
        const auto start = std::chrono::steady_clock::now();
        for (size_t copy = 0; copy < copies; ++copy)
            run(copy);
        const auto end = std::chrono::steady_clock::now();
        best = std::min(best, std::chrono::duration<double, std::milli>(end - start).count() /
                                  double(copies));
    }
    return best;
}

size_t copiesFor(size_t bytes) {
    return (kStreamedBytes + bytes - 1) / bytes;
}

} // namespace

int main(int argc, char** argv) {
    const int repetitions = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
    std::mt19937 generator(42);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    std::vector<float> weights(static_cast<size_t>(kRows) * kCols); // [rows][cols]
    for (float& w : weights)
        w = normal(generator);
    std::vector<float> x(kCols);
    for (float& v : x)
        v = normal(generator) * 50.0f;
    std::vector<float> out(kRows);

    const size_t f32Bytes = weights.size() * sizeof(float);
    const std::vector<std::vector<float>> f32Copies(copiesFor(f32Bytes), weights);
    const auto f32Run = [&](size_t copy) {
        matvec(Matrix{f32Copies[copy].data(), kRows, kCols}, x.data(), out.data());
    };
    const double f32Hot = bestMilliseconds(repetitions * 4, 1, f32Run);
    const double f32Streamed = bestMilliseconds(repetitions, f32Copies.size(), f32Run);
    std::printf("%dx%d, best of %d   hot ms (GB/s)   streamed ms (GB/s)   vs f32 hot / streamed\n",
                kRows, kCols, repetitions);
    std::printf("%-7s %8.3f (%5.1f)  %8.3f (%5.1f)   ops.h matvec\n", "F32", f32Hot,
                f32Bytes / f32Hot * 1e-6, f32Streamed, f32Bytes / f32Streamed * 1e-6);

    std::vector<std::byte> scratch;
    for (GgmlType type :
         {GgmlType::Q4_0, GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K, GgmlType::Q4_1,
          GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::IQ4_NL, GgmlType::Q2_K, GgmlType::Q3_K,
          GgmlType::Q5_K, GgmlType::IQ4_XS, GgmlType::F16, GgmlType::BF16}) {
        const auto rowBytes = static_cast<size_t>(*ggmlByteSize(type, kCols));
        std::vector<uint8_t> packed(rowBytes * kRows); // [rows][rowBytes]
        for (int r = 0; r < kRows; ++r)
            quantizeRow(type, weights.data() + static_cast<size_t>(r) * kCols,
                        packed.data() + r * rowBytes, kCols);
        const std::vector<std::vector<uint8_t>> copies(copiesFor(packed.size()), packed);
        const auto run = [&](size_t copy) {
            quantMatvec(type, copies[copy].data(), kRows, kCols, x.data(), out.data(), scratch);
        };
        const double hot = bestMilliseconds(repetitions * 4, 1, run);
        const double streamed = bestMilliseconds(repetitions, copies.size(), run);
        std::printf("%-7s %8.3f (%5.1f)  %8.3f (%5.1f)   %5.2fx / %5.2fx\n", ggmlTypeName(type),
                    hot, packed.size() / hot * 1e-6, streamed, packed.size() / streamed * 1e-6,
                    hot / f32Hot, streamed / f32Streamed);
    }
    return 0;
}
