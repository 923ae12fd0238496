// How a quantized matrix's rows lie in memory. RowMajor and Q4_0x8 hold the same blocks and give
// the same products, bit for bit; only the order of the bytes differs. Tiles16 holds the same
// values and scales for the AMX kernels, whose products sum in another float order (below).
#pragma once

#include "gguf/ggml_types.h"
#include "gguf/quant_blocks.h"

#include <cstddef>
#include <cstdint>

namespace sinkscope {

enum class RowLayout {
    // As in the file: row after row, each row's blocks in order.
    RowMajor,
    // Q4_0 only: the rows in runs of eight, stored block by block, [rows / 8][blocks][8][18
    // bytes], so that a matrix-vector product reads eight rows as one stream and sums them in one
    // eight-float vector (llama.cpp regroups Q4_0 the same way on x86-64, its "q4_0_8x8"). Where
    // the hardware prefetcher follows one stream best (AMD Zen 4), one row at a time leaves the
    // sums' chain of multiply-adds as the bound, and four separate rows starve the prefetcher.
    Q4_0x8,
    // Q8_0, Q4_0 and Q5_0, on CPUs with AMX (model/kernels/cpu_isa.h): the rows in runs of
    // sixteen, [rows / 16][blocks][tile], where a tile holds block b of the sixteen rows in the
    // order the tile multiply (TDPBSSD) reads its second operand and VPDPBUSD its lanes: each row's
    // four-value groups side by side, then the rows' sixteen f16 scales.
    //   Q8_0 (544 bytes): quants [8 groups][16 rows][4 values], scales [16].
    //   Q4_0 (288 bytes): nibbles [4 group pairs][16 rows][4 bytes], scales [16]; the byte of
    //   pair p holds value 4 (2p) + i of the row in its low nibble and 4 (2p + 1) + i in its high.
    //   Q5_0 (352 bytes): Q4_0's nibbles, then the fifth bits [8 groups][64 bits] (bit 4n + i of
    //   group g's word for value 4g + i of row n: a byte mask over that group's 64 bytes), scales.
    // Its kernels sum one float multiply-add per block and output (model/kernels/
    // quant_tiles_amx.cpp), as llama.cpp's AMX backend sums Q8_0 and Q4_0, not in the eight-lane
    // order of the other layouts.
    Tiles16,
};

// "row-major", "Q4_0x8", "Tiles16"
const char* rowLayoutName(RowLayout layout);

inline constexpr int kQ4_0x8Rows = 8;
// Rows of at most this many blocks can be regrouped (the kernels' activation buffers hold that
// many; 32,768 values).
inline constexpr int64_t kQ4_0x8MaxBlocks = 1024;

// Whether a [rows][blocks * 32] Q4_0 matrix can take RowLayout::Q4_0x8.
bool canRegroupQ4_0(int64_t rows, int64_t blocks);

// dst = src's rows ([rows][blocks] Q4_0 blocks, row-major) in RowLayout::Q4_0x8; both hold
// rows * blocks * 18 bytes. Requires canRegroupQ4_0(rows, blocks). Runs are stored one after
// another, so rows [r, r + n) of a matrix (r and n multiples of eight) regroup on their own into
// bytes [r * rowBytes, (r + n) * rowBytes) of the whole matrix's copy.
void regroupQ4_0(const uint8_t* src, int64_t rows, int64_t blocks, uint8_t* dst);

// The byte offset of block b of row r in a Q4_0x8 matrix whose rows have `blocks` blocks.
size_t q4_0x8Offset(int64_t blocks, int64_t r, int64_t b);

inline constexpr int kTileRows = 16;
inline constexpr int kTiledMatrixRows = 32; // a tiled matrix's rows are a multiple of this
// The longest rows that take Tiles16 (the kernels keep a row's per-block sums on the stack).
inline constexpr int64_t kTileMaxBlocks = 1024;

// Whether a [rows][blocks * 32] matrix of `type` takes RowLayout::Tiles16: Q8_0, Q4_0 or Q5_0,
// rows a positive multiple of 32 (the matrices llama.cpp's AMX backend takes, so that the same
// Q8_0 and Q4_0 matrices sum in its order), 1..kTileMaxBlocks blocks.
bool canTile(GgmlType type, int64_t rows, int64_t blocks);

// The bytes of one Tiles16 block of `type` (Q8_0, Q4_0 or Q5_0), of its tile (sixteen blocks),
// and of the tile's quants (with Q5_0's fifth bits), before its sixteen f16 scales.
constexpr size_t tiledBlockBytes(GgmlType type) {
    switch (type) {
    case GgmlType::Q8_0:
        return sizeof(quant::BlockQ8_0);
    case GgmlType::Q5_0:
        return sizeof(quant::BlockQ5_0);
    default:
        return sizeof(quant::BlockQ4_0);
    }
}
constexpr size_t tileBytes(GgmlType type) {
    return kTileRows * tiledBlockBytes(type);
}
constexpr size_t tileQuantBytes(GgmlType type) {
    return tileBytes(type) - kTileRows * sizeof(uint16_t);
}
// Where a Q5_0 tile's fifth bits start: after the nibbles, laid out as Q4_0's.
inline constexpr size_t kQ5_0TileHighBitsAt = tileQuantBytes(GgmlType::Q4_0);

// dst = src's rows ([rows][blocks] blocks of `type`, row-major) in RowLayout::Tiles16; both hold
// rows * blocks * blockBytes. Requires Q8_0, Q4_0 or Q5_0 and rows a multiple of sixteen. Runs are
// stored one after another, so rows [r, r + n) (multiples of sixteen) tile on their own into bytes
// [r * rowBytes, (r + n) * rowBytes) of the whole matrix's copy.
void tileRows(GgmlType type, const uint8_t* src, int64_t rows, int64_t blocks, uint8_t* dst);

// block = the original bytes of block b of row r of a Tiles16 matrix whose rows have `blocks`
// blocks (an embedding lookup, tests).
void untileBlock(GgmlType type, const uint8_t* tiles, int64_t blocks, int64_t r, int64_t b,
                 uint8_t* block);

} // namespace sinkscope
