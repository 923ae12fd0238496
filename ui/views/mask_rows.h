// The attention mask as the engine reported it, kept compact: one row per query position, never
// an n x n matrix. A row holds its window and the probe's weights of its kept keys; per position
// we keep the token text and the slot its K/V went to; the sinks are one sorted list.
#pragma once

#include "memory/mask.h"
#include "memory/snapshot.h"

#include <QString>

#include <cstdint>
#include <optional>
#include <vector>

namespace sinkscope::views {

// What the heatmap draws in one cell.
struct MaskCellData {
    MaskCell kind = MaskCell::Future;
    bool recorded = false;  // the row's snapshot arrived (otherwise the kind is derived by keep())
    float intensity = -1.f; // weight / row maximum, square-rooted; -1 without a weight
};

class MaskRows {
public:
    // Records one query row; rows skipped since the last one become "not recorded" rows that
    // borrow this row's window. A row that arrives again replaces the earlier one.
    void add(const StepSnapshot& snapshot);
    void clear();

    int64_t positionCount() const { return int64_t(m_rows.size()); } // rows = key columns
    bool isRecorded(int64_t q) const;
    bool isSink(int64_t k) const;
    bool hasWeights(int64_t q) const;
    int64_t window(int64_t q) const; // 0 outside the matrix

    // The cell (q, k), for q and k in [0, positionCount()); the painter reads exactly this.
    MaskCellData cell(int64_t q, int64_t k) const;
    std::optional<MaskCell> cellKind(int64_t q, int64_t k) const; // nullopt outside the matrix
    std::optional<float> weight(int64_t q, int64_t k) const;      // the probe's raw weight
    // First sink in [first, last), or -1: lets a zoomed-out pixel column show a sink it covers.
    int64_t firstSinkIn(int64_t first, int64_t last) const;
    // The sinks in position order: rank r in [0, sinkCount()) is the r-th sink position.
    int64_t sinkCount() const { return int64_t(m_sinkPositions.size()); }
    int64_t sinkAt(int64_t rank) const { return m_sinkPositions[size_t(rank)]; }
    int64_t sinkRank(int64_t k) const; // -1 when k is not a sink

    QString piece(int64_t position) const; // the token's text as the engine decoded it
    int slotOf(int64_t position) const;    // the physical slot of the position's K/V, or -1
    QString probeLabel(int64_t q) const;   // "layer 2, head 1", "mean of all heads" or ""
    int64_t memoryBytes() const;           // heap held by the rows and per-position data

private:
    struct Row {
        int64_t window = 0;
        bool recorded = false;
        int16_t probeLayer = -1;
        int16_t probeHead = -1;
        int32_t outsideSinks = 0; // sinks before the window: weights[0, outsideSinks) by rank
        float maxWeight = 0;
        std::vector<float> weights; // [outsideSinks + keys of the window], empty without a probe
    };

    void growTo(int64_t count, int64_t gapWindow);
    // Converts the piece only when the position's token is new: most slots of a snapshot were
    // learnt from the snapshots before it.
    void learnPosition(int64_t position, int32_t token, const std::string& piece, int slot,
                       bool sink);
    void recordWeights(Row& row, const StepSnapshot& snapshot) const;
    int64_t weightIndex(const Row& row, int64_t q, int64_t k) const; // -1: no weight kept

    std::vector<Row> m_rows;              // [positions]
    std::vector<QString> m_pieces;        // [positions]
    std::vector<int32_t> m_tokens;        // [positions], kUnknownToken until learnt
    std::vector<int32_t> m_slots;         // [positions]
    std::vector<int32_t> m_sinkRanks;     // [positions] index in m_sinkPositions, -1: not a sink
    std::vector<int64_t> m_sinkPositions; // sorted
};

} // namespace sinkscope::views
