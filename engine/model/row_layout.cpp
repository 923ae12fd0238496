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

// Where a Q4_0 or Q5_0 block's nibbles start.
size_t nibblesAt(GgmlType type) {
    return type == GgmlType::Q4_0 ? offsetof(quant::BlockQ4_0, qs) : offsetof(quant::BlockQ5_0, qs);
}

// Nibble k of a Q4_0 or Q5_0 block's 16 bytes: low nibbles hold values 0..15, high 16..31.
uint8_t nibbleOf(const uint8_t* nibbles, int k) {
    return k < 16 ? nibbles[k] & 0x0f : nibbles[k - 16] >> 4;
}

// Sets the low (high false) or high nibble of `byte`.
void setNibble(uint8_t& byte, bool high, uint8_t nibble) {
    byte = high ? static_cast<uint8_t>((byte & 0x0f) | nibble << 4)
                : static_cast<uint8_t>((byte & 0xf0) | nibble);
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

// Block `block` (the file's bytes) as row n of its tile.
void tileBlock(GgmlType type, const uint8_t* block, int n, uint8_t* tile) {
    std::memcpy(tile + tileQuantBytes(type) + n * kScaleBytes, block, kScaleBytes);
    if (type == GgmlType::Q8_0) {
        for (int g = 0; g < quant::kBlockValues / kGroupValues; ++g)
            std::memcpy(tile + (g * kTileRows + n) * kGroupValues,
                        block + kScaleBytes + g * kGroupValues, kGroupValues);
        return;
    }
    // Pair p's byte i: value 8p + i (group 2p) low, value 8p + 4 + i (group 2p + 1) high.
    const uint8_t* nibbles = block + nibblesAt(type);
    for (int p = 0; p < quant::kBlockValues / (2 * kGroupValues); ++p)
        for (int i = 0; i < kGroupValues; ++i)
            tile[(p * kTileRows + n) * kGroupValues + i] = static_cast<uint8_t>(
                nibbleOf(nibbles, 8 * p + i) | nibbleOf(nibbles, 8 * p + 4 + i) << 4);
    if (type != GgmlType::Q5_0) return;
    // Group g's fifth bits are bits 4n..4n + 3 of its word: nibble n % 2 of byte n / 2.
    uint32_t high;
    std::memcpy(&high, block + offsetof(quant::BlockQ5_0, qh), sizeof high);
    for (int g = 0; g < quant::kBlockValues / kGroupValues; ++g)
        setNibble(tile[kQ5_0TileHighBitsAt + g * sizeof(uint64_t) + n / 2], n % 2 == 1,
                  (high >> (kGroupValues * g)) & 0x0f);
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
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t b = 0; b < blocks; ++b)
            tileBlock(type, src + static_cast<size_t>(r) * rowBytes + b * bytes,
                      static_cast<int>(r % kTileRows), dst + tileOffset(type, blocks, r, b));
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
    uint8_t* nibbles = block + nibblesAt(type);
    for (int k = 0; k < 16; ++k)
        nibbles[k] = static_cast<uint8_t>((values[k] & 0x0f) | (values[k + 16] & 0x0f) << 4);
    if (type != GgmlType::Q5_0) return;
    uint8_t* high = block + offsetof(quant::BlockQ5_0, qh);
    std::memset(high, 0, sizeof quant::BlockQ5_0::qh);
    for (int k = 0; k < quant::kBlockValues; ++k)
        high[k / 8] = static_cast<uint8_t>(high[k / 8] | (values[k] >> 4) << k % 8);
}

} // namespace sinkscope
