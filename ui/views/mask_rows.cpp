#include "views/mask_rows.h"

#include <algorithm>
#include <climits>
#include <cmath>

namespace sinkscope::views {

namespace {

constexpr int32_t kUnknownToken = INT32_MIN; // no snapshot named this position's token yet

int64_t windowStart(int64_t q, int64_t window) {
    return std::max<int64_t>(0, q - window + 1);
}

} // namespace

void MaskRows::add(const StepSnapshot& snapshot) {
    const int64_t q = snapshot.queryPosition;
    if (q < 0) return;
    int64_t highest = q;
    for (const SlotView& slot : snapshot.cacheSlots)
        highest = std::max(highest, slot.position);
    growTo(highest + 1, snapshot.effectiveWindow);

    for (size_t i = 0; i < snapshot.cacheSlots.size(); ++i) {
        const SlotView& slot = snapshot.cacheSlots[i];
        if (slot.position >= 0)
            learnPosition(slot.position, slot.token, slot.piece, int(i),
                          slot.kind == SlotKind::Sink);
    }
    learnPosition(q, snapshot.queryToken, snapshot.queryPiece, snapshot.querySlot, false);

    Row& row = m_rows[size_t(q)];
    row.window = snapshot.effectiveWindow;
    row.recorded = true;
    row.probeLayer = int16_t(snapshot.attentionLayer);
    row.probeHead = int16_t(snapshot.attentionHead);
    row.weights.clear();
    row.maxWeight = 0;
    if (snapshot.hasAttention) recordWeights(row, snapshot);
}

void MaskRows::clear() {
    m_rows = {};
    m_pieces = {};
    m_tokens = {};
    m_slots = {};
    m_sinkRanks = {};
    m_sinkPositions = {};
}

void MaskRows::growTo(int64_t count, int64_t gapWindow) {
    if (count <= positionCount()) return;
    Row gap;
    gap.window = gapWindow;
    m_rows.resize(size_t(count), gap);
    m_pieces.resize(size_t(count));
    m_tokens.resize(size_t(count), kUnknownToken);
    m_slots.resize(size_t(count), -1);
    m_sinkRanks.resize(size_t(count), -1);
}

void MaskRows::learnPosition(int64_t position, int32_t token, const std::string& piece, int slot,
                             bool sink) {
    const auto index = size_t(position);
    if (m_tokens[index] != token || (m_pieces[index].isEmpty() && !piece.empty())) {
        m_tokens[index] = token;
        m_pieces[index] = QString::fromUtf8(piece.data(), qsizetype(piece.size()));
    }
    if (slot >= 0) m_slots[index] = slot;
    if (sink && m_sinkRanks[index] < 0) {
        // Sinks arrive in order, so this is an append; an earlier position shifts later ranks.
        const auto at = m_sinkPositions.insert(
            std::lower_bound(m_sinkPositions.begin(), m_sinkPositions.end(), position), position);
        for (auto it = at; it != m_sinkPositions.end(); ++it)
            m_sinkRanks[size_t(*it)] = int32_t(it - m_sinkPositions.begin());
    }
}

void MaskRows::recordWeights(Row& row, const StepSnapshot& snapshot) const {
    const int64_t q = snapshot.queryPosition;
    const int64_t start = windowStart(q, row.window);
    row.outsideSinks =
        int32_t(std::lower_bound(m_sinkPositions.begin(), m_sinkPositions.end(), start) -
                m_sinkPositions.begin());
    row.weights.assign(size_t(row.outsideSinks + (q - start + 1)), 0.f);
    for (const SlotView& slot : snapshot.cacheSlots) {
        if (!slot.kept || slot.position < 0) continue;
        const int64_t index = weightIndex(row, q, slot.position);
        if (index < 0) continue; // the engine kept a key keep() refuses: not drawn as a weight
        row.weights[size_t(index)] = slot.attention;
        row.maxWeight = std::max(row.maxWeight, slot.attention);
    }
}

int64_t MaskRows::weightIndex(const Row& row, int64_t q, int64_t k) const {
    if (row.weights.empty() || k > q || k < 0) return -1;
    const int64_t start = windowStart(q, row.window);
    if (k >= start) return row.outsideSinks + (k - start);
    const int64_t rank = sinkRank(k);
    return rank >= 0 && rank < row.outsideSinks ? rank : -1;
}

bool MaskRows::isRecorded(int64_t q) const {
    return q >= 0 && q < positionCount() && m_rows[size_t(q)].recorded;
}

bool MaskRows::isSink(int64_t k) const {
    return k >= 0 && k < positionCount() && m_sinkRanks[size_t(k)] >= 0;
}

bool MaskRows::hasWeights(int64_t q) const {
    return q >= 0 && q < positionCount() && !m_rows[size_t(q)].weights.empty();
}

int64_t MaskRows::window(int64_t q) const {
    return q >= 0 && q < positionCount() ? m_rows[size_t(q)].window : 0;
}

MaskCellData MaskRows::cell(int64_t q, int64_t k) const {
    const Row& row = m_rows[size_t(q)];
    MaskCellData data;
    data.kind = classify(q, k, row.window, m_sinkRanks[size_t(k)] >= 0);
    data.recorded = row.recorded;
    const int64_t index = weightIndex(row, q, k);
    if (index >= 0 && row.maxWeight > 0)
        data.intensity = std::sqrt(row.weights[size_t(index)] / row.maxWeight);
    return data;
}

std::optional<MaskCell> MaskRows::cellKind(int64_t q, int64_t k) const {
    if (q < 0 || k < 0 || q >= positionCount() || k >= positionCount()) return std::nullopt;
    return cell(q, k).kind;
}

std::optional<float> MaskRows::weight(int64_t q, int64_t k) const {
    if (q < 0 || k < 0 || q >= positionCount() || k >= positionCount()) return std::nullopt;
    const Row& row = m_rows[size_t(q)];
    const int64_t index = weightIndex(row, q, k);
    if (index < 0) return std::nullopt;
    return row.weights[size_t(index)];
}

int64_t MaskRows::firstSinkIn(int64_t first, int64_t last) const {
    const auto found = std::lower_bound(m_sinkPositions.begin(), m_sinkPositions.end(), first);
    return found != m_sinkPositions.end() && *found < last ? *found : -1;
}

int64_t MaskRows::sinkRank(int64_t k) const {
    return k >= 0 && k < positionCount() ? m_sinkRanks[size_t(k)] : -1;
}

QString MaskRows::piece(int64_t position) const {
    return position >= 0 && position < positionCount() ? m_pieces[size_t(position)] : QString();
}

int MaskRows::slotOf(int64_t position) const {
    return position >= 0 && position < positionCount() ? m_slots[size_t(position)] : -1;
}

QString MaskRows::probeLabel(int64_t q) const {
    if (!hasWeights(q)) return {};
    const Row& row = m_rows[size_t(q)];
    if (row.probeLayer < 0) return QStringLiteral("mean of all layers and heads");
    if (row.probeHead < 0) return QStringLiteral("layer %1, mean of its heads").arg(row.probeLayer);
    return QStringLiteral("layer %1, head %2").arg(row.probeLayer).arg(row.probeHead);
}

int64_t MaskRows::memoryBytes() const {
    int64_t bytes = int64_t(m_rows.capacity() * sizeof(Row));
    for (const Row& row : m_rows)
        bytes += int64_t(row.weights.capacity() * sizeof(float));
    bytes += int64_t(m_pieces.capacity() * sizeof(QString));
    for (const QString& piece : m_pieces)
        bytes += piece.capacity() * qsizetype(sizeof(QChar));
    bytes += int64_t((m_slots.capacity() + m_tokens.capacity()) * sizeof(int32_t) +
                     m_sinkRanks.capacity() * sizeof(int32_t) +
                     m_sinkPositions.capacity() * sizeof(int64_t));
    return bytes;
}

} // namespace sinkscope::views
