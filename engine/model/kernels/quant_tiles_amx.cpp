// A kernel source (model/kernels/kernel_isa_begin.h): the products of Q8_0, Q4_0 and Q5_0
// matrices in RowLayout::Tiles16 (model/row_layout.h), for the AMX level; the other levels'
// builds of this file are empty.
//
// Both kernels compute what llama.cpp's AMX backend computes for Q8_0 and Q4_0 (it has no Q5_0
// kernel; Q5_0 takes the same order here): each block's exact integer sum,
// then one float multiply-add per block and output, sum = fma(float(integer sum), weight scale *
// activation scale, sum) from 0, blocks in order (quant::referenceTileOrderDot). Decoding takes a
// tile's sixteen rows in the sixteen 32-bit lanes of VPDPBUSD; prefill multiplies sixteen tokens
// by sixteen rows in one tile instruction (TDPBSSD). Both give the same bits, so a prefill chunk
// and token-by-token decoding agree exactly (tests/model/test_tile_layout.cpp).
#include "gguf/ggml_types.h"
#include "gguf/quant_blocks.h"
#include "model/kernels/kernel_table.h"
#include "model/row_layout.h"

#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "model/kernels/kernel_isa_begin.h"

// After the region opens: compiled for its level.
#include "model/kernels/avx2_blocks.h"

namespace sinkscope::SINKSCOPE_ISA_NAMESPACE {

#if SINKSCOPE_KERNEL_ISA >= 4

namespace {

using avx2::halfAt;

constexpr int kGroups = 8; // four-value groups per 32-value block
constexpr size_t kActivationBlockBytes = sizeof(quant::BlockQ8_0);
constexpr size_t kActivationQuantsAt = offsetof(quant::BlockQ8_0, qs);
constexpr size_t kGroupSlabBytes = 64; // one group of a tile's sixteen rows
// A Q4_0 or Q5_0 tile unpacked to the signed bytes TDPBSSD reads: laid out as Q8_0's quants.
constexpr size_t kSignedTileBytes = tileQuantBytes(GgmlType::Q8_0);

// What VPDPBUSD adds beyond the signed products: it multiplies unsigned bytes, so Q8_0's quants
// are taken as q + 128, Q4_0's nibbles as they are (q + 8 for the value q) and Q5_0's five bits
// likewise (q + 16): o * (sum of the block's activation quants) comes off each lane.
constexpr int32_t unsignedOffset(GgmlType type) {
    switch (type) {
    case GgmlType::Q8_0:
        return 128;
    case GgmlType::Q5_0:
        return 16;
    default:
        return 8;
    }
}

__m512i groupOf(const uint8_t* activationQuants, int g) {
    int32_t four;
    std::memcpy(&four, activationQuants + 4 * g, sizeof four);
    return _mm512_set1_epi32(four);
}

// Group pair p of a Q4_0 or Q5_0 tile as unsigned values, [16 rows][4 values] each: groups 2p
// (the nibbles' low halves) and 2p + 1 (their high halves); Q5_0 adds 16 where a value's fifth
// bit is set, the bits of a group being the byte mask of its 64 values.
template <GgmlType Type>
void pairValues(const uint8_t* tile, int p, __m512i& first, __m512i& second) {
    const __m512i low = _mm512_set1_epi8(0x0f);
    const __m512i bytes = _mm512_loadu_si512(tile + p * kGroupSlabBytes);
    first = _mm512_and_si512(bytes, low);
    second = _mm512_and_si512(_mm512_srli_epi16(bytes, 4), low);
    if constexpr (Type == GgmlType::Q5_0) {
        const __m512i fifth = _mm512_set1_epi8(0x10);
        uint64_t bits[2];
        std::memcpy(bits, tile + kQ5_0TileHighBitsAt + 2 * p * sizeof(uint64_t), sizeof bits);
        first = _mm512_mask_add_epi8(first, _cvtu64_mask64(bits[0]), first, fifth);
        second = _mm512_mask_add_epi8(second, _cvtu64_mask64(bits[1]), second, fifth);
    }
}

// Lane n: the exact integer sum of row n of a tile's block with one activation block's quants.
template <GgmlType Type>
__m512i tileBlockSums(const uint8_t* tile, const uint8_t* activationQuants, int32_t offsetSum) {
    __m512i even = _mm512_setzero_si512(), odd = _mm512_setzero_si512();
    if constexpr (Type == GgmlType::Q8_0) {
        const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
        for (int g = 0; g < kGroups; g += 2) {
            const __m512i first = _mm512_loadu_si512(tile + g * kGroupSlabBytes);
            const __m512i second = _mm512_loadu_si512(tile + (g + 1) * kGroupSlabBytes);
            even = _mm512_dpbusd_epi32(even, _mm512_xor_si512(first, flip),
                                       groupOf(activationQuants, g));
            odd = _mm512_dpbusd_epi32(odd, _mm512_xor_si512(second, flip),
                                      groupOf(activationQuants, g + 1));
        }
    } else {
        for (int p = 0; p < kGroups / 2; ++p) {
            __m512i first, second;
            pairValues<Type>(tile, p, first, second);
            even = _mm512_dpbusd_epi32(even, first, groupOf(activationQuants, 2 * p));
            odd = _mm512_dpbusd_epi32(odd, second, groupOf(activationQuants, 2 * p + 1));
        }
    }
    return _mm512_sub_epi32(_mm512_add_epi32(even, odd), _mm512_set1_epi32(offsetSum));
}

__m512 weightScales(GgmlType type, const uint8_t* tile) {
    return _mm512_maskz_cvtph_ps(
        0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tile + tileQuantBytes(type))));
}

// Runs r0 .. r0 + Runs - 1 of a matrix, block by block: the runs share each activation block's
// broadcasts, and their sums are independent chains.
template <GgmlType Type, int Runs>
void decodeRuns(const uint8_t* tiles, int64_t blocks, const uint8_t* activations,
                const int32_t* offsetSums, const float* scales, float* out, int64_t r0) {
    constexpr size_t tileSize = tileBytes(Type);
    const size_t runBytes = static_cast<size_t>(blocks) * tileSize;
    const uint8_t* first = tiles + static_cast<size_t>(r0) * runBytes;
    __m512 sums[Runs];
    for (__m512& sum : sums)
        sum = _mm512_setzero_ps();
    for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* quants = activations + b * kActivationBlockBytes + kActivationQuantsAt;
        const __m512 activationScale = _mm512_set1_ps(scales[b]);
        for (int run = 0; run < Runs; ++run) {
            const uint8_t* tile = first + run * runBytes + static_cast<size_t>(b) * tileSize;
            const __m512i integers = tileBlockSums<Type>(tile, quants, offsetSums[b]);
            const __m512 scale = _mm512_mul_ps(weightScales(Type, tile), activationScale);
            sums[run] =
                _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(0xffff, integers), scale, sums[run]);
        }
    }
    for (int run = 0; run < Runs; ++run)
        _mm512_storeu_ps(out + (r0 + run) * kTileRows, sums[run]);
}

// Decoding: four runs of sixteen rows at a time, each run's tiles one stream that the hardware
// prefetcher follows. On the 0.5B shape, two threads, an Intel Xeon: one run at a time with
// software prefetch decoded Q4_0 at 57-59 tokens/s, without it 70, two runs 78, four 88-92,
// eight 79-80 (Q8_0: 49, -, 50, 55, 49-52).
template <GgmlType Type>
void tileRowsOf(const uint8_t* tiles, int64_t blocks, const void* activations, float* out,
                int64_t rowBegin, int64_t rowEnd) {
    const auto* a = static_cast<const uint8_t*>(activations);
    int32_t offsetSums[kTileMaxBlocks];
    float scales[kTileMaxBlocks];
    for (int64_t b = 0; b < blocks; ++b) {
        const auto* quants =
            reinterpret_cast<const int8_t*>(a + b * kActivationBlockBytes + kActivationQuantsAt);
        int32_t sum = 0;
        for (int j = 0; j < quant::kBlockValues; ++j)
            sum += quants[j];
        offsetSums[b] = unsignedOffset(Type) * sum;
        scales[b] = halfAt(a + b * kActivationBlockBytes);
    }
    int64_t run = rowBegin / kTileRows;
    const int64_t end = rowEnd / kTileRows;
    for (; run + 4 <= end; run += 4)
        decodeRuns<Type, 4>(tiles, blocks, a, offsetSums, scales, out, run);
    for (; run < end; ++run)
        decodeRuns<Type, 1>(tiles, blocks, a, offsetSums, scales, out, run);
}

void tileRows(GgmlType type, const uint8_t* tiles, int64_t blocks, const void* activations,
              float* out, int64_t rowBegin, int64_t rowEnd) {
    switch (type) {
    case GgmlType::Q8_0:
        return tileRowsOf<GgmlType::Q8_0>(tiles, blocks, activations, out, rowBegin, rowEnd);
    case GgmlType::Q5_0:
        return tileRowsOf<GgmlType::Q5_0>(tiles, blocks, activations, out, rowBegin, rowEnd);
    default:
        return tileRowsOf<GgmlType::Q4_0>(tiles, blocks, activations, out, rowBegin, rowEnd);
    }
}

// The tile registers' shapes (the LDTILECFG operand, palette 1). Two of each kind, so that one
// block's multiply runs while the sums of the block before are scaled:
//   tmm0, tmm1: sixteen tokens' activation quants of one block, [16 tokens][32 bytes];
//   tmm2, tmm3: sixteen rows' weights of one block, [8 groups][16 rows][4 bytes];
//   tmm4, tmm5: their integer sums, [16 tokens][16 rows] int32.
struct alignas(64) TileConfig {
    uint8_t palette = 1;
    uint8_t startRow = 0;
    uint8_t reserved[14] = {};
    uint16_t bytesPerRow[16] = {};
    uint8_t rows[16] = {};

    TileConfig() {
        for (const int t : {0, 1})
            setTile(t, kTileRows, quant::kBlockValues);
        for (const int t : {2, 3})
            setTile(t, kGroups, kTileRows * 4);
        for (const int t : {4, 5})
            setTile(t, kTileRows, kTileRows * sizeof(int32_t));
    }
    void setTile(int tile, int rowCount, size_t bytes) {
        rows[tile] = static_cast<uint8_t>(rowCount);
        bytesPerRow[tile] = static_cast<uint16_t>(bytes);
    }
};

// Where one token tile's activations lie: block b's quants of token t0 + m at
// base + b * blockStep + m * stride.
struct TokenTile {
    const uint8_t* base;
    size_t blockStep;
    size_t stride;
    const float* scales; // [blocks][16]: the tokens' block scales, 0 for missing tokens
    int count;
};

// A thread's scratch for one call (grown once, then reused).
struct GemmScratch {
    std::vector<int8_t> weights; // Q4_0, Q5_0: a run's tiles as signed bytes, [blocks][8][16][4]
    std::vector<uint8_t> lastTokens; // a partial last tile's quants, zero-padded [blocks][16][32]
    std::vector<float> scales;       // [token tiles][blocks][16]
};

// Multiplies block b of a token tile with a run's weights into tmm4 (Odd false) or tmm5: tile
// instructions name their registers in the instruction itself.
template <bool Odd> void multiplyBlock(const TokenTile& tokens, const uint8_t* weights, int64_t b) {
    const uint8_t* quants = tokens.base + static_cast<size_t>(b) * tokens.blockStep;
    const auto stride = static_cast<long>(tokens.stride);
    if constexpr (Odd) {
        _tile_loadd(1, quants, stride);
        _tile_loadd(3, weights, static_cast<long>(kGroupSlabBytes));
        _tile_zero(5);
        _tile_dpbssd(5, 1, 3);
    } else {
        _tile_loadd(0, quants, stride);
        _tile_loadd(2, weights, static_cast<long>(kGroupSlabBytes));
        _tile_zero(4);
        _tile_dpbssd(4, 0, 2);
    }
}

// sums[m] += float(integer sums of token m) * (weight scales * token m's scale), for block b.
template <bool Odd>
void scaleBlock(const TokenTile& tokens, __m512 weightScale, int64_t b, __m512 sums[kTileRows]) {
    alignas(64) int32_t integers[kTileRows][kTileRows];
    if constexpr (Odd)
        _tile_stored(5, integers, static_cast<long>(sizeof integers[0]));
    else
        _tile_stored(4, integers, static_cast<long>(sizeof integers[0]));
    const float* scales = tokens.scales + static_cast<size_t>(b) * kTileRows;
    for (int m = 0; m < kTileRows; ++m) {
        const __m512 scale = _mm512_mul_ps(weightScale, _mm512_set1_ps(scales[m]));
        sums[m] = _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(0xffff, _mm512_load_si512(integers[m])),
                                  scale, sums[m]);
    }
}

// One run of sixteen rows against one token tile: out[m * outStride + n] (row n of the run) for
// m < tokens.count. weightsOf(b) is the run's block b as signed bytes in the tile layout, tileOf(b)
// its tile (for the scales).
template <typename Weights, typename Tile>
void runTimesTokens(GgmlType type, int64_t blocks, const TokenTile& tokens, Weights weightsOf,
                    Tile tileOf, float* out, size_t outStride) {
    __m512 sums[kTileRows];
    for (__m512& sum : sums)
        sum = _mm512_setzero_ps();
    multiplyBlock<false>(tokens, weightsOf(0), 0);
    for (int64_t b = 0; b < blocks; b += 2) {
        if (b + 1 < blocks) multiplyBlock<true>(tokens, weightsOf(b + 1), b + 1);
        scaleBlock<false>(tokens, weightScales(type, tileOf(b)), b, sums);
        if (b + 1 == blocks) break;
        if (b + 2 < blocks) multiplyBlock<false>(tokens, weightsOf(b + 2), b + 2);
        scaleBlock<true>(tokens, weightScales(type, tileOf(b + 1)), b + 1, sums);
    }
    for (int m = 0; m < tokens.count; ++m)
        _mm512_storeu_ps(out + static_cast<size_t>(m) * outStride, sums[m]);
}

// A run's Q4_0 or Q5_0 tiles as the signed bytes TDPBSSD reads: [blocks][8 groups][16 rows][4
// bytes].
template <GgmlType Type> void unpackRun(const uint8_t* run, int64_t blocks, int8_t* weights) {
    const __m512i offset = _mm512_set1_epi8(static_cast<char>(unsignedOffset(Type)));
    constexpr size_t tileSize = tileBytes(Type);
    for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* tile = run + static_cast<size_t>(b) * tileSize;
        int8_t* block = weights + static_cast<size_t>(b) * kSignedTileBytes;
        for (int p = 0; p < kGroups / 2; ++p) {
            __m512i first, second;
            pairValues<Type>(tile, p, first, second);
            _mm512_storeu_si512(block + 2 * p * kGroupSlabBytes, _mm512_sub_epi8(first, offset));
            _mm512_storeu_si512(block + (2 * p + 1) * kGroupSlabBytes,
                                _mm512_sub_epi8(second, offset));
        }
    }
}

// Prefill: each run of sixteen rows (its Q4_0 or Q5_0 tiles unpacked once) against every token
// tile.
void tileGemm(GgmlType type, const uint8_t* tiles, int64_t blocks, const uint8_t* activations,
              size_t activationBytes, int tokens, float* out, size_t outStride, int64_t rowBegin,
              int64_t rowEnd) {
    thread_local GemmScratch scratch;
    const int tokenTiles = (tokens + kTileRows - 1) / kTileRows;
    const int wholeTiles = tokens / kTileRows, rest = tokens % kTileRows;
    const auto blockCount = static_cast<size_t>(blocks);
    scratch.scales.assign(static_cast<size_t>(tokenTiles) * blockCount * kTileRows, 0.0f);
    for (int t = 0; t < tokens; ++t)
        for (size_t b = 0; b < blockCount; ++b)
            scratch.scales[(static_cast<size_t>(t / kTileRows) * blockCount + b) * kTileRows +
                           t % kTileRows] =
                halfAt(activations + t * activationBytes + b * kActivationBlockBytes);
    if (rest > 0) {
        scratch.lastTokens.assign(blockCount * kTileRows * quant::kBlockValues, 0);
        for (int m = 0; m < rest; ++m)
            for (size_t b = 0; b < blockCount; ++b)
                std::memcpy(scratch.lastTokens.data() + (b * kTileRows + m) * quant::kBlockValues,
                            activations +
                                static_cast<size_t>(wholeTiles * kTileRows + m) * activationBytes +
                                b * kActivationBlockBytes + kActivationQuantsAt,
                            quant::kBlockValues);
    }
    const bool unpacks = type != GgmlType::Q8_0;
    if (unpacks) scratch.weights.resize(blockCount * kSignedTileBytes);
    const TileConfig config;
    _tile_loadconfig(&config);
    const size_t tileSize = tileBytes(type);
    for (int64_t r = rowBegin; r < rowEnd; r += kTileRows) {
        const uint8_t* run = tiles + static_cast<size_t>(r / kTileRows) * blockCount * tileSize;
        if (type == GgmlType::Q4_0) unpackRun<GgmlType::Q4_0>(run, blocks, scratch.weights.data());
        if (type == GgmlType::Q5_0) unpackRun<GgmlType::Q5_0>(run, blocks, scratch.weights.data());
        // GCC's tile loads are asm that does not tell the compiler it reads memory: the scratch
        // written above must be in memory before them.
        __asm__ volatile("" ::: "memory");
        const auto tileOf = [&](int64_t b) { return run + static_cast<size_t>(b) * tileSize; };
        const auto unpacked = [&](int64_t b) {
            return reinterpret_cast<const uint8_t*>(scratch.weights.data()) +
                   static_cast<size_t>(b) * kSignedTileBytes;
        };
        for (int i = 0; i < tokenTiles; ++i) {
            const float* scales =
                scratch.scales.data() + static_cast<size_t>(i) * blockCount * kTileRows;
            const TokenTile tile =
                i < wholeTiles
                    ? TokenTile{activations + static_cast<size_t>(i * kTileRows) * activationBytes +
                                    kActivationQuantsAt,
                                kActivationBlockBytes, activationBytes, scales, kTileRows}
                    : TokenTile{scratch.lastTokens.data(), kTileRows * quant::kBlockValues,
                                quant::kBlockValues, scales, rest};
            float* at = out + static_cast<size_t>(i * kTileRows) * outStride + r;
            if (unpacks)
                runTimesTokens(type, blocks, tile, unpacked, tileOf, at, outStride);
            else
                runTimesTokens(type, blocks, tile, tileOf, tileOf, at, outStride);
        }
    }
    _tile_release();
}

} // namespace

#endif

#include "model/kernels/kernel_isa_end.h"

void fillTileKernels(KernelTable& table) {
#if SINKSCOPE_KERNEL_ISA >= 4
    table.tileRows = tileRows;
    table.tileGemm = tileGemm;
#else
    (void)table;
#endif
}

} // namespace sinkscope::SINKSCOPE_ISA_NAMESPACE
