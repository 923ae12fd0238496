#include "model/row_layout.h"

#include "gguf/quant_blocks.h"

#include <cstring>

namespace sinkscope {

namespace {

constexpr size_t kBlockBytes = sizeof(quant::BlockQ4_0);
constexpr int kGroupValues = 4; // values per four-byte group of a tile

size_t tileOffset(GgmlType type, int64_t blocks, int64_t r, int64_t b) {
    return static_cast<size_t>((r / kTileRows) * blocks + b) * tileBytes(type);
}

// Q4_0 value k of a block (0..15, before the offset of 8): low nibbles hold values 0..15, high
// nibbles 16..31.
uint8_t q4_0Nibble(const quant::BlockQ4_0& block, int k) {
    return k < 16 ? block.qs[k] & 0x0f : block.qs[k - 16] >> 4;
}

// Where value k of row n (of its run) lies in a tile: Q8_0's byte, or Q4_0's byte and nibble.
size_t tileQuantAt(GgmlType type, int n, int k, bool& highNibble) {
    const int group = k / kGroupValues, within = k % kGroupValues;
    const int slab = type == GgmlType::Q8_0 ? group : group / 2;
    highNibble = type == GgmlType::Q4_0 && group % 2 == 1;
    return static_cast<size_t>((slab * kTileRows + n) * kGroupValues + within);
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
    return (type == GgmlType::Q8_0 || type == GgmlType::Q4_0) && rows > 0 &&
           rows % kTiledMatrixRows == 0 && blocks > 0 && blocks <= kTileMaxBlocks;
}

void tileRows(GgmlType type, const uint8_t* src, int64_t rows, int64_t blocks, uint8_t* dst) {
    const size_t bytes = tiledBlockBytes(type);
    const size_t rowBytes = static_cast<size_t>(blocks) * bytes;
    for (int64_t r = 0; r < rows; ++r) {
        const int n = static_cast<int>(r % kTileRows);
        for (int64_t b = 0; b < blocks; ++b) {
            const uint8_t* block = src + static_cast<size_t>(r) * rowBytes + b * bytes;
            uint8_t* tile = dst + tileOffset(type, blocks, r, b);
            std::memcpy(tile + tileQuantBytes(type) + n * sizeof(uint16_t), block,
                        sizeof(uint16_t));
            quant::BlockQ4_0 q4{};
            if (type == GgmlType::Q4_0) std::memcpy(&q4, block, sizeof q4);
            for (int k = 0; k < 32; ++k) {
                bool high = false;
                uint8_t& at = tile[tileQuantAt(type, n, k, high)];
                if (type == GgmlType::Q8_0)
                    at = block[sizeof(uint16_t) + k];
                else if (high)
                    at = static_cast<uint8_t>((at & 0x0f) | (q4_0Nibble(q4, k) << 4));
                else
                    at = static_cast<uint8_t>((at & 0xf0) | q4_0Nibble(q4, k));
            }
        }
    }
}

void untileBlock(GgmlType type, const uint8_t* tiles, int64_t blocks, int64_t r, int64_t b,
                 uint8_t* block) {
    const int n = static_cast<int>(r % kTileRows);
    const uint8_t* tile = tiles + tileOffset(type, blocks, r, b);
    std::memcpy(block, tile + tileQuantBytes(type) + n * sizeof(uint16_t), sizeof(uint16_t));
    uint8_t values[32];
    for (int k = 0; k < 32; ++k) {
        bool high = false;
        const uint8_t at = tile[tileQuantAt(type, n, k, high)];
        values[k] = type == GgmlType::Q8_0 ? at : high ? at >> 4 : at & 0x0f;
    }
    if (type == GgmlType::Q8_0) {
        std::memcpy(block + sizeof(uint16_t), values, 32);
        return;
    }
    for (int k = 0; k < 16; ++k)
        block[sizeof(uint16_t) + k] = static_cast<uint8_t>(values[k] | (values[k + 16] << 4));
}

} // namespace sinkscope
