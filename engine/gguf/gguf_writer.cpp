#include "gguf/gguf_writer.h"

#include "gguf/dequantize.h"

#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace sinkscope {

namespace {

static_assert(std::endian::native == std::endian::little,
              "the writer copies host integers straight into little-endian GGUF fields");

constexpr uint32_t kDefaultAlignment = 32;
constexpr size_t kMaxDims = 4;

template <typename T> void append(std::vector<uint8_t>& out, T value) {
    const size_t at = out.size();
    out.resize(at + sizeof(T));
    std::memcpy(out.data() + at, &value, sizeof(T));
}

void appendString(std::vector<uint8_t>& out, const std::string& text) {
    append<uint64_t>(out, text.size());
    out.insert(out.end(), text.begin(), text.end());
}

void padTo(std::vector<uint8_t>& out, uint64_t alignment) {
    out.resize((out.size() + alignment - 1) / alignment * alignment, 0);
}

uint64_t paddedSize(uint64_t size, uint64_t alignment) {
    return (size + alignment - 1) / alignment * alignment;
}

// Element count of dims (ne[0] first), rejecting shapes the reader would reject.
uint64_t checkedElementCount(const std::string& name, const std::vector<int64_t>& dims) {
    if (dims.empty() || dims.size() > kMaxDims)
        throw std::invalid_argument("tensor '" + name + "' needs 1 to 4 dimensions");
    uint64_t count = 1;
    for (int64_t dim : dims) {
        if (dim <= 0 || static_cast<uint64_t>(dim) > static_cast<uint64_t>(INT64_MAX) / count)
            throw std::invalid_argument("tensor '" + name + "' has a bad dimension");
        count *= static_cast<uint64_t>(dim);
    }
    return count;
}

template <typename T>
std::vector<uint8_t> arrayPayload(GgufValueType elementType, const std::vector<T>& values) {
    std::vector<uint8_t> payload;
    append<uint32_t>(payload, static_cast<uint32_t>(elementType));
    append<uint64_t>(payload, values.size());
    for (const T& value : values) {
        if constexpr (std::is_same_v<T, std::string>)
            appendString(payload, value);
        else
            append<T>(payload, value);
    }
    return payload;
}

template <typename T> std::vector<uint8_t> scalarPayload(T value) {
    std::vector<uint8_t> payload;
    append<T>(payload, value);
    return payload;
}

} // namespace

GgufWriter::GgufWriter(uint32_t version, uint32_t alignment)
    : m_version(version), m_alignment(alignment) {
    if (version != 2 && version != 3)
        throw std::invalid_argument("GgufWriter writes GGUF v2 or v3, not v" +
                                    std::to_string(version));
    if (!std::has_single_bit(alignment))
        throw std::invalid_argument("GgufWriter alignment must be a power of two");
    if (alignment != kDefaultAlignment) setUint32("general.alignment", alignment);
}

void GgufWriter::setUint32(const std::string& key, uint32_t value) {
    m_entries.push_back({key, GgufValueType::Uint32, scalarPayload(value)});
}

void GgufWriter::setInt32(const std::string& key, int32_t value) {
    m_entries.push_back({key, GgufValueType::Int32, scalarPayload(value)});
}

void GgufWriter::setUint64(const std::string& key, uint64_t value) {
    m_entries.push_back({key, GgufValueType::Uint64, scalarPayload(value)});
}

void GgufWriter::setFloat32(const std::string& key, float value) {
    m_entries.push_back({key, GgufValueType::Float32, scalarPayload(value)});
}

void GgufWriter::setBool(const std::string& key, bool value) {
    m_entries.push_back({key, GgufValueType::Bool, scalarPayload<uint8_t>(value ? 1 : 0)});
}

void GgufWriter::setString(const std::string& key, const std::string& value) {
    std::vector<uint8_t> payload;
    appendString(payload, value);
    m_entries.push_back({key, GgufValueType::String, std::move(payload)});
}

void GgufWriter::setStringArray(const std::string& key, const std::vector<std::string>& values) {
    m_entries.push_back({key, GgufValueType::Array, arrayPayload(GgufValueType::String, values)});
}

void GgufWriter::setFloat32Array(const std::string& key, const std::vector<float>& values) {
    m_entries.push_back({key, GgufValueType::Array, arrayPayload(GgufValueType::Float32, values)});
}

void GgufWriter::setInt32Array(const std::string& key, const std::vector<int32_t>& values) {
    m_entries.push_back({key, GgufValueType::Array, arrayPayload(GgufValueType::Int32, values)});
}

void GgufWriter::addTensor(const std::string& name, GgmlType type, std::vector<int64_t> dims,
                           std::vector<uint8_t> data) {
    const uint64_t count = checkedElementCount(name, dims);
    if (dims[0] % ggmlBlockValues(type) != 0 || ggmlByteSize(type, count) != data.size())
        throw std::invalid_argument("tensor '" + name + "': data does not match its " +
                                    ggmlTypeName(type) + " shape");
    m_tensors.push_back({name, type, std::move(dims), std::move(data)});
}

void GgufWriter::addTensorFromFloats(const std::string& name, std::vector<int64_t> dims,
                                     const std::vector<float>& values, GgmlType type) {
    const uint64_t count = checkedElementCount(name, dims);
    if (count != values.size() || !ggmlTypeSupported(type) || dims[0] % ggmlBlockValues(type) != 0)
        throw std::invalid_argument("tensor '" + name + "': values do not fit its shape as " +
                                    ggmlTypeName(type));
    const int64_t rowLength = dims[0];
    const auto rowBytes = static_cast<size_t>(*ggmlByteSize(type, rowLength));
    const size_t rows = values.size() / static_cast<size_t>(rowLength);
    std::vector<uint8_t> data(rows * rowBytes); // [rows][rowBytes]
    for (size_t row = 0; row < rows; ++row)
        quantizeRow(type, values.data() + row * rowLength, data.data() + row * rowBytes, rowLength);
    m_tensors.push_back({name, type, std::move(dims), std::move(data)});
}

// Header, key-values, tensor infos, padding, then each tensor's data padded to the alignment:
// the layout ggml writes, so offsets are the running sum of padded sizes in insertion order.
std::vector<uint8_t> GgufWriter::bytes() const {
    std::vector<uint8_t> out;
    append<uint32_t>(out, 0x46554747u); // "GGUF"
    append<uint32_t>(out, m_version);
    append<uint64_t>(out, m_tensors.size());
    append<uint64_t>(out, m_entries.size());
    for (const Entry& entry : m_entries) {
        appendString(out, entry.key);
        append<uint32_t>(out, static_cast<uint32_t>(entry.type));
        out.insert(out.end(), entry.payload.begin(), entry.payload.end());
    }
    uint64_t offset = 0;
    for (const Tensor& tensor : m_tensors) {
        appendString(out, tensor.name);
        append<uint32_t>(out, static_cast<uint32_t>(tensor.dims.size()));
        for (int64_t dim : tensor.dims)
            append<uint64_t>(out, static_cast<uint64_t>(dim));
        append<uint32_t>(out, static_cast<uint32_t>(tensor.type));
        append<uint64_t>(out, offset);
        offset += paddedSize(tensor.data.size(), m_alignment);
    }
    padTo(out, m_alignment);
    for (const Tensor& tensor : m_tensors) {
        out.insert(out.end(), tensor.data.begin(), tensor.data.end());
        padTo(out, m_alignment);
    }
    return out;
}

bool GgufWriter::writeFile(const std::string& path, std::string& error) const {
    const std::vector<uint8_t> content = bytes();
    std::FILE* file = std::fopen(path.c_str(), "wb");
    if (!file) {
        error = "cannot create " + path + ": " + std::strerror(errno);
        return false;
    }
    const bool written = std::fwrite(content.data(), 1, content.size(), file) == content.size();
    const int writeErrno = errno;
    const bool closed = std::fclose(file) == 0;
    if (!written || !closed) {
        error = "cannot write " + path + ": " + std::strerror(written ? errno : writeErrno);
        return false;
    }
    return true;
}

} // namespace sinkscope
