// The bounded KV cache: S sink slots followed by a ring of W slots, allocated once per session
// (docs: shared/docs/memory-architecture.md, sections 3 and 4).
//
// Physical layout per layer, for K and for V:   [sinkSlots + window][kvDim]
//   kvBits 32: float      kvBits 16: f16      kvBits 8: int8 + one f32 scale per group of 32
// An int8 row is int8 q[G * 32] then f32 scale[G], G = ceil(kvDim / 32): a row whose width is not
// a multiple of 32 takes a whole last group (its padding stays 0).
// Slot metadata (token, position, kind) lives apart from the tensors, as ggml keeps cache cells.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace sinkscope {

enum class SlotKind : uint8_t { Empty, Sink, Ring };

struct SlotInfo {
    int32_t token = -1;
    int64_t position = -1;
    SlotKind kind = SlotKind::Empty;
};

struct KvCacheShape {
    int layers = 0;
    int kvDim = 0;     // n_head_kv * head_dim: the width of one K (or V) row
    int sinkSlots = 0; // S_max
    int window = 0;    // W: ring slots, and the mask's window
    int kvBits = 8;    // 32, 16 or 8
};

class KvCache {
public:
    explicit KvCache(const KvCacheShape& shape); // throws std::invalid_argument on a bad shape

    const KvCacheShape& shape() const { return m_shape; }
    int slotCount() const { return m_shape.sinkSlots + m_shape.window; }

    // Reserves the slot for the token at `position`: sinks take slots [0, S) in order while they
    // last (a sink past S_max is stored as an ordinary token); the n-th non-sink token takes ring
    // slot S_max + (n mod W), evicting its previous occupant. Returns the slot.
    int place(int32_t token, int64_t position, bool sink);

    // Row access for one layer and slot; rows are kvDim floats, quantized per kvBits on write.
    void writeK(int layer, int slot, const float* row);
    void writeV(int layer, int slot, const float* row);
    void readK(int layer, int slot, float* row) const;
    void readV(int layer, int slot, float* row) const;
    // The K rows of several slots at once, transposed: columns [kvDim][columnStride] (0: as many
    // columns as slots), slot i in column i, so that attention scores many slots with each query
    // value (model/kernels/kernel_table.h). A gather may be split into parts on several threads
    // at once: each part's slots and their columns (columns + first, the whole stride).
    void gatherK(int layer, std::span<const int> slots, float* columns,
                 size_t columnStride = 0) const;
    // The V rows of several slots: rows [slots.size()][kvDim]. Safe on several threads at once.
    void gatherV(int layer, std::span<const int> slots, float* rows) const;
    // Changes whenever the slot's K or V row in `layer` is written, to a number no other row of
    // any cache in the process has had: a reader that decoded the row at one version knows its
    // copy is current while the version stays (a copied cache keeps its rows' versions, and their
    // contents with them).
    uint64_t rowVersion(int layer, int slot) const;

    // The K and V rows of slots [0, count) in every layer, copied from `from`, whose rows have the
    // same layers, width and encoding (a session taking over another's pinned sinks:
    // Session::adoptSinks); row versions come along with the bytes, slot metadata does not.
    // Throws std::invalid_argument when the rows differ, std::out_of_range past either cache.
    void copyRows(const KvCache& from, int count);

    // [sinkSlots + window]. (Not named `slots`: that word is a Qt macro.)
    const std::vector<SlotInfo>& slotInfos() const { return m_slots; }
    int sinksUsed() const { return m_sinksUsed; }
    // The ring slot's occupant the last place() replaced; kind Empty when it replaced none.
    const SlotInfo& lastEvicted() const { return m_lastEvicted; }
    int ringHead() const; // the ring slot the next non-sink token will take
    int64_t ringWrites() const { return m_ringWrites; }
    int64_t evictions() const { return m_evictions; }
    int64_t bytesAllocated() const; // K and V tensors of every layer, scales included
    void clear();                   // forget every token; keeps the allocation

private:
    size_t rowBytes() const;                    // bytes of one stored row, scales included
    size_t rowIndex(int layer, int slot) const; // [layers][slots], unchecked
    uint8_t* row(std::vector<uint8_t>& store, int layer, int slot);
    const uint8_t* row(const std::vector<uint8_t>& store, int layer, int slot) const;
    void encode(const float* values, uint8_t* out) const;
    void decode(const uint8_t* in, float* values) const;
    // The rows base + slot * rowBytes() of each slot, decoded to out [slots.size()][kvDim].
    void decodeRows(const uint8_t* base, std::span<const int> slots, float* out) const;
    // The layer's first row, once the layer and every slot are checked as row() checks them.
    const uint8_t* checkedLayer(const std::vector<uint8_t>& store, int layer,
                                std::span<const int> slots) const;

    KvCacheShape m_shape;
    std::vector<uint8_t> m_keys;         // [layers][slots][rowBytes]
    std::vector<uint8_t> m_values;       // [layers][slots][rowBytes]
    std::vector<SlotInfo> m_slots;       // [slots]
    std::vector<uint64_t> m_rowVersions; // [layers][slots]
    int m_sinksUsed = 0;
    int64_t m_ringWrites = 0;
    int64_t m_evictions = 0;
    SlotInfo m_lastEvicted;
};

} // namespace sinkscope
