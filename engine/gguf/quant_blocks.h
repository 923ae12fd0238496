// Block layouts of ggml's quantized types, byte for byte as ggml-common.h defines them, and the
// small unpacking rules that dequantization and the integer dot products share.
//
// Every field is little-endian; f16 fields are held as their bits. The structs have no padding
// (each size is asserted below), so a block is read with loadBlock (a memcpy: file bytes need not
// be aligned). "Value i" is the i-th of the block's values in row order.
//
// 32-value blocks (x = the value, q = its stored integer):
//   Q4_0   d, qs[16]            x = d * (q - 8)      q: value j < 16 is the low nibble of qs[j],
//                                                    value j + 16 the high nibble of qs[j]
//   Q4_1   d, m, qs[16]         x = d * q + m        q as Q4_0
//   Q5_0   d, qh[4], qs[16]     x = d * (q - 16)     q = nibble (as Q4_0) | bit i of qh << 4
//   Q5_1   d, m, qh[4], qs[16]  x = d * q + m        q as Q5_0
//   Q8_0   d, qs[32]            x = d * qs[i]
//   Q8_1   d, s, qs[32]         x = d * qs[i]        s = f16(d * sum(qs)), for Q4_1 / Q5_1 dots
//   IQ4_NL d, qs[16]            x = d * kIq4NlValues[q], q as Q4_0
// 256-value super-blocks, split into sub-blocks with their own scale (and min):
//   Q2_K   16 x 16   x = d * scale * q - dmin * min          scales[j]: scale low, min high nibble
//          q: 2 bits; value 128h + 32k + l (l < 32) is bits 2k..2k+1 of qs[32h + l]
//   Q3_K   16 x 16   x = d * (scale - 32) * (q - 4)         scale: 6 bits (q3KScale)
//          q: low 2 bits as Q2_K, high bit: bit 4h + k of hmask[l]
//   Q4_K    8 x 32   x = d * scale * q - dmin * min          scale, min: 6 bits (kQuantScaleMin)
//          q: value 64p + l (l < 32) is the low nibble of qs[32p + l], value 64p + 32 + l its high
//   Q5_K    8 x 32   as Q4_K, plus a fifth bit: bit 2p (low nibble) or 2p + 1 (high) of qh[l]
//   Q6_K   16 x 16   x = d * scales[j] * (q - 32)           scales: int8
//          q: value 128h + 32k + l: nibble (k & 1 ? ql[64h + 32 + l] : ql[64h + l]) low for k < 2,
//          high for k >= 2, then bits 2k..2k+1 of qh[32h + l] as bits 4..5
//   IQ4_XS  8 x 32   x = d * (scale - 32) * kIq4NlValues[q]  scale: 6 bits (iq4XsScale)
//          q: in sub-block b, value j < 16 is the low nibble of qs[16b + j], j + 16 the high
//   Q8_K   f32 d, qs[256], bsums[16] = the sums of qs in groups of 16 (activations only)
#pragma once

#include <cstdint>
#include <cstring>

namespace sinkscope::quant {

constexpr int kBlockValues = 32;       // ggml's QK4_0 ... QK8_1, QK4_NL
constexpr int kSuperBlockValues = 256; // ggml's QK_K

struct BlockQ4_0 {
    uint16_t d;
    uint8_t qs[16];
};
struct BlockQ4_1 {
    uint16_t d;
    uint16_t m;
    uint8_t qs[16];
};
struct BlockQ5_0 {
    uint16_t d;
    uint8_t qh[4];
    uint8_t qs[16];
};
struct BlockQ5_1 {
    uint16_t d;
    uint16_t m;
    uint8_t qh[4];
    uint8_t qs[16];
};
struct BlockQ8_0 {
    uint16_t d;
    int8_t qs[32];
};
struct BlockQ8_1 {
    uint16_t d;
    uint16_t s;
    int8_t qs[32];
};
struct BlockIQ4_NL {
    uint16_t d;
    uint8_t qs[16];
};
struct BlockQ2_K {
    uint8_t scales[16];
    uint8_t qs[64];
    uint16_t d;
    uint16_t dmin;
};
struct BlockQ3_K {
    uint8_t hmask[32];
    uint8_t qs[64];
    uint8_t scales[12];
    uint16_t d;
};
struct BlockQ4_K {
    uint16_t d;
    uint16_t dmin;
    uint8_t scales[12];
    uint8_t qs[128];
};
struct BlockQ5_K {
    uint16_t d;
    uint16_t dmin;
    uint8_t scales[12];
    uint8_t qh[32];
    uint8_t qs[128];
};
struct BlockQ6_K {
    uint8_t ql[128];
    uint8_t qh[64];
    int8_t scales[16];
    uint16_t d;
};
struct BlockIQ4_XS {
    uint16_t d;
    uint16_t scalesHigh;  // 2 bits per sub-block
    uint8_t scalesLow[4]; // 4 bits per sub-block
    uint8_t qs[128];
};
struct BlockQ8_K {
    float d;
    int8_t qs[256];
    int16_t bsums[16];
};

static_assert(sizeof(BlockQ4_0) == 18 && sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22 && sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34 && sizeof(BlockQ8_1) == 36);
static_assert(sizeof(BlockIQ4_NL) == 18 && sizeof(BlockIQ4_XS) == 136);
static_assert(sizeof(BlockQ2_K) == 84 && sizeof(BlockQ3_K) == 110);
static_assert(sizeof(BlockQ4_K) == 144 && sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210 && sizeof(BlockQ8_K) == 292);

// The 16 levels of IQ4_NL and IQ4_XS (ggml's kvalues_iq4nl), a non-uniform 4-bit grid.
inline constexpr int8_t kIq4NlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};

// Block `index` of a row of Blocks starting at `bytes`.
template <typename Block> Block loadBlock(const void* bytes, int64_t index) {
    Block block;
    std::memcpy(&block, static_cast<const uint8_t*>(bytes) + index * sizeof(Block), sizeof block);
    return block;
}

template <typename Block> void storeBlock(void* bytes, int64_t index, const Block& block) {
    std::memcpy(static_cast<uint8_t*>(bytes) + index * sizeof(Block), &block, sizeof block);
}

// The fifth bit of value j (0..31) of a Q5_0 / Q5_1 block, as 0 or 16.
inline int q5HighBit(const uint8_t qh[4], int j) {
    return ((qh[j / 8] >> (j % 8)) & 1) << 4;
}

// Q4_K / Q5_K: the 6-bit scale and min of sub-block j (0..7) packed in 12 bytes. Sub-blocks 0..3
// keep theirs in the low 6 bits of bytes j and j + 4; 4..7 in the nibbles of byte j + 4, with
// their top 2 bits in the top bits of bytes j - 4 (scale) and j (min).
struct ScaleMin {
    int scale;
    int min;
};
inline ScaleMin kQuantScaleMin(const uint8_t scales[12], int j) {
    if (j < 4) return {scales[j] & 63, scales[j + 4] & 63};
    return {(scales[j + 4] & 0x0f) | ((scales[j - 4] >> 6) << 4),
            (scales[j + 4] >> 4) | ((scales[j] >> 6) << 4)};
}

// Q3_K: the scale of sub-block j (0..15), minus its offset 32. Its low 4 bits are a nibble of
// scales[j % 8] (low for j < 8), its top 2 bits are bits 2 * (j / 4) of scales[8 + j % 4].
inline int q3KScale(const uint8_t scales[12], int j) {
    const int low = j < 8 ? scales[j] & 0x0f : scales[j - 8] >> 4;
    const int high = (scales[8 + j % 4] >> (2 * (j / 4))) & 3;
    return (low | (high << 4)) - 32;
}

// IQ4_XS: the scale of sub-block j (0..7), minus its offset 32.
inline int iq4XsScale(const BlockIQ4_XS& block, int j) {
    const int low = (block.scalesLow[j / 2] >> (4 * (j % 2))) & 0x0f;
    const int high = (block.scalesHigh >> (2 * j)) & 3;
    return (low | (high << 4)) - 32;
}

} // namespace sinkscope::quant
