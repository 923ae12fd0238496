// Writes GGUF files (v3 by default, v2 on request): deterministic synthetic models for tests
// and benchmarks, and hand-made corrupt files. Metadata keeps insertion order; setting a key twice
// writes it twice (which the reader rejects), so corrupt-file tests can build duplicates.
// An alignment other than 32 is written as `general.alignment`, first. Tensor data is laid out as
// ggml does: in insertion order, each tensor padded to the alignment.
// Shapes or data that do not match throw std::invalid_argument (a programming error).
#pragma once

#include "gguf/gguf.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sinkscope {

class GgufWriter {
public:
    explicit GgufWriter(uint32_t version = 3, uint32_t alignment = 32);

    void setUint32(const std::string& key, uint32_t value);
    void setInt32(const std::string& key, int32_t value);
    void setUint64(const std::string& key, uint64_t value);
    void setFloat32(const std::string& key, float value);
    void setBool(const std::string& key, bool value);
    void setString(const std::string& key, const std::string& value);
    void setStringArray(const std::string& key, const std::vector<std::string>& values);
    void setFloat32Array(const std::string& key, const std::vector<float>& values);
    void setInt32Array(const std::string& key, const std::vector<int32_t>& values);

    // `data` is already laid out in `type`'s block format; dims are ne[0] first.
    void addTensor(const std::string& name, GgmlType type, std::vector<int64_t> dims,
                   std::vector<uint8_t> data);
    // Stores f32 values as `type` (F32, F16, Q8_0, Q4_0), quantizing row by row.
    void addTensorFromFloats(const std::string& name, std::vector<int64_t> dims,
                             const std::vector<float>& values, GgmlType type = GgmlType::F32);

    std::vector<uint8_t> bytes() const;
    bool writeFile(const std::string& path, std::string& error) const;

private:
    struct Entry {
        std::string key;
        GgufValueType type;
        std::vector<uint8_t> payload; // encoded value (after the type id)
    };
    struct Tensor {
        std::string name;
        GgmlType type;
        std::vector<int64_t> dims;
        std::vector<uint8_t> data;
    };
    uint32_t m_version;
    uint32_t m_alignment;
    std::vector<Entry> m_entries;
    std::vector<Tensor> m_tensors;
};

} // namespace sinkscope
