#include "model/attention.h"

#include "memory/mask.h"
#include "model/kernels/ggml_float.h"
#include "model/kernels/kernel_table.h"
#include "model/ops.h"

#include <algorithm>
#include <cmath>

namespace sinkscope {

AttentionScratch::AttentionScratch(const ModelConfig& c, int slotCount)
    : columns(static_cast<size_t>(slotCount) * c.kvDim()),
      values(static_cast<size_t>(slotCount) * c.kvDim()),
      scores(static_cast<size_t>(c.nHead) * slotCount),
      tokenScores(static_cast<size_t>(KernelTable::kMaxScoreTokens) * c.nHead * slotCount),
      qRotated(c.headDim), foldCos(c.headDim / 2), foldSin(c.headDim / 2), keyRow(c.kvDim()) {}

void collectKeptSlots(const KvCache& cache, int64_t position, std::vector<int>& kept) {
    const KvCacheShape& shape = cache.shape();
    const auto& slots = cache.slotInfos();
    const auto admit = [&](int i) {
        const SlotInfo& slot = slots[i];
        if (keep(position, slot.position, shape.window, slot.kind == SlotKind::Sink))
            kept.push_back(i);
    };
    for (int i = 0; i < cache.sinksUsed(); ++i)
        admit(i);
    const int ringUsed = static_cast<int>(std::min<int64_t>(cache.ringWrites(), shape.window));
    for (int i = shape.sinkSlots; i < shape.sinkSlots + ringUsed; ++i)
        admit(i);
}

namespace {

// Streaming positions (section 5): sink j of S is scored at distance min(q - p_j, W + S - 1 - j).
// The kept sinks whose distance folds are scored again with the query rotated to
// p_j + W + S - 1 - j (stored keys are never re-rotated). Sinks occupy slots [0, S) in order, so
// slot j is sink j.
void rescoreFoldedSinks(const Model& model, const KvCache& cache, AttentionScratch& s, int layer,
                        const AttentionQuery& query, bool halfPrecision, float* scores) {
    const ModelConfig& c = model.config();
    const int kept = static_cast<int>(query.keptSlots.size());
    const int groupSize = c.nHead / c.nHeadKv;
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.headDim));
    for (int i = 0; i < kept && query.keptSlots[i] < query.sinksUsed; ++i) {
        const int sink = query.keptSlots[i];
        const int64_t folded = cache.shape().window + query.sinksUsed - 1 - sink;
        const int64_t sinkPosition = cache.slotInfos()[sink].position;
        if (query.where.position - sinkPosition <= folded) continue;
        cache.readK(layer, sink, s.keyRow.data());
        ropeAngles(c.headDim, sinkPosition + folded, c.ropeBase, model.weights().ropeFreqs,
                   s.foldCos.data(), s.foldSin.data());
        for (int h = 0; h < c.nHead; ++h) {
            std::copy_n(query.qRaw + static_cast<size_t>(h) * c.headDim, c.headDim,
                        s.qRotated.data());
            applyRope(s.qRotated.data(), 1, c.headDim, c.rope, s.foldCos.data(), s.foldSin.data());
            if (halfPrecision) roundToHalf(s.qRotated.data(), s.qRotated.size());
            const float* key = s.keyRow.data() + static_cast<size_t>(h / groupSize) * c.headDim;
            scores[static_cast<size_t>(h) * kept + i] =
                ggml::laneDot16(s.qRotated.data(), key, c.headDim) * scale;
        }
    }
}

float scoreScale(const ModelConfig& c) {
    return 1.0f / std::sqrt(static_cast<float>(c.headDim));
}

// With an f16 cache, attention follows ggml's f16 path (llama.cpp's default cache type): the
// query is rounded to f16 for the K dot products and the softmax weights for the V sum.
bool roundsToHalf(const KvCache& cache) {
    return cache.shape().kvBits == 16;
}

// The rest of a query's attention once scores [n_head][kept] hold its dots with the gathered
// keys: the folded sinks' scores, the softmax, the weighted values and the probe.
void weighScores(const Model& model, const KvCache& cache, AttentionScratch& s, ThreadPool* pool,
                 int layer, const AttentionQuery& query, const AttentionProbe& probe, int gathered,
                 float* scores) {
    const ModelConfig& c = model.config();
    const KernelTable& kernel = kernels();
    const int kept = static_cast<int>(query.keptSlots.size());
    const AttentionShape shape{kept, c.headDim, c.nHead / c.nHeadKv, c.kvDim(), gathered};
    const bool halfPrecision = roundsToHalf(cache);
    if (query.where.streaming)
        rescoreFoldedSinks(model, cache, s, layer, query, halfPrecision, scores);

    // out[h][d] = weights_h . V[:, d], with the values as rows: [gathered][kv_dim]
    const int64_t work = int64_t{kept} * c.nHead * c.headDim;
    pool->forRanges(
        c.nHead, 1,
        [&](int64_t begin, int64_t end) {
            float* weights = scores + static_cast<size_t>(begin) * kept;
            for (int64_t h = begin; h < end; ++h)
                kernel.softmaxRow(weights + static_cast<size_t>(h - begin) * kept, kept);
            if (halfPrecision) roundToHalf(weights, static_cast<size_t>(end - begin) * kept);
            kernel.attentionValues(shape, scores, s.values.data(), query.out,
                                   static_cast<int>(begin), static_cast<int>(end));
        },
        work);

    // The probed heads' weights add up in kept order (contiguous); the caller scatters the sum
    // to physical slots once per token.
    if (query.keptProbe && probe.enabled && (probe.layer < 0 || probe.layer == layer)) {
        const int layersProbed = probe.layer < 0 ? c.nLayer : 1;
        const int headsProbed = probe.head < 0 ? c.nHead : 1;
        const float share = 1.0f / static_cast<float>(layersProbed * headsProbed);
        for (int h = 0; h < c.nHead; ++h) {
            if (probe.head >= 0 && probe.head != h) continue;
            axpy(share, scores + static_cast<size_t>(h) * kept, query.keptProbe, kept);
        }
    }
}

} // namespace

void gatherSlots(const KvCache& cache, int layer, std::span<const int> slots, AttentionScratch& s) {
    cache.gatherK(layer, slots, s.columns.data());
    cache.gatherV(layer, slots, s.values.data());
}

void attend(const Model& model, const KvCache& cache, AttentionScratch& s, ThreadPool* pool,
            int layer, const AttentionQuery& query, const AttentionProbe& probe) {
    gatherSlots(cache, layer, query.keptSlots, s);
    attendGathered(model, cache, s, pool, layer, query, probe,
                   static_cast<int>(query.keptSlots.size()));
}

void attendGathered(const Model& model, const KvCache& cache, AttentionScratch& s, ThreadPool* pool,
                    int layer, const AttentionQuery& query, const AttentionProbe& probe,
                    int gathered) {
    const ModelConfig& c = model.config();
    const KernelTable& kernel = kernels();
    const int kept = static_cast<int>(query.keptSlots.size());
    const AttentionShape shape{kept, c.headDim, c.nHead / c.nHeadKv, c.kvDim(), gathered};
    const float scale = scoreScale(c);
    if (roundsToHalf(cache)) roundToHalf(query.q, static_cast<size_t>(c.nHead) * c.headDim);

    // scores[h][i] = (q_h . K[i]) * scale, with the keys as columns: [kv_dim][gathered]. The dots
    // and the softmax run in llama.cpp's float order (model/kernels/ggml_float.h).
    const int64_t work = int64_t{kept} * c.nHead * c.headDim;
    pool->forRanges(
        c.nHead, 1,
        [&](int64_t begin, int64_t end) {
            kernel.attentionScores(shape, query.q, s.columns.data(), scale, s.scores.data(),
                                   static_cast<int>(begin), static_cast<int>(end));
        },
        work);
    weighScores(model, cache, s, pool, layer, query, probe, gathered, s.scores.data());
}

void attendChunk(const Model& model, const KvCache& cache, AttentionScratch& s, ThreadPool* pool,
                 int layer, std::span<const AttentionQuery> queries, const AttentionProbe& probe,
                 int gathered) {
    const ModelConfig& c = model.config();
    const KernelTable& kernel = kernels();
    const AttentionShape shape{gathered, c.headDim, c.nHead / c.nHeadKv, c.kvDim(), gathered};
    const float scale = scoreScale(c);
    const size_t perToken = static_cast<size_t>(c.nHead) * static_cast<size_t>(gathered);
    constexpr int kGroup = KernelTable::kMaxScoreTokens;
    for (size_t first = 0; first < queries.size(); first += kGroup) {
        const int tokens = static_cast<int>(std::min<size_t>(kGroup, queries.size() - first));
        const float* q[kGroup];
        int kept[kGroup];
        float* scores[kGroup];
        int64_t work = 0;
        for (int t = 0; t < tokens; ++t) {
            const AttentionQuery& query = queries[first + static_cast<size_t>(t)];
            if (roundsToHalf(cache)) roundToHalf(query.q, static_cast<size_t>(c.nHead) * c.headDim);
            q[t] = query.q;
            kept[t] = static_cast<int>(query.keptSlots.size());
            scores[t] = s.tokenScores.data() + static_cast<size_t>(t) * perToken;
            work += int64_t{kept[t]} * c.nHead * c.headDim;
        }
        pool->forRanges(
            c.nHead, 1,
            [&](int64_t begin, int64_t end) {
                kernel.attentionScoresTokens(shape, tokens, q, kept, s.columns.data(), scale,
                                             scores, static_cast<int>(begin),
                                             static_cast<int>(end));
            },
            work);
        for (int t = 0; t < tokens; ++t)
            weighScores(model, cache, s, pool, layer, queries[first + static_cast<size_t>(t)],
                        probe, gathered, scores[t]);
    }
}

} // namespace sinkscope
