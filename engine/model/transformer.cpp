#include "model/transformer.h"

#include "memory/mask.h"
#include "model/ggml_float.h"
#include "model/ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace sinkscope {

RunState::RunState(const ModelConfig& c, int slotCount)
    : x(c.nEmbd), xn(c.nEmbd), q(static_cast<size_t>(c.nHead) * c.headDim),
      qRaw(static_cast<size_t>(c.nHead) * c.headDim), qRotated(c.headDim), k(c.kvDim()),
      v(c.kvDim()), attnOut(static_cast<size_t>(c.nHead) * c.headDim), gate(c.nFf), up(c.nFf),
      blockOut(c.nEmbd), columns(static_cast<size_t>(slotCount) * c.kvDim()),
      scores(static_cast<size_t>(c.nHead) * slotCount), keptProbe(slotCount), probe(slotCount),
      logits(c.nVocab) {
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
// slot j is sink j. s.columns holds the kept keys as rows.
void rescoreFoldedSinks(const Model& model, const KvCache& cache, RunState& s, int64_t position,
                        bool halfPrecision) {
    const ModelConfig& c = model.config();
    const int kept = static_cast<int>(s.keptSlots.size());
    const int groupSize = c.nHead / c.nHeadKv;
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.headDim));
    for (int i = 0; i < kept && s.keptSlots[i] < cache.sinksUsed(); ++i) {
        const int sink = s.keptSlots[i];
        const int64_t folded = cache.shape().window + cache.sinksUsed() - 1 - sink;
        const int64_t sinkPosition = cache.slotInfos()[sink].position;
        if (position - sinkPosition <= folded) continue;
        const float* keyRow = s.columns.data() + static_cast<size_t>(i) * c.kvDim();
        for (int h = 0; h < c.nHead; ++h) {
            std::copy_n(s.qRaw.data() + static_cast<size_t>(h) * c.headDim, c.headDim,
                        s.qRotated.data());
            rope(s.qRotated.data(), 1, c.headDim, sinkPosition + folded, c.ropeBase, c.rope,
                 model.weights().ropeFreqs);
            if (halfPrecision) roundToHalf(s.qRotated.data(), s.qRotated.size());
            const float* key = keyRow + static_cast<size_t>(h / groupSize) * c.headDim;
            s.scores[static_cast<size_t>(h) * kept + i] =
                ggml::laneDot16(s.qRotated.data(), key, c.headDim) * scale;
        }
    }
}

// Attention of every head over the kept slots; leaves the result in s.attnOut.
void attend(const Model& model, const KvCache& cache, RunState& s, int layer,
            const QueryPlacement& where, const AttentionProbe& probe) {
    const ModelConfig& c = model.config();
    const int kept = static_cast<int>(s.keptSlots.size());
    const int headDim = c.headDim;
    const int groupSize = c.nHead / c.nHeadKv;
    const float scale = 1.0f / std::sqrt(static_cast<float>(headDim));
    // With an f16 cache, attention follows ggml's f16 path (llama.cpp's default cache type): the
    // query is rounded to f16 for the K dot products and the softmax weights for the V sum.
    const bool halfPrecision = cache.shape().kvBits == 16;
    if (halfPrecision) roundToHalf(s.q.data(), s.q.size());

    // scores[h][i] = (q_h . K[i]) * scale, with the kept keys as rows: [kept][kv_dim]. The dots
    // and the softmax run in llama.cpp's float order (model/ggml_float.h).
    const size_t kvDim = static_cast<size_t>(c.kvDim());
    for (int i = 0; i < kept; ++i) {
        float* keyRow = s.columns.data() + static_cast<size_t>(i) * kvDim;
        cache.readK(layer, s.keptSlots[i], keyRow);
        for (int h = 0; h < c.nHead; ++h) {
            const float* query = s.q.data() + static_cast<size_t>(h) * headDim;
            const float* key = keyRow + static_cast<size_t>(h / groupSize) * headDim;
            s.scores[static_cast<size_t>(h) * kept + i] =
                ggml::laneDot16(query, key, headDim) * scale;
        }
    }
    if (where.streaming) rescoreFoldedSinks(model, cache, s, where.position, halfPrecision);
    for (int h = 0; h < c.nHead; ++h)
        ggml::softmaxRow(s.scores.data() + static_cast<size_t>(h) * kept, kept);
    if (halfPrecision) roundToHalf(s.scores.data(), static_cast<size_t>(c.nHead) * kept);

    // out[h][d] = weights_h . V[:, d] over the head's columns of V: [kv_dim][kept]
    cache.gatherV(layer, s.keptSlots, s.columns.data());
    for (int h = 0; h < c.nHead; ++h) {
        const float* values =
            s.columns.data() + static_cast<size_t>(h / groupSize) * headDim * kept;
        const float* weights = s.scores.data() + static_cast<size_t>(h) * kept;
        float* out = s.attnOut.data() + static_cast<size_t>(h) * headDim;
        for (int d = 0; d < headDim; ++d)
            out[d] = ggml::laneDot16(weights, values + static_cast<size_t>(d) * kept, kept);
    }

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
    matvec(w.wGate, s.xn.data(), s.gate.data());
    matvec(w.wUp, s.xn.data(), s.up.data());
    ggml::swiglu(s.gate.data(), s.up.data(), nFf);
    matvec(w.wDown, s.gate.data(), s.blockOut.data());
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
void projectQkv(const ModelConfig& c, const ModelWeights& w, const LayerWeights& lw, RunState& s,
                const QueryPlacement& where) {
    matvec(lw.wq, s.xn.data(), s.q.data());
    matvec(lw.wk, s.xn.data(), s.k.data());
    matvec(lw.wv, s.xn.data(), s.v.data());
    addBias(s.q, lw.bq);
    addBias(s.k, lw.bk);
    addBias(s.v, lw.bv);
    normalizeHeads(s.q.data(), c.nHead, c.headDim, lw.qNorm, c.rmsEps);
    normalizeHeads(s.k.data(), c.nHeadKv, c.headDim, lw.kNorm, c.rmsEps);
    if (where.streaming) s.qRaw = s.q;
    rope(s.q.data(), c.nHead, c.headDim, where.position, c.ropeBase, c.rope, w.ropeFreqs);
    rope(s.k.data(), c.nHeadKv, c.headDim, where.position, c.ropeBase, c.rope, w.ropeFreqs);
}

} // namespace

void forward(const Model& model, KvCache& cache, RunState& s, int32_t token,
             const QueryPlacement& where, const AttentionProbe& probe) {
    const ModelConfig& c = model.config();
    const ModelWeights& w = model.weights();
    matrixRow(w.tokenEmbedding, token, s.x.data());
    collectKeptSlots(cache, where.position, s);
    if (probe.enabled) std::fill_n(s.keptProbe.begin(), s.keptSlots.size(), 0.0f);

    for (int layer = 0; layer < c.nLayer; ++layer) {
        const LayerWeights& lw = w.layers[layer];
        // attention block: norm -> q,k,v -> rope -> cache -> attend -> output projection
        rmsNorm(s.x.data(), lw.attnNorm, c.nEmbd, c.rmsEps, s.xn.data());
        projectQkv(c, w, lw, s, where);
        cache.writeK(layer, where.slot, s.k.data());
        cache.writeV(layer, where.slot, s.v.data());
        attend(model, cache, s, layer, where, probe);
        matvec(lw.wo, s.attnOut.data(), s.blockOut.data());
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
    matvec(w.output, s.xn.data(), s.logits.data());
    addBias(s.logits, w.outputBias);
}

} // namespace sinkscope
