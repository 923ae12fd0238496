#include "model/transformer.h"

#include "model/kernels/ggml_float.h"
#include "model/ops.h"

#include <algorithm>
#include <cstring>

namespace sinkscope {

namespace {

size_t queryWidth(const ModelConfig& c) {
    return static_cast<size_t>(c.nHead) * c.headDim;
}

} // namespace

RunState::RunState(const ModelConfig& c, int slotCount, int threads)
    : pool(threads), attention(c, slotCount), x(c.nEmbd), xn(c.nEmbd), q(queryWidth(c)),
      qRaw(queryWidth(c)), k(c.kvDim()), v(c.kvDim()), attnOut(queryWidth(c)), gate(c.nFf),
      up(c.nFf), blockOut(c.nEmbd), keptProbe(slotCount), probe(slotCount), logits(c.nVocab),
      ropeCos(c.headDim / 2), ropeSin(c.headDim / 2) {
    keptSlots.reserve(slotCount);
}

void ChunkActivations::reserve(const ModelConfig& c, int tokens) {
    if (tokens <= capacity) return;
    capacity = tokens;
    const auto rows = static_cast<size_t>(tokens);
    for (auto* buffer : {&x, &xn, &blockOut})
        buffer->resize(rows * c.nEmbd);
    for (auto* buffer : {&q, &qRaw, &attnOut})
        buffer->resize(rows * queryWidth(c));
    for (auto* buffer : {&k, &v})
        buffer->resize(rows * c.kvDim());
    for (auto* buffer : {&gate, &up})
        buffer->resize(rows * c.nFf);
    for (auto* buffer : {&ropeCos, &ropeSin})
        buffer->resize(rows * (c.headDim / 2));
}

void PrefillChunk::clear() {
    m_tokens.clear();
    m_places.clear();
    m_sinksUsed.clear();
    m_keptBegin.assign(1, 0);
    m_kept.clear();
}

void PrefillChunk::add(const KvCache& cache, int32_t token, const QueryPlacement& where) {
    if (m_keptBegin.empty()) m_keptBegin.push_back(0);
    if (m_tokens.empty()) {
        m_evictionsAfterFirst = cache.evictions();
        m_evictedInside = false;
    } else if (cache.evictions() != m_evictionsAfterFirst) {
        m_evictedInside = true;
    }
    m_tokens.push_back(token);
    m_places.push_back(where);
    m_sinksUsed.push_back(cache.sinksUsed());
    collectKeptSlots(cache, where.position, m_kept);
    m_keptBegin.push_back(static_cast<int>(m_kept.size()));
}

AttentionQuery PrefillChunk::query(int t, float* q, const float* qRaw, float* out, bool probed) {
    const auto begin = static_cast<size_t>(m_keptBegin[t]);
    const auto count = keptOf(t).size();
    m_keptProbe.resize(m_kept.size());
    float* keptProbe = nullptr;
    if (probed) {
        keptProbe = m_keptProbe.data() + begin;
        std::fill_n(keptProbe, count, 0.0f);
    }
    return AttentionQuery{
        m_places[t], std::span(m_kept).subspan(begin, count), m_sinksUsed[t], q, qRaw, out,
        keptProbe};
}

std::span<const int> PrefillChunk::keptOf(int t) const {
    return std::span(m_kept).subspan(static_cast<size_t>(m_keptBegin[t]),
                                     static_cast<size_t>(m_keptBegin[t + 1] - m_keptBegin[t]));
}

bool PrefillChunk::sharesKeptSlots() const {
    if (m_evictedInside || m_tokens.empty()) return false;
    const std::span<const int> last = keptOf(size() - 1);
    for (int t = 0; t + 1 < size(); ++t) {
        const std::span<const int> kept = keptOf(t);
        if (kept.size() > last.size() || !std::equal(kept.begin(), kept.end(), last.begin()))
            return false;
    }
    return true;
}

void PrefillChunk::scatterProbe(int t, std::span<float> probe) const {
    std::fill(probe.begin(), probe.end(), 0.0f);
    for (int i = m_keptBegin[t]; i < m_keptBegin[t + 1]; ++i)
        probe[m_kept[i]] = m_keptProbe[i];
}

namespace {

void addInPlace(float* x, const float* delta, size_t n) {
    for (size_t i = 0; i < n; ++i)
        x[i] += delta[i];
}

// y[n] += bias[n], when there is a bias
void addBias(float* y, const float* bias, int n) {
    if (!bias) return;
    for (int i = 0; i < n; ++i)
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

// One token's q, k, v after their projections: biases, the per-head norm, then RoPE (q keeps an
// unrotated copy in qRaw, when given, for streaming positions).
void finishQkv(const ModelConfig& c, const LayerWeights& lw, float* q, float* k, float* v,
               float* qRaw, const float* cosines, const float* sines) {
    addBias(q, lw.bq, static_cast<int>(queryWidth(c)));
    addBias(k, lw.bk, c.kvDim());
    addBias(v, lw.bv, c.kvDim());
    normalizeHeads(q, c.nHead, c.headDim, lw.qNorm, c.rmsEps);
    normalizeHeads(k, c.nHeadKv, c.headDim, lw.kNorm, c.rmsEps);
    if (qRaw) std::copy_n(q, queryWidth(c), qRaw);
    applyRope(q, c.nHead, c.headDim, c.rope, cosines, sines);
    applyRope(k, c.nHeadKv, c.headDim, c.rope, cosines, sines);
}

void normalizeRows(const float* x, const float* weight, int tokens, const ModelConfig& c,
                   float* out) {
    for (int t = 0; t < tokens; ++t) {
        const size_t row = static_cast<size_t>(t) * c.nEmbd;
        rmsNorm(x + row, weight, c.nEmbd, c.rmsEps, out + row);
    }
}

// Logits of the normalised final stream x[n_embd] into s.logits.
void outputLogits(const Model& model, const float* x, RunState& s) {
    const ModelConfig& c = model.config();
    const ModelWeights& w = model.weights();
    rmsNorm(x, w.outputNorm, c.nEmbd, c.rmsEps, s.xn.data());
    matvec(w.output, s.xn.data(), s.logits.data(), s.pool.get());
    addBias(s.logits.data(), w.outputBias, c.nVocab);
}

} // namespace

void forward(const Model& model, KvCache& cache, RunState& s, int32_t token,
             const QueryPlacement& where, const AttentionProbe& probe) {
    const ModelConfig& c = model.config();
    const ModelWeights& w = model.weights();
    ThreadPool* pool = s.pool.get();
    matrixRow(w.tokenEmbedding, token, s.x.data());
    ropeAngles(c.headDim, where.position, c.ropeBase, w.ropeFreqs, s.ropeCos.data(),
               s.ropeSin.data());
    s.keptSlots.clear();
    collectKeptSlots(cache, where.position, s.keptSlots);
    if (probe.enabled) std::fill_n(s.keptProbe.begin(), s.keptSlots.size(), 0.0f);
    const AttentionQuery query{where,
                               s.keptSlots,
                               cache.sinksUsed(),
                               s.q.data(),
                               s.qRaw.data(),
                               s.attnOut.data(),
                               probe.enabled ? s.keptProbe.data() : nullptr};

    for (int layer = 0; layer < c.nLayer; ++layer) {
        const LayerWeights& lw = w.layers[layer];
        // attention block: norm -> q,k,v -> rope -> cache -> attend -> output projection
        rmsNorm(s.x.data(), lw.attnNorm, c.nEmbd, c.rmsEps, s.xn.data());
        matvec(lw.wq, s.xn.data(), s.q.data(), pool);
        matvec(lw.wk, s.xn.data(), s.k.data(), pool);
        matvec(lw.wv, s.xn.data(), s.v.data(), pool);
        finishQkv(c, lw, s.q.data(), s.k.data(), s.v.data(),
                  where.streaming ? s.qRaw.data() : nullptr, s.ropeCos.data(), s.ropeSin.data());
        cache.writeK(layer, where.slot, s.k.data());
        cache.writeV(layer, where.slot, s.v.data());
        attend(model, cache, s.attention, pool, layer, query, probe);
        matvec(lw.wo, s.attnOut.data(), s.blockOut.data(), pool);
        addInPlace(s.x.data(), s.blockOut.data(), s.x.size());
        // feed-forward block: norm -> SwiGLU -> residual
        rmsNorm(s.x.data(), lw.ffnNorm, c.nEmbd, c.rmsEps, s.xn.data());
        matvec(lw.wGate, s.xn.data(), s.gate.data(), pool);
        matvec(lw.wUp, s.xn.data(), s.up.data(), pool);
        ggml::swiglu(s.gate.data(), s.up.data(), c.nFf);
        matvec(lw.wDown, s.gate.data(), s.blockOut.data(), pool);
        addInPlace(s.x.data(), s.blockOut.data(), s.x.size());
    }
    if (probe.enabled) {
        std::fill(s.probe.begin(), s.probe.end(), 0.0f);
        for (size_t i = 0; i < s.keptSlots.size(); ++i)
            s.probe[s.keptSlots[i]] = s.keptProbe[i];
    }
    outputLogits(model, s.x.data(), s);
}

void forwardChunk(const Model& model, KvCache& cache, RunState& s, PrefillChunk& chunk,
                  const AttentionProbe& probe) {
    const ModelConfig& c = model.config();
    const ModelWeights& w = model.weights();
    const int tokens = chunk.size();
    if (tokens == 0) return;
    ThreadPool* pool = s.pool.get();
    ChunkActivations& a = s.chunk;
    a.reserve(c, tokens);
    const size_t embd = c.nEmbd;
    const size_t qWidth = queryWidth(c);
    const auto kvDim = static_cast<size_t>(c.kvDim());
    const size_t ff = c.nFf;
    const size_t half = c.headDim / 2;
    for (int t = 0; t < tokens; ++t) {
        matrixRow(w.tokenEmbedding, chunk.token(t), a.x.data() + t * embd);
        ropeAngles(c.headDim, chunk.place(t).position, c.ropeBase, w.ropeFreqs,
                   a.ropeCos.data() + t * half, a.ropeSin.data() + t * half);
    }
    const bool shared = chunk.sharesKeptSlots();
    std::vector<AttentionQuery> queries;
    queries.reserve(tokens);
    for (int t = 0; t < tokens; ++t)
        queries.push_back(chunk.query(t, a.q.data() + t * qWidth, a.qRaw.data() + t * qWidth,
                                      a.attnOut.data() + t * qWidth, probe.enabled));

    for (int layer = 0; layer < c.nLayer; ++layer) {
        const LayerWeights& lw = w.layers[layer];
        // attention block: the projections over the chunk, then each token's write and attention
        normalizeRows(a.x.data(), lw.attnNorm, tokens, c, a.xn.data());
        const Product qkv[] = {{&lw.wq, a.q.data()}, {&lw.wk, a.k.data()}, {&lw.wv, a.v.data()}};
        matmatEach(qkv, a.xn.data(), tokens, pool);
        // Each token's K/V write and attention in order; when the chunk shares its kept slots,
        // every write first and one gather for all.
        for (int t = 0; t < tokens; ++t) {
            const AttentionQuery& query = queries[t];
            float* k = a.k.data() + t * kvDim;
            float* v = a.v.data() + t * kvDim;
            finishQkv(c, lw, query.q, k, v,
                      query.where.streaming ? a.qRaw.data() + t * qWidth : nullptr,
                      a.ropeCos.data() + t * half, a.ropeSin.data() + t * half);
            cache.writeK(layer, query.where.slot, k);
            cache.writeV(layer, query.where.slot, v);
            if (!shared) attend(model, cache, s.attention, pool, layer, query, probe);
        }
        if (shared) {
            const std::span<const int> gathered = chunk.keptOf(tokens - 1);
            gatherSlots(cache, layer, gathered, s.attention, pool);
            attendChunk(model, cache, s.attention, pool, layer, queries, probe,
                        static_cast<int>(gathered.size()));
        }
        matmat(lw.wo, a.attnOut.data(), tokens, a.blockOut.data(), pool);
        addInPlace(a.x.data(), a.blockOut.data(), tokens * embd);
        // feed-forward block over the chunk
        normalizeRows(a.x.data(), lw.ffnNorm, tokens, c, a.xn.data());
        const Product gateUp[] = {{&lw.wGate, a.gate.data()}, {&lw.wUp, a.up.data()}};
        matmatEach(gateUp, a.xn.data(), tokens, pool);
        for (int t = 0; t < tokens; ++t) // per token: swiglu's vector/tail split is per row
            ggml::swiglu(a.gate.data() + t * ff, a.up.data() + t * ff, c.nFf);
        matmat(lw.wDown, a.gate.data(), tokens, a.blockOut.data(), pool);
        addInPlace(a.x.data(), a.blockOut.data(), tokens * embd);
    }
    if (probe.enabled) chunk.scatterProbe(tokens - 1, s.probe);
}

void chunkLogits(const Model& model, RunState& s, int t) {
    outputLogits(model, s.chunk.x.data() + static_cast<size_t>(t) * model.config().nEmbd, s);
}

} // namespace sinkscope
