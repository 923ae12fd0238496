#include "transformer.h"

#include "ggml_types.h"
#include "mask.h"
#include "ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace sinkscope {

RunState::RunState(const ModelConfig& c, int slotCount)
    : x(c.nEmbd), xn(c.nEmbd), q(static_cast<size_t>(c.nHead) * c.headDim),
      qRaw(static_cast<size_t>(c.nHead) * c.headDim), qRotated(c.headDim), k(c.kvDim()),
      v(c.kvDim()), attnOut(static_cast<size_t>(c.nHead) * c.headDim), gate(c.nFf), up(c.nFf),
      blockOut(c.nEmbd), keyRow(c.kvDim()), scores(static_cast<size_t>(c.nHead) * slotCount),
      probe(slotCount), logits(c.nVocab) {
    keptSlots.reserve(slotCount);
}

namespace {

// The slots the query at `position` may read: exactly those keep() admits.
void collectKeptSlots(const KvCache& cache, int64_t position, RunState& s) {
    s.keptSlots.clear();
    const auto& slots = cache.slotInfos();
    for (int i = 0; i < static_cast<int>(slots.size()); ++i) {
        const SlotInfo& slot = slots[i];
        if (slot.kind != SlotKind::Empty &&
            keep(position, slot.position, cache.shape().window, slot.kind == SlotKind::Sink))
            s.keptSlots.push_back(i);
    }
}

// Streaming positions (section 5): sink j of S is scored at distance min(q - p_j, W + S - 1 - j).
// Returns the position the query must be rotated to for that, or -1 when its own position serves.
int64_t streamingQueryPosition(const KvCache& cache, const SlotInfo& sink, int sinkIndex,
                               int64_t position) {
    const int64_t folded = cache.shape().window + cache.sinksUsed() - 1 - sinkIndex;
    if (position - sink.position <= folded)
        return -1;
    return sink.position + folded;
}

// With an f16 cache, attention follows ggml's f16 path (llama.cpp's default cache type): the query
// is rounded to f16 for the K dot products and the softmax weights for the V sum.
void roundToHalf(float* values, size_t count) {
    for (size_t i = 0; i < count; ++i)
        values[i] = fp16ToFp32(fp32ToFp16(values[i]));
}

// Attention of every head over the kept slots; leaves the result in s.attnOut.
void attend(const Model& model, const KvCache& cache, RunState& s, int layer,
            const QueryPlacement& where, const AttentionProbe& probe) {
    const ModelConfig& c = model.config();
    const int kept = static_cast<int>(s.keptSlots.size());
    const int groupSize = c.nHead / c.nHeadKv;
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.headDim));
    const bool halfPrecision = cache.shape().kvBits == 16;
    if (halfPrecision)
        roundToHalf(s.q.data(), s.q.size());

    for (int i = 0; i < kept; ++i) {
        const int slot = s.keptSlots[i];
        const SlotInfo& info = cache.slotInfos()[slot];
        cache.readK(layer, slot, s.keyRow.data());
        const int64_t foldTo = where.streaming && info.kind == SlotKind::Sink
                                   ? streamingQueryPosition(cache, info, slot, where.position)
                                   : -1;
        for (int h = 0; h < c.nHead; ++h) {
            const float* query = s.q.data() + static_cast<size_t>(h) * c.headDim;
            if (foldTo >= 0) {
                std::copy_n(s.qRaw.data() + static_cast<size_t>(h) * c.headDim, c.headDim,
                            s.qRotated.data());
                rope(s.qRotated.data(), 1, c.headDim, foldTo, c.ropeBase, c.rope);
                if (halfPrecision)
                    roundToHalf(s.qRotated.data(), s.qRotated.size());
                query = s.qRotated.data();
            }
            const float* key = s.keyRow.data() + static_cast<size_t>(h / groupSize) * c.headDim;
            s.scores[static_cast<size_t>(h) * kept + i] = dot(query, key, c.headDim) * scale;
        }
    }
    for (int h = 0; h < c.nHead; ++h)
        softmax(s.scores.data() + static_cast<size_t>(h) * kept, kept);
    if (halfPrecision)
        roundToHalf(s.scores.data(), static_cast<size_t>(c.nHead) * kept);

    std::fill(s.attnOut.begin(), s.attnOut.end(), 0.0f);
    for (int i = 0; i < kept; ++i) {
        cache.readV(layer, s.keptSlots[i], s.keyRow.data());
        for (int h = 0; h < c.nHead; ++h) {
            const float weight = s.scores[static_cast<size_t>(h) * kept + i];
            const float* value = s.keyRow.data() + static_cast<size_t>(h / groupSize) * c.headDim;
            float* out = s.attnOut.data() + static_cast<size_t>(h) * c.headDim;
            for (int d = 0; d < c.headDim; ++d)
                out[d] += weight * value[d];
        }
    }

    if (probe.enabled && (probe.layer < 0 || probe.layer == layer)) {
        const int layersProbed = probe.layer < 0 ? c.nLayer : 1;
        const int headsProbed = probe.head < 0 ? c.nHead : 1;
        const float share = 1.0f / static_cast<float>(layersProbed * headsProbed);
        for (int h = 0; h < c.nHead; ++h) {
            if (probe.head >= 0 && probe.head != h)
                continue;
            for (int i = 0; i < kept; ++i)
                s.probe[s.keptSlots[i]] += share * s.scores[static_cast<size_t>(h) * kept + i];
        }
    }
}

void feedForward(const LayerWeights& w, RunState& s, int nFf) {
    matvec(w.wGate, s.xn.data(), s.gate.data());
    matvec(w.wUp, s.xn.data(), s.up.data());
    swiglu(s.gate.data(), s.up.data(), nFf);
    matvec(w.wDown, s.gate.data(), s.blockOut.data());
}

void addInPlace(std::vector<float>& x, const std::vector<float>& delta) {
    for (size_t i = 0; i < x.size(); ++i)
        x[i] += delta[i];
}

} // namespace

void forward(const Model& model, KvCache& cache, RunState& s, int32_t token,
             const QueryPlacement& where, const AttentionProbe& probe) {
    const ModelConfig& c = model.config();
    const ModelWeights& w = model.weights();
    std::copy_n(w.tokenEmbedding.data + static_cast<size_t>(token) * c.nEmbd, c.nEmbd,
                s.x.data());
    collectKeptSlots(cache, where.position, s);
    std::fill(s.probe.begin(), s.probe.end(), 0.0f);

    for (int layer = 0; layer < c.nLayer; ++layer) {
        const LayerWeights& lw = w.layers[layer];
        // attention block: norm -> q,k,v -> rope -> cache -> attend -> output projection
        rmsNorm(s.x.data(), lw.attnNorm, c.nEmbd, c.rmsEps, s.xn.data());
        matvec(lw.wq, s.xn.data(), s.q.data());
        matvec(lw.wk, s.xn.data(), s.k.data());
        matvec(lw.wv, s.xn.data(), s.v.data());
        if (where.streaming)
            s.qRaw = s.q;
        rope(s.q.data(), c.nHead, c.headDim, where.position, c.ropeBase, c.rope);
        rope(s.k.data(), c.nHeadKv, c.headDim, where.position, c.ropeBase, c.rope);
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
    rmsNorm(s.x.data(), w.outputNorm, c.nEmbd, c.rmsEps, s.xn.data());
    matvec(w.output, s.xn.data(), s.logits.data());
}

} // namespace sinkscope
