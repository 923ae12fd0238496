// What the GGUF suites share: a byte builder for hand-made files, their header, a small model.
#pragma once

#include "gguf/gguf.h"
#include "model/synthetic.h"

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace sinkscope::test {

// Little-endian byte builder for hand-made (often corrupt) files.
class Bytes {
public:
    template <typename T> Bytes& put(T value) {
        const size_t at = m_data.size();
        m_data.resize(at + sizeof(T));
        std::memcpy(m_data.data() + at, &value, sizeof(T));
        return *this;
    }
    Bytes& u8(uint8_t value) { return put(value); }
    Bytes& u32(uint32_t value) { return put(value); }
    Bytes& u64(uint64_t value) { return put(value); }
    Bytes& str(std::string_view text) {
        u64(text.size());
        m_data.insert(m_data.end(), text.begin(), text.end());
        return *this;
    }
    Bytes& zeros(size_t count) {
        m_data.resize(m_data.size() + count, 0);
        return *this;
    }
    Bytes& padTo(size_t alignment) {
        m_data.resize((m_data.size() + alignment - 1) / alignment * alignment, 0);
        return *this;
    }
    // A tensor info: name, n_dims, ne[], ggml type, offset.
    Bytes& tensor(std::string_view name, const std::vector<uint64_t>& dims, uint32_t type,
                  uint64_t offset) {
        str(name).u32(static_cast<uint32_t>(dims.size()));
        for (uint64_t dim : dims)
            u64(dim);
        return u32(type).u64(offset);
    }
    std::vector<uint8_t> data() const { return m_data; }

private:
    std::vector<uint8_t> m_data;
};

inline Bytes header(uint64_t tensorCount, uint64_t keyValueCount, uint32_t version = 3) {
    Bytes bytes;
    bytes.u32(0x46554747u).u32(version).u64(tensorCount).u64(keyValueCount);
    return bytes;
}

inline constexpr uint32_t kF32 = static_cast<uint32_t>(GgmlType::F32);
inline constexpr uint32_t kArray = static_cast<uint32_t>(GgufValueType::Array);

// A small synthetic model: 2 layers of F32 weights.
inline SyntheticSpec smallSpec() {
    SyntheticSpec spec;
    spec.nVocab = 300;
    spec.nEmbd = 32;
    spec.nFf = 64;
    return spec;
}

} // namespace sinkscope::test
