// quantDot / quantMatvec: argument checks, the activation type per weight type, and dispatch to
// the kernels of model/kernels/quant_dot_fast.cpp at the CPU's level (ref:: to
// model/kernels/quant_dot_ref.cpp).
#include "model/quant_dot.h"

#include "gguf/dequantize.h"
#include "gguf/quant_blocks.h"
#include "model/kernels/kernel_table.h"
#include "model/kernels/quant_dot_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace sinkscope {

namespace {

// ggml's vec_dot_type (ggml-cpu.c, type_traits_cpu) for each weight type it can dot.
bool findActivationType(GgmlType weightType, GgmlType& activation) {
    switch (weightType) {
    case GgmlType::F32:
    case GgmlType::F16:
    case GgmlType::BF16:
        activation = weightType;
        return true;
    case GgmlType::Q4_0:
    case GgmlType::Q5_0:
    case GgmlType::Q8_0:
    case GgmlType::IQ4_NL:
        activation = GgmlType::Q8_0;
        return true;
    case GgmlType::Q4_1:
    case GgmlType::Q5_1:
        activation = GgmlType::Q8_1;
        return true;
    case GgmlType::Q2_K:
    case GgmlType::Q3_K:
    case GgmlType::Q4_K:
    case GgmlType::Q5_K:
    case GgmlType::Q6_K:
    case GgmlType::IQ4_XS:
        activation = GgmlType::Q8_K;
        return true;
    default:
        return false;
    }
}

// The number of blocks in a row of n values; throws for a type without a dot or a bad n.
int64_t requireDotRow(GgmlType weightType, int64_t n) {
    GgmlType activation;
    if (!findActivationType(weightType, activation))
        throw std::invalid_argument(std::string("no dot product for weights of type ") +
                                    ggmlTypeName(weightType));
    const int64_t blockValues = ggmlBlockValues(weightType);
    if (n < 0 || n % blockValues != 0)
        throw std::invalid_argument("row length " + std::to_string(n) +
                                    " is not a multiple of the " + ggmlTypeName(weightType) +
                                    " block size " + std::to_string(blockValues));
    return n / blockValues;
}

// x[n] in `activation` as llama.cpp's x86-64 build quantizes a matrix product's input.
void quantizeForDot(GgmlType activation, const float* x, void* dst, int64_t n) {
    if (activation == GgmlType::Q8_0)
        kernels().quantizeQ8_0(x, dst, n / 32);
    else if (activation == GgmlType::Q8_1)
        kernels().quantizeQ8_1(x, dst, n / 32);
    else
        quantizeRow(activation, x, dst, n);
}

// Throws when `layout` cannot hold a [rows][blocks] matrix of `type`, or this CPU has no kernels
// for it.
void requireLayout(RowLayout layout, GgmlType type, int64_t rows, int64_t blocks) {
    const bool fits =
        layout == RowLayout::RowMajor ||
        (layout == RowLayout::Q4_0x8 && type == GgmlType::Q4_0 && canRegroupQ4_0(rows, blocks)) ||
        (layout == RowLayout::Tiles16 && canTile(type, rows, blocks));
    if (!fits)
        throw std::invalid_argument(std::string("rows of ") + ggmlTypeName(type) + " [" +
                                    std::to_string(rows) + "][" + std::to_string(blocks) +
                                    " blocks] cannot be in the " + rowLayoutName(layout) +
                                    " layout");
    if (layout == RowLayout::Tiles16 && !kernels().tileRows)
        throw std::invalid_argument(std::string("the ") + rowLayoutName(layout) +
                                    " layout needs AMX, which this CPU or system does not offer");
}

// Rows of a thread's share start at a multiple of this.
int64_t rowAlignment(RowLayout layout, int64_t rowMajor) {
    switch (layout) {
    case RowLayout::Q4_0x8:
        return kQ4_0x8Rows;
    case RowLayout::Tiles16:
        return kTileRows;
    case RowLayout::RowMajor:
        break;
    }
    return rowMajor;
}

} // namespace

bool quantDotSupported(GgmlType weightType) {
    GgmlType activation;
    return findActivationType(weightType, activation);
}

GgmlType activationType(GgmlType weightType) {
    GgmlType activation;
    if (!findActivationType(weightType, activation))
        throw std::invalid_argument(std::string("no dot product for weights of type ") +
                                    ggmlTypeName(weightType));
    return activation;
}

void quantizeActivations(GgmlType weightType, const float* x, void* dst, int64_t n) {
    requireDotRow(weightType, n);
    quantizeForDot(activationType(weightType), x, dst, n);
}

float quantDot(GgmlType weightType, const void* weightRow, const void* activationRow, int64_t n) {
    const int64_t blocks = requireDotRow(weightType, n);
    return kernels().dot(weightType)(weightRow, activationRow, blocks);
}

namespace ref {
float quantDot(GgmlType weightType, const void* weightRow, const void* activationRow, int64_t n) {
    const int64_t blocks = requireDotRow(weightType, n);
    return quant::referenceDotKernel(weightType)(weightRow, activationRow, blocks);
}
} // namespace ref

void quantMatvec(GgmlType type, const void* w, int64_t rows, int64_t cols, const float* x,
                 float* out, std::vector<std::byte>& scratch, ThreadPool* pool, RowLayout layout) {
    const int64_t blocks = requireDotRow(type, cols);
    if (rows < 0) throw std::invalid_argument("negative row count " + std::to_string(rows));
    requireLayout(layout, type, rows, blocks);
    const GgmlType activation = activationType(type);
    scratch.resize(static_cast<size_t>(*ggmlByteSize(activation, static_cast<uint64_t>(cols))));
    quantizeForDot(activation, x, scratch.data(), cols);
    const auto rowBytes = static_cast<size_t>(*ggmlByteSize(type, static_cast<uint64_t>(cols)));
    const auto* weights = static_cast<const uint8_t*>(w);
    const auto rowRange = [&](int64_t begin, int64_t end) {
        if (layout == RowLayout::Q4_0x8)
            kernels().q4_0x8Rows(weights, blocks, scratch.data(), out, begin, end);
        else if (layout == RowLayout::Tiles16)
            kernels().tileRows(type, weights, blocks, scratch.data(), out, begin, end);
        else
            kernels().quantRows(type, weights, rowBytes, blocks, scratch.data(), out, begin, end);
    };
    const int64_t align = rowAlignment(layout, 1);
    if (pool)
        pool->forRanges(rows, align, rowRange, rows * cols);
    else
        rowRange(0, rows);
}

size_t quantizeTokens(GgmlType type, const float* x, int tokens, int64_t cols,
                      std::vector<std::byte>& scratch, ThreadPool* pool) {
    requireDotRow(type, cols);
    if (tokens < 0) throw std::invalid_argument("negative token count " + std::to_string(tokens));
    const GgmlType activation = activationType(type);
    const auto activationBytes =
        static_cast<size_t>(*ggmlByteSize(activation, static_cast<uint64_t>(cols)));
    scratch.resize(activationBytes * static_cast<size_t>(tokens));
    const auto quantizeRange = [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t)
            quantizeForDot(activation, x + static_cast<size_t>(t) * static_cast<size_t>(cols),
                           scratch.data() + static_cast<size_t>(t) * activationBytes, cols);
    };
    if (pool)
        pool->forRanges(tokens, 1, quantizeRange, int64_t{tokens} * cols);
    else
        quantizeRange(0, tokens);
    return activationBytes;
}

void quantMatmatPrepared(GgmlType type, const void* w, int64_t rows, int64_t cols,
                         const std::byte* activations, size_t activationBytes, int tokens,
                         float* out, ThreadPool* pool, RowLayout layout) {
    const int64_t blocks = requireDotRow(type, cols);
    if (rows < 0) throw std::invalid_argument("negative row count " + std::to_string(rows));
    requireLayout(layout, type, rows, blocks);
    const auto rowBytes = static_cast<size_t>(*ggmlByteSize(type, static_cast<uint64_t>(cols)));
    const auto* weights = static_cast<const uint8_t*>(w);
    const auto* quants = reinterpret_cast<const uint8_t*>(activations);
    const auto rowRange = [&](int64_t begin, int64_t end) {
        if (layout == RowLayout::Q4_0x8)
            kernels().q4_0x8Gemm(weights, blocks, quants, activationBytes, tokens, out,
                                 static_cast<size_t>(rows), begin, end);
        else if (layout == RowLayout::Tiles16)
            kernels().tileGemm(type, weights, blocks, quants, activationBytes, tokens, out,
                               static_cast<size_t>(rows), begin, end);
        else
            kernels().quantGemm(type, weights, rowBytes, blocks, quants, activationBytes, tokens,
                                out, static_cast<size_t>(rows), begin, end);
    };
    const int64_t align = rowAlignment(layout, 4);
    if (pool)
        pool->forRanges(rows, align, rowRange, rows * cols * tokens);
    else
        rowRange(0, rows);
}

} // namespace sinkscope
