#include "model/attention.h"

#include "memory/mask.h"
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
      scoreRuns(KernelTable::kMaxScoreTokens),
      qRotated(static_cast<size_t>(KernelTable::kMaxScoreTokens) * c.nHead * c.headDim),
      foldCos(c.headDim / 2), foldSin(c.headDim / 2) {
    for (std::vector<ScoreRun>& runs : scoreRuns)
        runs.reserve(4); // a BOS and a tool block, folded or not, and the ring
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

// The runs of `query`'s kept slots that one rotation of the query scores (section 5). Sinks
// occupy slots [0, S) in order, so slot j is sink j; a kept sink whose distance q - p_j exceeds
// W + S - 1 - j is scored with the query rotated to p_j + W + S - 1 - j (stored keys are never
// re-rotated), every other slot with the query as placed. Sinks placed one after another share
// a rotation (the stream's first S tokens, p_j = j, all fold to W + S - 1): a pinned tool block
// is one run however long, and each kept slot is scored once.
void findScoreRuns(const KvCache& cache, const AttentionQuery& query, std::vector<ScoreRun>& runs) {
    runs.clear();
    const auto extend = [&](int first, int end, int64_t rotatedTo) {
        if (!runs.empty() && runs.back().rotatedTo == rotatedTo)
            runs.back().end = end;
        else
            runs.push_back(ScoreRun{first, end, rotatedTo});
    };
    const int kept = static_cast<int>(query.keptSlots.size());
    int i = 0;
    if (query.where.streaming)
        for (; i < kept && query.keptSlots[i] < query.sinksUsed; ++i) {
            const int sink = query.keptSlots[i];
            const int64_t folded = cache.shape().window + query.sinksUsed - 1 - sink;
            const int64_t sinkPosition = cache.slotInfos()[sink].position;
            extend(i, i + 1,
                   query.where.position - sinkPosition > folded ? sinkPosition + folded
                                                                : ScoreRun::kUnrotated);
        }
    if (i < kept) extend(i, kept, ScoreRun::kUnrotated);
}

// Each run's query: the query as placed, or its unrotated copy rotated for the run's folded
// sinks into s.qRotated (rounded to f16 as the placed query is), once a token and rotation.
void rotateFoldedQueries(const Model& model, AttentionScratch& s,
                         std::span<const AttentionQuery> queries, bool halfPrecision) {
    const ModelConfig& c = model.config();
    const size_t width = static_cast<size_t>(c.nHead) * c.headDim;
    size_t rotations = 0;
    for (size_t t = 0; t < queries.size(); ++t)
        for (const ScoreRun& run : s.scoreRuns[t])
            rotations += run.rotatedTo != ScoreRun::kUnrotated;
    if (s.qRotated.size() < rotations * width) s.qRotated.resize(rotations * width);
    float* next = s.qRotated.data();
    int64_t anglesAt = ScoreRun::kUnrotated; // the position s.foldCos and s.foldSin rotate to
    for (size_t t = 0; t < queries.size(); ++t) {
        const float* rotated = nullptr;
        int64_t rotatedTo = ScoreRun::kUnrotated; // what `rotated` holds
        for (ScoreRun& run : s.scoreRuns[t]) {
            if (run.rotatedTo == ScoreRun::kUnrotated) {
                run.query = queries[t].q;
                continue;
            }
            if (run.rotatedTo != rotatedTo) {
                if (run.rotatedTo != anglesAt) {
                    ropeAngles(c.headDim, run.rotatedTo, c.ropeBase, model.weights().ropeFreqs,
                               s.foldCos.data(), s.foldSin.data());
                    anglesAt = run.rotatedTo;
                }
                std::copy_n(queries[t].qRaw, width, next);
                applyRope(next, c.nHead, c.headDim, c.rope, s.foldCos.data(), s.foldSin.data());
                if (halfPrecision) roundToHalf(next, width);
                rotated = next;
                rotatedTo = run.rotatedTo;
                next += width;
            }
            run.query = rotated;
        }
    }
}

// Whether every query of the group has the first one's runs (the last run ending at each
// query's own kept count): then each run is one pass over its keys for all of them.
bool runsShared(const AttentionScratch& s, int tokens) {
    const std::vector<ScoreRun>& first = s.scoreRuns[0];
    for (int t = 1; t < tokens; ++t) {
        const std::vector<ScoreRun>& runs = s.scoreRuns[static_cast<size_t>(t)];
        if (runs.size() != first.size()) return false;
        for (size_t r = 0; r < runs.size(); ++r)
            if (runs[r].first != first[r].first || runs[r].rotatedTo != first[r].rotatedTo ||
                (r + 1 < runs.size() && runs[r].end != first[r].end))
                return false;
    }
    return true;
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
// slots in scratch: their scores [n_head][kept_t] (into scratch.tokenScores), each run of slots
// with its rotation of the query, the softmax and the weighted values, heads split among the
// pool's threads.
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
    int kept[kGroup];
    float* scores[kGroup];
    float* out[kGroup];
    int64_t work = 0;
    for (int t = 0; t < tokens; ++t) {
        const AttentionQuery& query = queries[static_cast<size_t>(t)];
        if (halfPrecision) roundToHalf(query.q, static_cast<size_t>(c.nHead) * c.headDim);
        kept[t] = static_cast<int>(query.keptSlots.size());
        scores[t] = s.tokenScores.data() + static_cast<size_t>(t) * c.nHead * gathered;
        out[t] = query.out;
        work += int64_t{kept[t]} * c.nHead * c.headDim * ThreadPool::kFloatWorkWeight;
        findScoreRuns(cache, query, s.scoreRuns[static_cast<size_t>(t)]);
    }
    rotateFoldedQueries(model, s, queries, halfPrecision);
    const bool shared = runsShared(s, tokens);
    // scores[h][i] = (q_h . K[i]) * scale, with the keys as columns: [kv_dim][slotCount], one
    // kernel call a run of slots (for all the tokens when they share their runs). The dots and
    // the softmax run in llama.cpp's float order (model/kernels/ggml_float.h).
    pool->forRanges(
        c.nHead, 1,
        [&](int64_t begin, int64_t end) {
            // tokens [t0, t0 + count), whose runs are token t0's
            const auto scoreRuns = [&](int t0, int count) {
                const std::vector<ScoreRun>& runs = s.scoreRuns[static_cast<size_t>(t0)];
                for (size_t r = 0; r < runs.size(); ++r) {
                    AttentionShape run = shape;
                    run.scoreFirst = runs[r].first;
                    if (r + 1 < runs.size()) run.scoreEnd = runs[r].end;
                    const float* runQueries[kGroup];
                    for (int t = 0; t < count; ++t)
                        runQueries[t] = s.scoreRuns[static_cast<size_t>(t0 + t)][r].query;
                    kernel.attentionScoresTokens(run, count, runQueries, kept + t0,
                                                 decoded.columns.data(), scale, scores + t0,
                                                 static_cast<int>(begin), static_cast<int>(end));
                }
            };
            if (shared)
                scoreRuns(0, tokens);
            else
                for (int t = 0; t < tokens; ++t)
                    scoreRuns(t, 1);
        },
        work);
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
