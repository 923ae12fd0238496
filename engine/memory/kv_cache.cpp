#include "memory/kv_cache.h"

#include "gguf/ggml_types.h"
#include "memory/budget.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include <immintrin.h>

namespace sinkscope {

namespace {

constexpr size_t kGroup = static_cast<size_t>(kKvGroup);
constexpr int kFirstRow[] = {0}; // one row at the base pointer, for decodeInt8Rows

size_t groupsPerRow(int kvDim) {
    return (static_cast<size_t>(kvDim) + kGroup - 1) / kGroup;
}

void requireShape(bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument("KV cache shape: " + what);
}

void validate(const KvCacheShape& shape) {
    requireShape(shape.layers > 0, "layers must be > 0, got " + std::to_string(shape.layers));
    requireShape(shape.kvDim > 0, "kvDim must be > 0, got " + std::to_string(shape.kvDim));
    requireShape(shape.window > 0, "window must be > 0, got " + std::to_string(shape.window));
    requireShape(shape.sinkSlots >= 0,
                 "sinkSlots must be >= 0, got " + std::to_string(shape.sinkSlots));
    requireShape(shape.kvBits == 32 || shape.kvBits == 16 || shape.kvBits == 8,
                 "kvBits must be 32, 16 or 8, got " + std::to_string(shape.kvBits));
    requireShape(shape.sinkSlots <= INT_MAX - shape.window, "sinkSlots + window overflows an int");
}

// Bytes of one tensor (K or V): [layers][slots][rowBytes], or an error when it overflows.
size_t tensorBytes(const KvCacheShape& shape, size_t rowBytes) {
    size_t perLayer = 0;
    size_t total = 0;
    const auto slots = static_cast<size_t>(shape.sinkSlots) + static_cast<size_t>(shape.window);
    if (__builtin_mul_overflow(slots, rowBytes, &perLayer) ||
        __builtin_mul_overflow(perLayer, static_cast<size_t>(shape.layers), &total))
        throw std::invalid_argument("KV cache shape: the tensors' size overflows");
    return total;
}

// kvBits 8 row: int8 q[groups * 32] followed by f32 scale[groups]; the last group's padding is 0.
// The scalar encode of groups [firstGroup, groups): scale = the largest magnitude / 127 (a NaN is
// passed over), q = the value / scale rounded half away from zero and clamped to [-127, 127].
void encodeInt8Groups(const float* values, int kvDim, size_t firstGroup, uint8_t* out) {
    const size_t groups = groupsPerRow(kvDim);
    auto* quants = reinterpret_cast<int8_t*>(out);
    uint8_t* scales = out + groups * kGroup;
    for (size_t g = firstGroup; g < groups; ++g) {
        const size_t begin = g * kGroup;
        const size_t end = std::min(begin + kGroup, static_cast<size_t>(kvDim));
        float absMax = 0.0f;
        for (size_t i = begin; i < end; ++i)
            absMax = std::max(absMax, std::fabs(values[i]));
        const float scale = absMax / 127.0f;
        for (size_t i = begin; i < begin + kGroup; ++i) {
            float q = 0.0f;
            if (i < end && scale > 0.0f)
                q = std::clamp(std::round(values[i] / scale), -127.0f, 127.0f);
            // NaN (from a NaN value, or inf / inf) has no int8 value and casting it is undefined:
            // it is stored as 0. Found by tests/fuzz/fuzz_gguf (a model with NaN weights).
            quants[i] = static_cast<int8_t>(std::isnan(q) ? 0.0f : q);
        }
        std::memcpy(scales + g * sizeof(float), &scale, sizeof(float));
    }
}

// The scalar decode of groups [firstGroup, groups): value d is scale * q[d], one rounding.
void decodeInt8Groups(const uint8_t* in, int kvDim, size_t firstGroup, float* values) {
    const size_t groups = groupsPerRow(kvDim);
    const auto* quants = reinterpret_cast<const int8_t*>(in);
    const uint8_t* scales = in + groups * kGroup;
    for (size_t g = firstGroup; g < groups; ++g) {
        float scale = 0.0f;
        std::memcpy(&scale, scales + g * sizeof(float), sizeof(float));
        const size_t end = std::min((g + 1) * kGroup, static_cast<size_t>(kvDim));
        for (size_t d = g * kGroup; d < end; ++d)
            values[d] = scale * static_cast<float>(quants[d]);
    }
}

// Every x86-64 CPU with AVX2 has F16C (and compilers' __builtin_cpu_supports does not all name
// F16C).
bool cpuHasAvx2() {
    static const bool has = (__builtin_cpu_init(), __builtin_cpu_supports("avx2"));
    return has;
}

// encodeInt8Groups for the whole groups, eight values at a time, with the same bytes: the same
// division, the same clamp and NaN rule, the largest magnitude passing NaN over as std::max does
// (_mm256_max_ps returns its second operand for a NaN), and rounding half away from zero built
// from truncation (the vector rounding modes round half to even).
__attribute__((target("avx2"))) void encodeInt8Avx2(const float* values, int kvDim, uint8_t* out) {
    const size_t whole = static_cast<size_t>(kvDim) / kGroup;
    auto* quants = reinterpret_cast<int8_t*>(out);
    uint8_t* scales = out + groupsPerRow(kvDim) * kGroup;
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256 half = _mm256_set1_ps(0.5f);
    const __m256 one = _mm256_set1_ps(1.0f);
    for (size_t g = 0; g < whole; ++g) {
        const float* group = values + g * kGroup;
        __m256 largest = _mm256_setzero_ps();
        for (size_t i = 0; i < kGroup; i += 8)
            largest = _mm256_max_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(group + i)), largest);
        __m128 m = _mm_max_ps(_mm256_castps256_ps128(largest), _mm256_extractf128_ps(largest, 1));
        m = _mm_max_ps(m, _mm_movehl_ps(m, m));
        m = _mm_max_ss(m, _mm_movehdup_ps(m));
        const float scale = _mm_cvtss_f32(m) / 127.0f;
        std::memcpy(scales + g * sizeof(float), &scale, sizeof(float));
        int8_t* q = quants + g * kGroup;
        if (!(scale > 0.0f)) {
            std::memset(q, 0, kGroup);
            continue;
        }
        const __m256 scales8 = _mm256_set1_ps(scale);
        for (size_t i = 0; i < kGroup; i += 8) {
            const __m256 x = _mm256_div_ps(_mm256_loadu_ps(group + i), scales8);
            const __m256 truncated = _mm256_round_ps(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
            const __m256 awayFromZero =
                _mm256_and_ps(_mm256_cmp_ps(_mm256_andnot_ps(sign, _mm256_sub_ps(x, truncated)),
                                            half, _CMP_GE_OQ),
                              _mm256_or_ps(_mm256_and_ps(x, sign), one));
            const __m256 clamped = _mm256_min_ps(
                _mm256_max_ps(_mm256_add_ps(truncated, awayFromZero), _mm256_set1_ps(-127.0f)),
                _mm256_set1_ps(127.0f));
            const __m256 finite = _mm256_andnot_ps(_mm256_cmp_ps(x, x, _CMP_UNORD_Q), clamped);
            const __m256i ints = _mm256_cvttps_epi32(finite);
            const __m128i words =
                _mm_packs_epi32(_mm256_castsi256_si128(ints), _mm256_extracti128_si256(ints, 1));
            _mm_storel_epi64(reinterpret_cast<__m128i*>(q + i), _mm_packs_epi16(words, words));
        }
    }
    if (whole < groupsPerRow(kvDim)) encodeInt8Groups(values, kvDim, whole, out);
}

// The kvBits 8 row of `values`.
void encodeInt8(const float* values, int kvDim, uint8_t* out) {
    if (cpuHasAvx2()) return encodeInt8Avx2(values, kvDim, out);
    encodeInt8Groups(values, kvDim, 0, out);
}

// decodeInt8Rows with the whole groups eight values at a time: the same single multiply per
// value, so the same bits as decodeInt8Groups, its reference.
__attribute__((target("avx2"))) void decodeInt8RowsAvx2(const uint8_t* base, size_t rowBytes,
                                                        std::span<const int> slots, int kvDim,
                                                        float* out) {
    const size_t whole = static_cast<size_t>(kvDim) / kGroup;
    const size_t scalesAt = groupsPerRow(kvDim) * kGroup;
    for (size_t i = 0; i < slots.size(); ++i) {
        const uint8_t* in = base + static_cast<size_t>(slots[i]) * rowBytes;
        float* values = out + i * static_cast<size_t>(kvDim);
        for (size_t g = 0; g < whole; ++g) {
            float scale = 0.0f;
            std::memcpy(&scale, in + scalesAt + g * sizeof(float), sizeof(float));
            const __m256 scales8 = _mm256_set1_ps(scale);
            for (size_t d = g * kGroup; d < (g + 1) * kGroup; d += 8) {
                const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(in + d));
                const __m256 q = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes));
                _mm256_storeu_ps(values + d, _mm256_mul_ps(scales8, q));
            }
        }
        if (whole * kGroup < static_cast<size_t>(kvDim)) decodeInt8Groups(in, kvDim, whole, values);
    }
}

// The int8 rows at base + slot * rowBytes, decoded to out [slots.size()][kvDim].
void decodeInt8Rows(const uint8_t* base, size_t rowBytes, std::span<const int> slots, int kvDim,
                    float* out) {
    if (cpuHasAvx2()) return decodeInt8RowsAvx2(base, rowBytes, slots, kvDim, out);
    for (size_t i = 0; i < slots.size(); ++i)
        decodeInt8Groups(base + static_cast<size_t>(slots[i]) * rowBytes, kvDim, 0,
                         out + i * static_cast<size_t>(kvDim));
}

void encodeFp16(const float* values, int kvDim, uint8_t* out) {
    for (int i = 0; i < kvDim; ++i) {
        const uint16_t half = fp32ToFp16(values[i]);
        std::memcpy(out + static_cast<size_t>(i) * sizeof(half), &half, sizeof(half));
    }
}

// With F16C the conversion runs eight values at a time in hardware; it is bit-exact with
// fp16ToFp32, the scalar reference (tests/test_kv_cache.cpp compares them). Returns how many
// values it converted; only called where the CPU has F16C.
__attribute__((target("avx,f16c"))) int decodeFp16Hardware(const uint8_t* in, int kvDim,
                                                           float* values) {
    int i = 0;
    for (; i + 8 <= kvDim; i += 8) {
        const __m128i halves = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 2 * i));
        _mm256_storeu_ps(values + i, _mm256_cvtph_ps(halves));
    }
    return i;
}

void decodeFp16(const uint8_t* in, int kvDim, float* values) {
    int i = cpuHasAvx2() ? decodeFp16Hardware(in, kvDim, values) : 0;
    for (; i < kvDim; ++i) {
        uint16_t half = 0;
        std::memcpy(&half, in + static_cast<size_t>(i) * sizeof(half), sizeof(half));
        values[i] = fp16ToFp32(half);
    }
}

// columns[d * stride + i] = rows[i * width + d] for the eight rows i and eight values d: an 8 x 8
// transpose in registers (pairs interleaved, then quads, then the 128-bit halves).
__attribute__((target("avx"))) void transpose8x8(const float* rows, size_t width, float* columns,
                                                 size_t stride) {
    __m256 r[8];
    for (size_t i = 0; i < 8; ++i)
        r[i] = _mm256_loadu_ps(rows + i * width);
    __m256 pairs[8];
    for (size_t i = 0; i < 8; i += 2) {
        pairs[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        pairs[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    __m256 quads[8];
    for (size_t i = 0; i < 8; i += 4) {
        quads[i] = _mm256_shuffle_ps(pairs[i], pairs[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
        quads[i + 1] = _mm256_shuffle_ps(pairs[i], pairs[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
        quads[i + 2] = _mm256_shuffle_ps(pairs[i + 1], pairs[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
        quads[i + 3] = _mm256_shuffle_ps(pairs[i + 1], pairs[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (size_t k = 0; k < 4; ++k) {
        _mm256_storeu_ps(columns + k * stride,
                         _mm256_permute2f128_ps(quads[k], quads[k + 4], 0x20));
        _mm256_storeu_ps(columns + (k + 4) * stride,
                         _mm256_permute2f128_ps(quads[k], quads[k + 4], 0x31));
    }
}

// Row versions, unique in the process (version 0: never written).
uint64_t nextRowVersion() {
    static std::atomic<uint64_t> last{0};
    return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

} // namespace

KvCache::KvCache(const KvCacheShape& shape) : m_shape(shape) {
    validate(m_shape);
    const size_t bytes = tensorBytes(m_shape, rowBytes());
    m_keys.assign(bytes, 0);
    m_values.assign(bytes, 0);
    m_slots.assign(static_cast<size_t>(slotCount()), SlotInfo{});
    m_rowVersions.assign(static_cast<size_t>(m_shape.layers) * static_cast<size_t>(slotCount()), 0);
}

int KvCache::place(int32_t token, int64_t position, bool sink) {
    int slot = 0;
    SlotKind kind = SlotKind::Sink;
    m_lastEvicted = SlotInfo{};
    if (sink && m_sinksUsed < m_shape.sinkSlots) {
        slot = m_sinksUsed++;
    } else {
        slot = ringHead();
        kind = SlotKind::Ring;
        ++m_ringWrites;
        // The occupant of this ring slot is the token W non-sink tokens back: it just left the
        // window.
        if (m_slots[static_cast<size_t>(slot)].kind != SlotKind::Empty) {
            m_lastEvicted = m_slots[static_cast<size_t>(slot)];
            ++m_evictions;
        }
    }
    m_slots[static_cast<size_t>(slot)] = SlotInfo{token, position, kind};
    return slot;
}

void KvCache::writeK(int layer, int slot, const float* values) {
    encode(values, row(m_keys, layer, slot));
    m_rowVersions[rowIndex(layer, slot)] = nextRowVersion();
}

void KvCache::writeV(int layer, int slot, const float* values) {
    encode(values, row(m_values, layer, slot));
    m_rowVersions[rowIndex(layer, slot)] = nextRowVersion();
}

void KvCache::copyRows(const KvCache& from, int count) {
    const KvCacheShape& other = from.shape();
    if (other.layers != m_shape.layers || other.kvDim != m_shape.kvDim ||
        other.kvBits != m_shape.kvBits)
        throw std::invalid_argument("KV cache: rows of another shape cannot be copied");
    if (count <= 0) return;
    // Both throw past their cache (every layer has the same slots).
    (void)from.row(from.m_keys, 0, count - 1);
    (void)row(m_keys, 0, count - 1);
    const size_t bytes = static_cast<size_t>(count) * rowBytes();
    for (int layer = 0; layer < m_shape.layers; ++layer) {
        std::memcpy(row(m_keys, layer, 0), from.row(from.m_keys, layer, 0), bytes);
        std::memcpy(row(m_values, layer, 0), from.row(from.m_values, layer, 0), bytes);
        std::copy_n(from.m_rowVersions.begin() + static_cast<ptrdiff_t>(from.rowIndex(layer, 0)),
                    count, m_rowVersions.begin() + static_cast<ptrdiff_t>(rowIndex(layer, 0)));
    }
}

uint64_t KvCache::rowVersion(int layer, int slot) const {
    (void)row(m_keys, layer, slot); // throws row()'s error outside the cache
    return m_rowVersions[rowIndex(layer, slot)];
}

size_t KvCache::rowIndex(int layer, int slot) const {
    return static_cast<size_t>(layer) * static_cast<size_t>(slotCount()) +
           static_cast<size_t>(slot);
}

void KvCache::readK(int layer, int slot, float* values) const {
    decode(row(m_keys, layer, slot), values);
}

void KvCache::readV(int layer, int slot, float* values) const {
    decode(row(m_values, layer, slot), values);
}

void KvCache::gatherK(int layer, std::span<const int> slots, float* columns,
                      size_t columnStride) const {
    const uint8_t* base = checkedLayer(m_keys, layer, slots);
    const size_t count = slots.size();
    const size_t stride = columnStride ? columnStride : count;
    const auto width = static_cast<size_t>(m_shape.kvDim);
    // kGatherRows rows at a time: decoded contiguously into this thread's scratch ([kGatherRows]
    // [kvDim]), then each value's run of kGatherRows slots written at once (one scattered value
    // per slot and value would touch a cache line per write), eight values by eight with AVX.
    constexpr size_t kGatherRows = 8;
    thread_local std::vector<float> scratch;
    if (scratch.size() < kGatherRows * width) scratch.resize(kGatherRows * width);
    const bool wide = cpuHasAvx2();
    for (size_t first = 0; first < count; first += kGatherRows) {
        const size_t rows = std::min(kGatherRows, count - first);
        decodeRows(base, slots.subspan(first, rows), scratch.data());
        size_t d = 0;
        if (wide && rows == kGatherRows)
            for (; d + 8 <= width; d += 8)
                transpose8x8(scratch.data() + d, width, columns + d * stride + first, stride);
        for (; d < width; ++d) {
            float* run = columns + d * stride + first;
            for (size_t i = 0; i < rows; ++i)
                run[i] = scratch[i * width + d];
        }
    }
}

void KvCache::gatherV(int layer, std::span<const int> slots, float* rows) const {
    decodeRows(checkedLayer(m_values, layer, slots), slots, rows);
}

const uint8_t* KvCache::checkedLayer(const std::vector<uint8_t>& store, int layer,
                                     std::span<const int> slots) const {
    for (const int slot : slots)
        if (slot < 0 || slot >= slotCount()) (void)row(store, layer, slot); // throws row()'s error
    return row(store, layer, 0);
}

int KvCache::ringHead() const {
    return m_shape.sinkSlots + static_cast<int>(m_ringWrites % m_shape.window);
}

int64_t KvCache::bytesAllocated() const {
    return static_cast<int64_t>(m_keys.size() + m_values.size());
}

void KvCache::clear() {
    std::fill(m_slots.begin(), m_slots.end(), SlotInfo{});
    m_sinksUsed = 0;
    m_ringWrites = 0;
    m_evictions = 0;
    m_lastEvicted = SlotInfo{};
}

size_t KvCache::rowBytes() const {
    const auto width = static_cast<size_t>(m_shape.kvDim);
    switch (m_shape.kvBits) {
    case 32:
        return width * sizeof(float);
    case 16:
        return width * sizeof(uint16_t);
    default: // 8: whole groups of int8, then one f32 scale per group
        return groupsPerRow(m_shape.kvDim) * (kGroup + sizeof(float));
    }
}

uint8_t* KvCache::row(std::vector<uint8_t>& store, int layer, int slot) {
    return const_cast<uint8_t*>(std::as_const(*this).row(store, layer, slot));
}

const uint8_t* KvCache::row(const std::vector<uint8_t>& store, int layer, int slot) const {
    if (layer < 0 || layer >= m_shape.layers || slot < 0 || slot >= slotCount())
        throw std::out_of_range("KV cache: row (layer " + std::to_string(layer) + ", slot " +
                                std::to_string(slot) + ") is outside [" +
                                std::to_string(m_shape.layers) + "][" +
                                std::to_string(slotCount()) + "]");
    return store.data() + rowIndex(layer, slot) * rowBytes();
}

void KvCache::encode(const float* values, uint8_t* out) const {
    switch (m_shape.kvBits) {
    case 32:
        std::memcpy(out, values, rowBytes());
        break;
    case 16:
        encodeFp16(values, m_shape.kvDim, out);
        break;
    default:
        encodeInt8(values, m_shape.kvDim, out);
        break;
    }
}

void KvCache::decode(const uint8_t* in, float* values) const {
    switch (m_shape.kvBits) {
    case 32:
        std::memcpy(values, in, rowBytes());
        break;
    case 16:
        decodeFp16(in, m_shape.kvDim, values);
        break;
    default:
        decodeInt8Rows(in, 0, kFirstRow, m_shape.kvDim, values);
        break;
    }
}

void KvCache::decodeRows(const uint8_t* base, std::span<const int> slots, float* out) const {
    const size_t bytes = rowBytes();
    const auto width = static_cast<size_t>(m_shape.kvDim);
    if (m_shape.kvBits == 8) return decodeInt8Rows(base, bytes, slots, m_shape.kvDim, out);
    for (size_t i = 0; i < slots.size(); ++i)
        decode(base + static_cast<size_t>(slots[i]) * bytes, out + i * width);
}

} // namespace sinkscope
