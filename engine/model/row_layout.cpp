#include "model/row_layout.h"

#include "gguf/quant_blocks.h"

#include <cstddef>
#include <cstring>

namespace sinkscope {

namespace {

constexpr size_t kBlockBytes = sizeof(quant::BlockQ4_0);
constexpr int kGroupValues = 4; // values per four-byte group of a tile
constexpr size_t kScaleBytes = sizeof(uint16_t);

size_t tileOffset(GgmlType type, int64_t blocks, int64_t r, int64_t b) {
    return static_cast<size_t>((r / kTileRows) * blocks + b) * tileBytes(type);
}

// Value k of a block as its type stores it, before the type's offset: Q8_0's byte, Q4_0's nibble
// (low nibbles hold values 0..15, high nibbles 16..31), Q5_0's nibble with its fifth bit from qh.
uint8_t storedValue(GgmlType type, const uint8_t* block, int k) {
    if (type == GgmlType::Q8_0) return block[kScaleBytes + k];
    const size_t nibblesAt =
        type == GgmlType::Q4_0 ? offsetof(quant::BlockQ4_0, qs) : offsetof(quant::BlockQ5_0, qs);
    const uint8_t byte = block[nibblesAt + k % 16];
    const uint8_t nibble = k < 16 ? byte & 0x0f : byte >> 4;
    if (type == GgmlType::Q4_0) return nibble;
    return static_cast<uint8_t>(nibble |
                                quant::q5HighBit(block + offsetof(quant::BlockQ5_0, qh), k));
}

// The byte of a tile that holds value k of row n (of its run): Q8_0's byte, or the nibble
// byte of Q4_0 and Q5_0 (`highNibble` tells which half).
size_t tileQuantAt(GgmlType type, int n, int k, bool& highNibble) {
    const int group = k / kGroupValues, within = k % kGroupValues;
    const int slab = type == GgmlType::Q8_0 ? group : group / 2;
    highNibble = type != GgmlType::Q8_0 && group % 2 == 1;
    return static_cast<size_t>((slab * kTileRows + n) * kGroupValues + within);
}

// Q5_0's fifth bits (row_layout.h): one 64-bit word per group, bit 4n + i for value 4 group + i
// of row n.
int q5_0HighBit(int n, int k) {
    return (k / kGroupValues) * 64 + n * kGroupValues + k % kGroupValues;
}

void setTileValue(GgmlType type, uint8_t* tile, int n, int k, uint8_t value) {
    bool high = false;
    uint8_t& at = tile[tileQuantAt(type, n, k, high)];
    if (type == GgmlType::Q8_0) {
        at = value;
        return;
    }
    const uint8_t nibble = value & 0x0f;
    at = high ? static_cast<uint8_t>((at & 0x0f) | nibble << 4)
              : static_cast<uint8_t>((at & 0xf0) | nibble);
    if (type != GgmlType::Q5_0) return;
    const int bit = q5_0HighBit(n, k);
    uint8_t& bits = tile[kQ5_0TileHighBitsAt + bit / 8];
    bits = static_cast<uint8_t>((bits & ~(1 << bit % 8)) | (value >> 4) << bit % 8);
}

uint8_t tileValue(GgmlType type, const uint8_t* tile, int n, int k) {
    bool high = false;
    const uint8_t at = tile[tileQuantAt(type, n, k, high)];
    if (type == GgmlType::Q8_0) return at;
    const uint8_t nibble = high ? at >> 4 : at & 0x0f;
    if (type != GgmlType::Q5_0) return nibble;
    const int bit = q5_0HighBit(n, k);
    return static_cast<uint8_t>(nibble | ((tile[kQ5_0TileHighBitsAt + bit / 8] >> bit % 8) & 1)
                                             << 4);
}

} // namespace

const char* rowLayoutName(RowLayout layout) {
    switch (layout) {
    case RowLayout::Q4_0x8:
        return "Q4_0x8";
    case RowLayout::Tiles16:
        return "Tiles16";
    case RowLayout::RowMajor:
        break;
    }
    return "row-major";
}

bool canRegroupQ4_0(int64_t rows, int64_t blocks) {
    return rows > 0 && rows % kQ4_0x8Rows == 0 && blocks > 0 && blocks <= kQ4_0x8MaxBlocks;
}

size_t q4_0x8Offset(int64_t blocks, int64_t r, int64_t b) {
    const int64_t run = r / kQ4_0x8Rows;
    return static_cast<size_t>((run * blocks + b) * kQ4_0x8Rows + r % kQ4_0x8Rows) * kBlockBytes;
}

void regroupQ4_0(const uint8_t* src, int64_t rows, int64_t blocks, uint8_t* dst) {
    const size_t rowBytes = static_cast<size_t>(blocks) * kBlockBytes;
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t b = 0; b < blocks; ++b)
            std::memcpy(dst + q4_0x8Offset(blocks, r, b),
                        src + static_cast<size_t>(r) * rowBytes +
                            static_cast<size_t>(b) * kBlockBytes,
                        kBlockBytes);
}

bool canTile(GgmlType type, int64_t rows, int64_t blocks) {
    return (type == GgmlType::Q8_0 || type == GgmlType::Q4_0 || type == GgmlType::Q5_0) &&
           rows > 0 && rows % kTiledMatrixRows == 0 && blocks > 0 && blocks <= kTileMaxBlocks;
}

void tileRows(GgmlType type, const uint8_t* src, int64_t rows, int64_t blocks, uint8_t* dst) {
    const size_t bytes = tiledBlockBytes(type);
    const size_t rowBytes = static_cast<size_t>(blocks) * bytes;
    for (int64_t r = 0; r < rows; ++r) {
        const int n = static_cast<int>(r % kTileRows);
        for (int64_t b = 0; b < blocks; ++b) {
            const uint8_t* block = src + static_cast<size_t>(r) * rowBytes + b * bytes;
            uint8_t* tile = dst + tileOffset(type, blocks, r, b);
            std::memcpy(tile + tileQuantBytes(type) + n * kScaleBytes, block, kScaleBytes);
            for (int k = 0; k < quant::kBlockValues; ++k)
                setTileValue(type, tile, n, k, storedValue(type, block, k));
        }
    }
}

void untileBlock(GgmlType type, const uint8_t* tiles, int64_t blocks, int64_t r, int64_t b,
                 uint8_t* block) {
    const int n = static_cast<int>(r % kTileRows);
    const uint8_t* tile = tiles + tileOffset(type, blocks, r, b);
    std::memcpy(block, tile + tileQuantBytes(type) + n * kScaleBytes, kScaleBytes);
    uint8_t values[quant::kBlockValues];
    for (int k = 0; k < quant::kBlockValues; ++k)
        values[k] = tileValue(type, tile, n, k);
    if (type == GgmlType::Q8_0) {
        std::memcpy(block + kScaleBytes, values, sizeof values);
        return;
    }
    uint8_t* nibbles = block + (type == GgmlType::Q4_0 ? offsetof(quant::BlockQ4_0, qs)
                                                       : offsetof(quant::BlockQ5_0, qs));
    for (int k = 0; k < 16; ++k)
        nibbles[k] = static_cast<uint8_t>((values[k] & 0x0f) | (values[k + 16] & 0x0f) << 4);
    if (type != GgmlType::Q5_0) return;
    uint8_t* high = block + offsetof(quant::BlockQ5_0, qh);
    std::memset(high, 0, sizeof quant::BlockQ5_0::qh);
    for (int k = 0; k < quant::kBlockValues; ++k)
        high[k / 8] = static_cast<uint8_t>(high[k / 8] | (values[k] >> 4) << k % 8);
}

} // namespace sinkscope
