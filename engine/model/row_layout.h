// How a quantized matrix's rows lie in memory. Both layouts hold the same blocks and give the
// same products, bit for bit; only the order of the bytes differs.
#pragma once

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
};

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

} // namespace sinkscope
