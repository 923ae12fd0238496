// Speed of quantMatvec against the f32 matvec of the forward pass (engine/ops.h), for one
// 896 x 4864 matrix (Qwen2-0.5B's ffn_down shape) in each type. Not a test: run it by hand,
// preferably as `nice -n 19 build/tests/bench_quant_matvec [repetitions]`.
#include "gguf/dequantize.h"
#include "model/quant_dot.h"
#include "ops.h"

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

// The fastest of `repetitions` timings of run(), in milliseconds: the machine is shared, and
// the minimum is the figure least disturbed by other work.
template <typename Run> double bestMilliseconds(int repetitions, Run run) {
    std::vector<double> times;
    for (int i = 0; i < repetitions; ++i) {
        const auto start = std::chrono::steady_clock::now();
        run();
        const auto end = std::chrono::steady_clock::now();
        times.push_back(std::chrono::duration<double, std::milli>(end - start).count());
    }
    return *std::min_element(times.begin(), times.end());
}

} // namespace

int main(int argc, char** argv) {
    const int repetitions = argc > 1 ? std::max(1, std::atoi(argv[1])) : 50;
    std::mt19937 generator(42);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    std::vector<float> weights(static_cast<size_t>(kRows) * kCols); // [rows][cols]
    for (float& w : weights)
        w = normal(generator);
    std::vector<float> x(kCols);
    for (float& v : x)
        v = normal(generator) * 50.0f;
    std::vector<float> out(kRows);

    const Matrix matrix{weights.data(), kRows, kCols};
    const double f32 = bestMilliseconds(repetitions, [&] { matvec(matrix, x.data(), out.data()); });
    std::printf("%-6s %8.3f ms  %6.2f GB/s  (ops.h matvec)\n", "F32", f32,
                double(weights.size()) * sizeof(float) / f32 * 1e-6);

    std::vector<std::byte> scratch;
    for (GgmlType type :
         {GgmlType::Q4_0, GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K, GgmlType::Q4_1,
          GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q5_K,
          GgmlType::IQ4_NL, GgmlType::IQ4_XS, GgmlType::F16, GgmlType::BF16}) {
        const auto rowBytes = static_cast<size_t>(*ggmlByteSize(type, kCols));
        std::vector<uint8_t> packed(rowBytes * kRows); // [rows][rowBytes]
        for (int r = 0; r < kRows; ++r)
            quantizeRow(type, weights.data() + static_cast<size_t>(r) * kCols,
                        packed.data() + r * rowBytes, kCols);
        const double fast = bestMilliseconds(repetitions, [&] {
            quantMatvec(type, packed.data(), kRows, kCols, x.data(), out.data(), scratch);
        });
        const double reference = bestMilliseconds(std::max(1, repetitions / 10), [&] {
            quantizeActivations(type, x.data(), scratch.data(), kCols);
            for (int r = 0; r < kRows; ++r)
                out[r] = ref::quantDot(type, packed.data() + r * rowBytes, scratch.data(), kCols);
        });
        std::printf("%-6s %8.3f ms  %6.2f GB/s  %5.2fx the f32 time  (ref %8.3f ms)\n",
                    ggmlTypeName(type), fast, double(packed.size()) / fast * 1e-6, fast / f32,
                    reference);
    }
    return 0;
}
