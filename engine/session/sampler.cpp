#include "session/sampler.h"

#include <algorithm>
#include <cmath>

namespace sinkscope {

Sampler::Sampler(const SamplerOptions& options) : m_options(options), m_rng(options.seed) {}

int32_t Sampler::sample(std::span<const float> logits, std::span<const uint8_t> allowed) {
    const auto isAllowed = [&](size_t id) { return allowed.empty() || allowed[id]; };

    if (m_options.greedy || m_options.temperature <= 0) {
        int32_t best = -1;
        for (size_t id = 0; id < logits.size(); ++id)
            if (isAllowed(id) && (best < 0 || logits[id] > logits[best]))
                best = static_cast<int32_t>(id);
        m_lastProbability = 1;
        return best;
    }

    // candidates: (logit / temperature, id), sorted by descending logit, cut by top-k
    m_candidates.clear();
    for (size_t id = 0; id < logits.size(); ++id)
        if (isAllowed(id))
            m_candidates.emplace_back(logits[id] / m_options.temperature, static_cast<int32_t>(id));
    if (m_candidates.empty()) return -1;
    const size_t k = m_options.topK > 0
                         ? std::min(m_candidates.size(), static_cast<size_t>(m_options.topK))
                         : m_candidates.size();
    std::partial_sort(m_candidates.begin(), m_candidates.begin() + k, m_candidates.end(),
                      [](const auto& a, const auto& b) { return a.first > b.first; });
    m_candidates.resize(k);

    // softmax over the candidates, then keep the smallest prefix whose mass reaches top-p
    const float maxLogit = m_candidates.front().first;
    double total = 0;
    for (auto& [value, id] : m_candidates) {
        value = std::exp(value - maxLogit);
        total += value;
    }
    double mass = 0;
    size_t keptCount = 0;
    while (keptCount < m_candidates.size()) {
        mass += m_candidates[keptCount++].first / total;
        if (mass >= m_options.topP) break;
    }
    m_candidates.resize(keptCount);

    double keptTotal = 0;
    for (const auto& candidate : m_candidates)
        keptTotal += candidate.first;
    std::uniform_real_distribution<double> uniform(0.0, keptTotal);
    const double target = uniform(m_rng);
    double cumulative = 0;
    for (const auto& [weight, id] : m_candidates) {
        cumulative += weight;
        if (target < cumulative) {
            m_lastProbability = static_cast<float>(weight / keptTotal);
            return id;
        }
    }
    m_lastProbability = static_cast<float>(m_candidates.back().first / keptTotal);
    return m_candidates.back().second;
}

} // namespace sinkscope
