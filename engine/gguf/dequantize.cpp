// dequantizeRow / quantizeRow: checks, then one codec per type (gguf/quant_rows.h). The float
// types are converted here.
#include "gguf/dequantize.h"

#include "gguf/quant_rows.h"

#include <cstring>
#include <stdexcept>
#include <string>

namespace sinkscope {

namespace {

using Dequantizer = void (*)(const void* src, float* dst, int64_t blocks);
using Quantizer = void (*)(const float* src, void* dst, int64_t blocks);

struct RowCodec {
    GgmlType type;
    Dequantizer dequantize;
    Quantizer quantize;
};

void dequantizeF32(const void* src, float* dst, int64_t count) {
    std::memcpy(dst, src, static_cast<size_t>(count) * sizeof(float));
}
void quantizeF32(const float* src, void* dst, int64_t count) {
    std::memcpy(dst, src, static_cast<size_t>(count) * sizeof(float));
}

// 16-bit floats, little-endian, through `toFloat` / `fromFloat`.
template <float (*toFloat)(uint16_t)>
void dequantizeHalves(const void* src, float* dst, int64_t count) {
    const auto* bytes = static_cast<const uint8_t*>(src);
    for (int64_t i = 0; i < count; ++i)
        dst[i] = toFloat(static_cast<uint16_t>(bytes[2 * i] | (bytes[2 * i + 1] << 8)));
}
template <uint16_t (*fromFloat)(float)>
void quantizeHalves(const float* src, void* dst, int64_t count) {
    auto* bytes = static_cast<uint8_t*>(dst);
    for (int64_t i = 0; i < count; ++i) {
        const uint16_t half = fromFloat(src[i]);
        bytes[2 * i] = static_cast<uint8_t>(half & 0xff);
        bytes[2 * i + 1] = static_cast<uint8_t>(half >> 8);
    }
}

// Every type ggmlTypeSupported accepts, and nothing else.
constexpr RowCodec kCodecs[] = {
    {GgmlType::F32, dequantizeF32, quantizeF32},
    {GgmlType::F16, dequantizeHalves<fp16ToFp32>, quantizeHalves<fp32ToFp16>},
    {GgmlType::BF16, dequantizeHalves<bf16ToFp32>, quantizeHalves<fp32ToBf16>},
    {GgmlType::Q4_0, quant::dequantizeQ4_0, quant::quantizeQ4_0},
    {GgmlType::Q4_1, quant::dequantizeQ4_1, quant::quantizeQ4_1},
    {GgmlType::Q5_0, quant::dequantizeQ5_0, quant::quantizeQ5_0},
    {GgmlType::Q5_1, quant::dequantizeQ5_1, quant::quantizeQ5_1},
    {GgmlType::Q8_0, quant::dequantizeQ8_0, quant::quantizeQ8_0},
    {GgmlType::Q8_1, quant::dequantizeQ8_1, quant::quantizeQ8_1},
    {GgmlType::Q2_K, quant::dequantizeQ2_K, quant::quantizeQ2_K},
    {GgmlType::Q3_K, quant::dequantizeQ3_K, quant::quantizeQ3_K},
    {GgmlType::Q4_K, quant::dequantizeQ4_K, quant::quantizeQ4_K},
    {GgmlType::Q5_K, quant::dequantizeQ5_K, quant::quantizeQ5_K},
    {GgmlType::Q6_K, quant::dequantizeQ6_K, quant::quantizeQ6_K},
    {GgmlType::Q8_K, quant::dequantizeQ8_K, quant::quantizeQ8_K},
    {GgmlType::IQ4_NL, quant::dequantizeIQ4_NL, quant::quantizeIQ4_NL},
    {GgmlType::IQ4_XS, quant::dequantizeIQ4_XS, quant::quantizeIQ4_XS},
};

// The codec for `type` and the number of blocks in a row of n values; throws when either is bad.
const RowCodec& requireCodec(GgmlType type, int64_t n, int64_t& blocks) {
    const RowCodec* codec = nullptr;
    for (const RowCodec& candidate : kCodecs)
        if (candidate.type == type) codec = &candidate;
    if (!codec || !ggmlTypeSupported(type))
        throw std::invalid_argument(std::string("no row conversion for tensor type ") +
                                    ggmlTypeName(type));
    const int64_t blockValues = ggmlBlockValues(type);
    if (n < 0 || n % blockValues != 0)
        throw std::invalid_argument("row length " + std::to_string(n) +
                                    " is not a multiple of the " + ggmlTypeName(type) +
                                    " block size " + std::to_string(blockValues));
    blocks = n / blockValues;
    return *codec;
}

} // namespace

void dequantizeRow(GgmlType type, const void* src, float* dst, int64_t n) {
    int64_t blocks = 0;
    requireCodec(type, n, blocks).dequantize(src, dst, blocks);
}

void quantizeRow(GgmlType type, const float* src, void* dst, int64_t n) {
    int64_t blocks = 0;
    requireCodec(type, n, blocks).quantize(src, dst, blocks);
}

void quantizeRowQ8_0(const float* src, void* dst, int64_t n) {
    quantizeRow(GgmlType::Q8_0, src, dst, n);
}
void quantizeRowQ8_1(const float* src, void* dst, int64_t n) {
    quantizeRow(GgmlType::Q8_1, src, dst, n);
}
void quantizeRowQ8_K(const float* src, void* dst, int64_t n) {
    quantizeRow(GgmlType::Q8_K, src, dst, n);
}

} // namespace sinkscope
