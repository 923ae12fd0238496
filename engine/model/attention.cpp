#include "model/attention.h"

#include "memory/mask.h"
#include "model/kernels/ggml_float.h"
#include "model/kernels/kernel_table.h"
#include "model/ops.h"

#include <algorithm>
#include <cmath>

namespace sinkscope {

namespace {

// Every layer's decoded copy when they fit the budget together, else one shared by all.
size_t decodedCopies(const ModelConfig& c, int slotCount) {
    const size_t perLayer = size_t{2} * static_cast<size_t>(slotCount) * c.kvDim() * sizeof(float);
    return perLayer * static_cast<size_t>(c.nLayer) <= AttentionScratch::kDecodedBudgetBytes
               ? static_cast<size_t>(c.nLayer)
               : 1;
}

} // namespace

AttentionScratch::AttentionScratch(const ModelConfig& c, int slots)
    : slotCount(slots), decodedLayers(decodedCopies(c, slots)),
      tokenScores(static_cast<size_t>(KernelTable::kMaxScoreTokens) * c.nHead * slots),
      qRotated(static_cast<size_t>(c.nHead) * c.headDim), foldCos(c.headDim / 2),
      foldSin(c.headDim / 2), keyRow(c.kvDim()) {
    for (DecodedSlots& d : decodedLayers) {
        d.cacheSlots.reserve(static_cast<size_t>(slots)); // no allocation once tokens run
        d.versions.reserve(static_cast<size_t>(slots));
        d.columns.resize(static_cast<size_t>(slots) * c.kvDim());
        d.values.resize(static_cast<size_t>(slots) * c.kvDim());
    }
}

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

float scoreScale(const ModelConfig& c) {
    return 1.0f / std::sqrt(static_cast<float>(c.headDim));
}

// Streaming positions (section 5): sink j of S is scored at distance min(q - p_j, W + S - 1 - j).
// The kept sinks whose distance folds are scored again with the query rotated to
// p_j + W + S - 1 - j (stored keys are never re-rotated). Sinks occupy slots [0, S) in order, so
// slot j is sink j. When the sinks are the stream's first S tokens (p_j = j, the default) every
// sink's rotation is the same, W + S - 1: the query is rotated once per run of sinks that share
// one, not once per sink (290 sinks in 8 layers cost more than the rest of a token otherwise).
void rescoreFoldedSinks(const Model& model, const KvCache& cache, AttentionScratch& s, int layer,
                        const AttentionQuery& query, bool halfPrecision, float* scores) {
    const ModelConfig& c = model.config();
    const int kept = static_cast<int>(query.keptSlots.size());
    const int groupSize = c.nHead / c.nHeadKv;
    const float scale = scoreScale(c);
    int64_t rotatedTo = -1; // the position s.qRotated holds every head's query rotated to
    for (int i = 0; i < kept && query.keptSlots[i] < query.sinksUsed; ++i) {
        const int sink = query.keptSlots[i];
        const int64_t folded = cache.shape().window + query.sinksUsed - 1 - sink;
        const int64_t sinkPosition = cache.slotInfos()[sink].position;
        if (query.where.position - sinkPosition <= folded) continue;
        if (sinkPosition + folded != rotatedTo) {
            rotatedTo = sinkPosition + folded;
            ropeAngles(c.headDim, rotatedTo, c.ropeBase, model.weights().ropeFreqs,
                       s.foldCos.data(), s.foldSin.data());
            std::copy_n(query.qRaw, s.qRotated.size(), s.qRotated.data());
            applyRope(s.qRotated.data(), c.nHead, c.headDim, c.rope, s.foldCos.data(),
                      s.foldSin.data());
            if (halfPrecision) roundToHalf(s.qRotated.data(), s.qRotated.size());
        }
        cache.readK(layer, sink, s.keyRow.data());
        for (int h = 0; h < c.nHead; ++h) {
            const float* key = s.keyRow.data() + static_cast<size_t>(h / groupSize) * c.headDim;
            scores[static_cast<size_t>(h) * kept + i] =
                ggml::laneDot16(s.qRotated.data() + static_cast<size_t>(h) * c.headDim, key,
                                c.headDim) *
                scale;
        }
    }
}

// With an f16 cache, attention follows ggml's f16 path (llama.cpp's default cache type): the
// query is rounded to f16 for the K dot products and the softmax weights for the V sum.
bool roundsToHalf(const KvCache& cache) {
    return cache.shape().kvBits == 16;
}

// The probed heads' weights of a query add up in kept order (contiguous); the caller scatters the
// sum to physical slots once per token.
void addProbe(const ModelConfig& c, int layer, const AttentionQuery& query,
              const AttentionProbe& probe, const float* weights) {
    if (!query.keptProbe || !probe.enabled || (probe.layer >= 0 && probe.layer != layer)) return;
    const int kept = static_cast<int>(query.keptSlots.size());
    const int layersProbed = probe.layer < 0 ? c.nLayer : 1;
    const int headsProbed = probe.head < 0 ? c.nHead : 1;
    const float share = 1.0f / static_cast<float>(layersProbed * headsProbed);
    for (int h = 0; h < c.nHead; ++h) {
        if (probe.head >= 0 && probe.head != h) continue;
        axpy(share, weights + static_cast<size_t>(h) * kept, query.keptProbe, kept);
    }
}

// Up to KernelTable::kMaxScoreTokens queries whose kept slots are prefixes of the `gathered`
// slots in scratch: their scores [n_head][kept_t] (into scratch.tokenScores), the folded sinks'
// scores, the softmax and the weighted values, heads split among the pool's threads.
void attendGroup(const Model& model, const KvCache& cache, AttentionScratch& s, ThreadPool* pool,
                 int layer, std::span<const AttentionQuery> queries, const AttentionProbe& probe,
                 int gathered) {
    constexpr int kGroup = KernelTable::kMaxScoreTokens;
    const ModelConfig& c = model.config();
    const KernelTable& kernel = kernels();
    const AttentionShape shape{gathered, c.headDim, c.nHead / c.nHeadKv, c.kvDim(), s.slotCount};
    const DecodedSlots& decoded = s.decoded(layer);
    const float scale = scoreScale(c);
    const bool halfPrecision = roundsToHalf(cache);
    const int tokens = static_cast<int>(queries.size());
    const float* q[kGroup];
    int kept[kGroup];
    float* scores[kGroup];
    float* out[kGroup];
    int64_t work = 0;
    for (int t = 0; t < tokens; ++t) {
        const AttentionQuery& query = queries[static_cast<size_t>(t)];
        if (halfPrecision) roundToHalf(query.q, static_cast<size_t>(c.nHead) * c.headDim);
        q[t] = query.q;
        kept[t] = static_cast<int>(query.keptSlots.size());
        scores[t] = s.tokenScores.data() + static_cast<size_t>(t) * c.nHead * gathered;
        out[t] = query.out;
        work += int64_t{kept[t]} * c.nHead * c.headDim * ThreadPool::kFloatWorkWeight;
    }
    // scores[h][i] = (q_h . K[i]) * scale, with the keys as columns: [kv_dim][slotCount]. The dots
    // and the softmax run in llama.cpp's float order (model/kernels/ggml_float.h).
    pool->forRanges(
        c.nHead, 1,
        [&](int64_t begin, int64_t end) {
            kernel.attentionScoresTokens(shape, tokens, q, kept, decoded.columns.data(), scale,
                                         scores, static_cast<int>(begin), static_cast<int>(end));
        },
        work);
    for (int t = 0; t < tokens; ++t)
        if (queries[static_cast<size_t>(t)].where.streaming)
            rescoreFoldedSinks(model, cache, s, layer, queries[static_cast<size_t>(t)],
                               halfPrecision, scores[t]);
    // out[h][d] = weights_h . V[:, d], with the values as rows: [gathered][kv_dim]
    pool->forRanges(
        c.nHead, 1,
        [&](int64_t begin, int64_t end) {
            for (int t = 0; t < tokens; ++t) {
                float* weights = scores[t] + static_cast<size_t>(begin) * kept[t];
                for (int64_t h = begin; h < end; ++h)
                    kernel.softmaxRow(weights + static_cast<size_t>(h - begin) * kept[t], kept[t]);
                if (halfPrecision) roundToHalf(weights, static_cast<size_t>(end - begin) * kept[t]);
            }
            kernel.attentionValuesTokens(shape, tokens, scores, kept, decoded.values.data(), out,
                                         static_cast<int>(begin), static_cast<int>(end));
        },
        work);
    for (int t = 0; t < tokens; ++t)
        addProbe(c, layer, queries[static_cast<size_t>(t)], probe, scores[t]);
}

// The K and V of `run`, the slots of decoded columns [first, first + run.size()), decoded into
// them; parts of whole groups of eight slots, so that each thread transposes full 8 x 8 tiles.
void decodeRun(const KvCache& cache, int layer, std::span<const int> run, size_t first,
               AttentionScratch& s, ThreadPool* pool) {
    DecodedSlots& d = s.decoded(layer);
    const auto kvDim = static_cast<size_t>(cache.shape().kvDim);
    const auto stride = static_cast<size_t>(s.slotCount);
    const auto part = [&](int64_t begin, int64_t end) {
        const auto some = run.subspan(static_cast<size_t>(begin), static_cast<size_t>(end - begin));
        const size_t column = first + static_cast<size_t>(begin);
        cache.gatherK(layer, some, d.columns.data() + column, stride);
        cache.gatherV(layer, some, d.values.data() + column * kvDim);
    };
    const auto count = static_cast<int64_t>(run.size());
    if (pool)
        pool->forRanges(count, 8, part, 2 * count * static_cast<int64_t>(kvDim));
    else
        part(0, count);
}

} // namespace

void gatherSlots(const KvCache& cache, int layer, std::span<const int> slots, AttentionScratch& s,
                 ThreadPool* pool) {
    DecodedSlots& d = s.decoded(layer);
    const size_t count = slots.size();
    d.cacheSlots.resize(count, -1);
    d.versions.resize(count, 0);
    const auto current = [&](size_t i) {
        return d.cacheSlots[i] == slots[i] && d.versions[i] != 0 &&
               d.versions[i] == cache.rowVersion(layer, slots[i]);
    };
    // Each run of columns whose slot moved or whose rows were written since is decoded again.
    for (size_t first = 0; first < count;) {
        if (current(first)) {
            ++first;
            continue;
        }
        size_t end = first + 1;
        while (end < count && !current(end))
            ++end;
        decodeRun(cache, layer, slots.subspan(first, end - first), first, s, pool);
        for (size_t i = first; i < end; ++i) {
            d.cacheSlots[i] = slots[i];
            d.versions[i] = cache.rowVersion(layer, slots[i]);
        }
        first = end;
    }
}

void attend(const Model& model, const KvCache& cache, AttentionScratch& s, ThreadPool* pool,
            int layer, const AttentionQuery& query, const AttentionProbe& probe) {
    gatherSlots(cache, layer, query.keptSlots, s, pool);
    attendGathered(model, cache, s, pool, layer, query, probe,
                   static_cast<int>(query.keptSlots.size()));
}

void attendGathered(const Model& model, const KvCache& cache, AttentionScratch& s, ThreadPool* pool,
                    int layer, const AttentionQuery& query, const AttentionProbe& probe,
                    int gathered) {
    attendGroup(model, cache, s, pool, layer, std::span(&query, 1), probe, gathered);
}

void attendChunk(const Model& model, const KvCache& cache, AttentionScratch& s, ThreadPool* pool,
                 int layer, std::span<const AttentionQuery> queries, const AttentionProbe& probe,
                 int gathered) {
    constexpr size_t kGroup = KernelTable::kMaxScoreTokens;
    for (size_t first = 0; first < queries.size(); first += kGroup)
        attendGroup(model, cache, s, pool, layer,
                    queries.subspan(first, std::min(kGroup, queries.size() - first)), probe,
                    gathered);
}

} // namespace sinkscope
