#include "model/transformer.h"

#include "memory/mask.h"
#include "model/kernels/ggml_float.h"
#include "model/kernels/kernel_table.h"
#include "model/ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace sinkscope {

RunState::RunState(const ModelConfig& c, int slotCount, int threads)
    : pool(threads), x(c.nEmbd), xn(c.nEmbd), q(static_cast<size_t>(c.nHead) * c.headDim),
      qRaw(static_cast<size_t>(c.nHead) * c.headDim), qRotated(c.headDim), k(c.kvDim()),
      v(c.kvDim()), attnOut(static_cast<size_t>(c.nHead) * c.headDim), gate(c.nFf), up(c.nFf),
      blockOut(c.nEmbd), columns(static_cast<size_t>(slotCount) * c.kvDim()),
      scores(static_cast<size_t>(c.nHead) * slotCount), keptProbe(slotCount), probe(slotCount),
      logits(c.nVocab), ropeCos(c.headDim / 2), ropeSin(c.headDim / 2), foldCos(c.headDim / 2),
      foldSin(c.headDim / 2), keyRow(c.kvDim()) {
    keptSlots.reserve(slotCount);
}

namespace {

// The slots the query at `position` may read: exactly those keep() admits. Only occupied slots
// are visited: the sinks in use, then the part of the ring written so far.
void collectKeptSlots(const KvCache& cache, int64_t position, RunState& s) {
    s.keptSlots.clear();
    const KvCacheShape& shape = cache.shape();
    const auto& slots = cache.slotInfos();
    const auto admit = [&](int i) {
        const SlotInfo& slot = slots[i];
        if (keep(position, slot.position, shape.window, slot.kind == SlotKind::Sink))
            s.keptSlots.push_back(i);
    };
    for (int i = 0; i < cache.sinksUsed(); ++i)
        admit(i);
    const int ringUsed = static_cast<int>(std::min<int64_t>(cache.ringWrites(), shape.window));
    for (int i = shape.sinkSlots; i < shape.sinkSlots + ringUsed; ++i)
        admit(i);
}

// Streaming positions (section 5): sink j of S is scored at distance min(q - p_j, W + S - 1 - j).
// The kept sinks whose distance folds are scored again with the query rotated to
// p_j + W + S - 1 - j (stored keys are never re-rotated). Sinks occupy slots [0, S) in order, so
// slot j is sink j.
void rescoreFoldedSinks(const Model& model, const KvCache& cache, RunState& s, int layer,
                        int64_t position, bool halfPrecision) {
    const ModelConfig& c = model.config();
    const int kept = static_cast<int>(s.keptSlots.size());
    const int groupSize = c.nHead / c.nHeadKv;
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.headDim));
    for (int i = 0; i < kept && s.keptSlots[i] < cache.sinksUsed(); ++i) {
        const int sink = s.keptSlots[i];
        const int64_t folded = cache.shape().window + cache.sinksUsed() - 1 - sink;
        const int64_t sinkPosition = cache.slotInfos()[sink].position;
        if (position - sinkPosition <= folded) continue;
        cache.readK(layer, sink, s.keyRow.data());
        ropeAngles(c.headDim, sinkPosition + folded, c.ropeBase, model.weights().ropeFreqs,
                   s.foldCos.data(), s.foldSin.data());
        for (int h = 0; h < c.nHead; ++h) {
            std::copy_n(s.qRaw.data() + static_cast<size_t>(h) * c.headDim, c.headDim,
                        s.qRotated.data());
            applyRope(s.qRotated.data(), 1, c.headDim, c.rope, s.foldCos.data(), s.foldSin.data());
            if (halfPrecision) roundToHalf(s.qRotated.data(), s.qRotated.size());
            const float* key = s.keyRow.data() + static_cast<size_t>(h / groupSize) * c.headDim;
            s.scores[static_cast<size_t>(h) * kept + i] =
                ggml::laneDot16(s.qRotated.data(), key, c.headDim) * scale;
        }
    }
}

// Attention of every head over the kept slots; leaves the result in s.attnOut. The heads are
// split among the pool's threads.
void attend(const Model& model, const KvCache& cache, RunState& s, int layer,
            const QueryPlacement& where, const AttentionProbe& probe) {
    const ModelConfig& c = model.config();
    const KernelTable& kernel = kernels();
    const int kept = static_cast<int>(s.keptSlots.size());
    const AttentionShape shape{kept, c.headDim, c.nHead / c.nHeadKv, c.kvDim()};
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.headDim));
    // With an f16 cache, attention follows ggml's f16 path (llama.cpp's default cache type): the
    // query is rounded to f16 for the K dot products and the softmax weights for the V sum.
    const bool halfPrecision = cache.shape().kvBits == 16;
    if (halfPrecision) roundToHalf(s.q.data(), s.q.size());

    // scores[h][i] = (q_h . K[i]) * scale, with the kept keys as columns: [kv_dim][kept]. The
    // dots and the softmax run in llama.cpp's float order (model/kernels/ggml_float.h).
    cache.gatherK(layer, s.keptSlots, s.columns.data());
    const int64_t work = int64_t{kept} * c.nHead * c.headDim;
    s.pool->forRanges(
        c.nHead, 1,
        [&](int64_t begin, int64_t end) {
            kernel.attentionScores(shape, s.q.data(), s.columns.data(), scale, s.scores.data(),
                                   static_cast<int>(begin), static_cast<int>(end));
        },
        work);
    if (where.streaming) rescoreFoldedSinks(model, cache, s, layer, where.position, halfPrecision);

    // out[h][d] = weights_h . V[:, d], with the kept values as rows: [kept][kv_dim]
    const auto kvDim = static_cast<size_t>(c.kvDim());
    for (int i = 0; i < kept; ++i)
        cache.readV(layer, s.keptSlots[i], s.columns.data() + static_cast<size_t>(i) * kvDim);
    s.pool->forRanges(
        c.nHead, 1,
        [&](int64_t begin, int64_t end) {
            float* weights = s.scores.data() + static_cast<size_t>(begin) * kept;
            for (int64_t h = begin; h < end; ++h)
                kernel.softmaxRow(weights + static_cast<size_t>(h - begin) * kept, kept);
            if (halfPrecision) roundToHalf(weights, static_cast<size_t>(end - begin) * kept);
            kernel.attentionValues(shape, s.scores.data(), s.columns.data(), s.attnOut.data(),
                                   static_cast<int>(begin), static_cast<int>(end));
        },
        work);

    // The probed heads' weights add up in kept order (contiguous); forward() scatters the sum
    // to physical slots once per token.
    if (probe.enabled && (probe.layer < 0 || probe.layer == layer)) {
        const int layersProbed = probe.layer < 0 ? c.nLayer : 1;
        const int headsProbed = probe.head < 0 ? c.nHead : 1;
        const float share = 1.0f / static_cast<float>(layersProbed * headsProbed);
        for (int h = 0; h < c.nHead; ++h) {
            if (probe.head >= 0 && probe.head != h) continue;
            axpy(share, s.scores.data() + static_cast<size_t>(h) * kept, s.keptProbe.data(), kept);
        }
    }
}

void feedForward(const LayerWeights& w, RunState& s, int nFf) {
    matvec(w.wGate, s.xn.data(), s.gate.data(), s.pool.get());
    matvec(w.wUp, s.xn.data(), s.up.data(), s.pool.get());
    ggml::swiglu(s.gate.data(), s.up.data(), nFf);
    matvec(w.wDown, s.gate.data(), s.blockOut.data(), s.pool.get());
}

void addInPlace(std::vector<float>& x, const std::vector<float>& delta) {
    for (size_t i = 0; i < x.size(); ++i)
        x[i] += delta[i];
}

// y[n] += bias[n], when there is a bias
void addBias(std::vector<float>& y, const float* bias) {
    if (!bias) return;
    for (size_t i = 0; i < y.size(); ++i)
        y[i] += bias[i];
}

// Each head of vec ([heads][headDim]) RMS-normalised in place and scaled by weight[headDim]
// (qwen3's query/key norm); nothing when weight is nullptr.
void normalizeHeads(float* vec, int heads, int headDim, const float* weight, float eps) {
    if (!weight) return;
    for (int h = 0; h < heads; ++h) {
        float* head = vec + static_cast<size_t>(h) * headDim;
        rmsNorm(head, weight, headDim, eps, head);
    }
}

// q, k, v of one token: projections, biases, the per-head norm, then RoPE (q keeps an unrotated
// copy in qRaw for streaming positions).
void projectQkv(const ModelConfig& c, const LayerWeights& lw, RunState& s,
                const QueryPlacement& where) {
    matvec(lw.wq, s.xn.data(), s.q.data(), s.pool.get());
    matvec(lw.wk, s.xn.data(), s.k.data(), s.pool.get());
    matvec(lw.wv, s.xn.data(), s.v.data(), s.pool.get());
    addBias(s.q, lw.bq);
    addBias(s.k, lw.bk);
    addBias(s.v, lw.bv);
    normalizeHeads(s.q.data(), c.nHead, c.headDim, lw.qNorm, c.rmsEps);
    normalizeHeads(s.k.data(), c.nHeadKv, c.headDim, lw.kNorm, c.rmsEps);
    if (where.streaming) s.qRaw = s.q;
    applyRope(s.q.data(), c.nHead, c.headDim, c.rope, s.ropeCos.data(), s.ropeSin.data());
    applyRope(s.k.data(), c.nHeadKv, c.headDim, c.rope, s.ropeCos.data(), s.ropeSin.data());
}

} // namespace

void forward(const Model& model, KvCache& cache, RunState& s, int32_t token,
             const QueryPlacement& where, const AttentionProbe& probe) {
    const ModelConfig& c = model.config();
    const ModelWeights& w = model.weights();
    matrixRow(w.tokenEmbedding, token, s.x.data());
    ropeAngles(c.headDim, where.position, c.ropeBase, w.ropeFreqs, s.ropeCos.data(),
               s.ropeSin.data());
    collectKeptSlots(cache, where.position, s);
    if (probe.enabled) std::fill_n(s.keptProbe.begin(), s.keptSlots.size(), 0.0f);

    for (int layer = 0; layer < c.nLayer; ++layer) {
        const LayerWeights& lw = w.layers[layer];
        // attention block: norm -> q,k,v -> rope -> cache -> attend -> output projection
        rmsNorm(s.x.data(), lw.attnNorm, c.nEmbd, c.rmsEps, s.xn.data());
        projectQkv(c, lw, s, where);
        cache.writeK(layer, where.slot, s.k.data());
        cache.writeV(layer, where.slot, s.v.data());
        attend(model, cache, s, layer, where, probe);
        matvec(lw.wo, s.attnOut.data(), s.blockOut.data(), s.pool.get());
        addInPlace(s.x, s.blockOut);
        // feed-forward block: norm -> SwiGLU -> residual
        rmsNorm(s.x.data(), lw.ffnNorm, c.nEmbd, c.rmsEps, s.xn.data());
        feedForward(lw, s, c.nFf);
        addInPlace(s.x, s.blockOut);
    }
    if (probe.enabled) {
        std::fill(s.probe.begin(), s.probe.end(), 0.0f);
        for (size_t i = 0; i < s.keptSlots.size(); ++i)
            s.probe[s.keptSlots[i]] = s.keptProbe[i];
    }
    rmsNorm(s.x.data(), w.outputNorm, c.nEmbd, c.rmsEps, s.xn.data());
    matvec(w.output, s.xn.data(), s.logits.data(), s.pool.get());
    addBias(s.logits, w.outputBias);
}

} // namespace sinkscope
