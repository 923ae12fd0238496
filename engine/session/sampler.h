// Picks the next token from logits: greedy, or temperature -> top-k -> top-p with a seeded RNG.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace sinkscope {

struct SamplerOptions {
    bool greedy = false;
    float temperature = 0.8f;
    int topK = 40;      // 0 = the whole vocabulary
    float topP = 0.95f; // 1 = off
    uint64_t seed = 42;
};

class Sampler {
public:
    explicit Sampler(const SamplerOptions& options);
    // Returns the sampled token; `allowed`, when not empty, masks the vocabulary ([n_vocab]).
    int32_t sample(std::span<const float> logits, std::span<const uint8_t> allowed = {});
    // Probability of `token` under the last distribution sampled from (1 for greedy's pick).
    float lastProbability() const { return m_lastProbability; }

private:
    SamplerOptions m_options;
    std::mt19937_64 m_rng;
    std::vector<std::pair<float, int32_t>> m_candidates; // scratch [n_vocab]
    float m_lastProbability = 0;
};

} // namespace sinkscope
