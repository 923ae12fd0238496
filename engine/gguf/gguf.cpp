#include "gguf/gguf.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <new>
#include <numeric>
#include <stdexcept>
#include <unordered_set>

namespace sinkscope {

namespace {

static_assert(std::endian::native == std::endian::little,
              "the reader copies little-endian GGUF fields straight into host integers");

// Thrown inside parse(); open() and fromBytes() turn it into the error string.
class GgufError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

constexpr uint64_t kDefaultAlignment = 32;
constexpr uint32_t kMaxDims = 4;
// Smallest encodings, used to bound counts before anything is reserved:
// a key-value is an empty key (8) + value type (4) + a one-byte value;
// a tensor info is an empty name (8) + n_dims (4) + one dim (8) + type (4) + offset (8).
constexpr uint64_t kMinKeyValueBytes = 8 + 4 + 1;
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;

// Names from the file, made safe for a one-line message: control bytes become '?' and long
// names are cut.
std::string printable(std::string_view text) {
    constexpr size_t kMaxShown = 80;
    std::string shown;
    for (char c : text.substr(0, kMaxShown)) {
        const auto byte = static_cast<unsigned char>(c);
        shown += (byte < 0x20 || byte == 0x7f) ? '?' : c;
    }
    if (text.size() > kMaxShown) shown += "...";
    return shown;
}

bool isScalarValueType(uint32_t id) {
    return id <= static_cast<uint32_t>(GgufValueType::Float64) &&
           id != static_cast<uint32_t>(GgufValueType::Array);
}

// Bytes one element takes in the file (a string's length prefix for strings).
uint64_t encodedSize(GgufValueType type) {
    switch (type) {
    case GgufValueType::Uint8:
    case GgufValueType::Int8:
    case GgufValueType::Bool:
        return 1;
    case GgufValueType::Uint16:
    case GgufValueType::Int16:
        return 2;
    case GgufValueType::Uint32:
    case GgufValueType::Int32:
    case GgufValueType::Float32:
        return 4;
    default:
        return 8;
    }
}

// The one place that touches untrusted bytes: every read checks the bytes left first, and
// every failure names the current context ("metadata key 'x'", "tensor 'y'").
class Cursor {
public:
    Cursor(const uint8_t* data, uint64_t size) : m_data(data), m_size(size) {}

    uint64_t position() const { return m_position; }
    uint64_t remaining() const { return m_size - m_position; }
    void setContext(std::string context) { m_context = std::move(context); }

    [[noreturn]] void fail(const std::string& message) const {
        throw GgufError(m_context.empty() ? message : m_context + ": " + message);
    }

    template <typename T> T read(const char* what) {
        if (remaining() < sizeof(T))
            fail(std::string(what) + " runs past the end of the file (needs " +
                 std::to_string(sizeof(T)) + " bytes at offset " + std::to_string(m_position) +
                 ", file size " + std::to_string(m_size) + ")");
        T value;
        std::memcpy(&value, m_data + m_position, sizeof(T));
        m_position += sizeof(T);
        return value;
    }

    // A u64 length and that many bytes; the view points into the file.
    std::string_view readString(const char* what) {
        const auto length = read<uint64_t>(what);
        if (length > remaining())
            fail(std::string(what) + " length " + std::to_string(length) +
                 " runs past the end of the file (" + std::to_string(remaining()) +
                 " bytes left at offset " + std::to_string(m_position) + ")");
        const std::string_view text(reinterpret_cast<const char*>(m_data + m_position), length);
        m_position += length;
        return text;
    }

    // Rejects a count whose elements (each at least `minBytesEach`) cannot fit in what is left,
    // so no container is ever sized from an unchecked count.
    void requireFits(uint64_t count, uint64_t minBytesEach, const char* what) const {
        if (count > remaining() / minBytesEach)
            fail(std::string(what) + " " + std::to_string(count) +
                 " runs past the end of the file (at least " + std::to_string(minBytesEach) +
                 " bytes each, " + std::to_string(remaining()) + " left)");
    }

private:
    const uint8_t* m_data; // [m_size]
    uint64_t m_size;
    uint64_t m_position = 0;
    std::string m_context;
};

int64_t readSignedScalar(Cursor& cursor, GgufValueType type) {
    switch (type) {
    case GgufValueType::Int8:
        return cursor.read<int8_t>("int8 value");
    case GgufValueType::Int16:
        return cursor.read<int16_t>("int16 value");
    case GgufValueType::Int32:
        return cursor.read<int32_t>("int32 value");
    default:
        return cursor.read<int64_t>("int64 value");
    }
}

uint64_t readUnsignedScalar(Cursor& cursor, GgufValueType type) {
    switch (type) {
    case GgufValueType::Uint8:
        return cursor.read<uint8_t>("uint8 value");
    case GgufValueType::Uint16:
        return cursor.read<uint16_t>("uint16 value");
    case GgufValueType::Uint32:
        return cursor.read<uint32_t>("uint32 value");
    default:
        return cursor.read<uint64_t>("uint64 value");
    }
}

double readFloatScalar(Cursor& cursor, GgufValueType type) {
    if (type == GgufValueType::Float32) return cursor.read<float>("float32 value");
    return cursor.read<double>("float64 value");
}

bool readBool(Cursor& cursor) {
    const auto byte = cursor.read<uint8_t>("bool value");
    if (byte > 1) cursor.fail("bool value " + std::to_string(byte) + " is not 0 or 1");
    return byte == 1;
}

bool isSigned(GgufValueType type) {
    return type == GgufValueType::Int8 || type == GgufValueType::Int16 ||
           type == GgufValueType::Int32 || type == GgufValueType::Int64;
}

bool isUnsigned(GgufValueType type) {
    return type == GgufValueType::Uint8 || type == GgufValueType::Uint16 ||
           type == GgufValueType::Uint32 || type == GgufValueType::Uint64;
}

bool isFloat(GgufValueType type) {
    return type == GgufValueType::Float32 || type == GgufValueType::Float64;
}

// Integer array elements of any width, as int64.
std::vector<int64_t> readIntElements(Cursor& cursor, GgufValueType type, uint64_t count) {
    std::vector<int64_t> values;
    values.reserve(count);
    for (uint64_t i = 0; i < count; ++i) {
        if (isSigned(type)) {
            values.push_back(readSignedScalar(cursor, type));
            continue;
        }
        const uint64_t value = readUnsignedScalar(cursor, type);
        if (value > static_cast<uint64_t>(INT64_MAX))
            cursor.fail("array element " + std::to_string(i) + ": uint64 value " +
                        std::to_string(value) + " does not fit in int64");
        values.push_back(static_cast<int64_t>(value));
    }
    return values;
}

GgufValue::Storage readArrayElements(Cursor& cursor, GgufValueType type, uint64_t count) {
    if (isSigned(type) || isUnsigned(type)) return readIntElements(cursor, type, count);
    if (isFloat(type)) {
        std::vector<double> values;
        values.reserve(count);
        for (uint64_t i = 0; i < count; ++i)
            values.push_back(readFloatScalar(cursor, type));
        return values;
    }
    if (type == GgufValueType::Bool) {
        std::vector<bool> values;
        values.reserve(count);
        for (uint64_t i = 0; i < count; ++i)
            values.push_back(readBool(cursor));
        return values;
    }
    std::vector<std::string> values;
    values.reserve(count);
    for (uint64_t i = 0; i < count; ++i)
        values.emplace_back(cursor.readString("array string"));
    return values;
}

// Arrays of arrays are valid GGUF but no model key uses them, so they are rejected by name
// rather than decoded.
GgufValue readArray(Cursor& cursor) {
    const auto elementId = cursor.read<uint32_t>("array element type");
    if (elementId == static_cast<uint32_t>(GgufValueType::Array))
        cursor.fail("arrays of arrays are not supported");
    if (!isScalarValueType(elementId))
        cursor.fail("unknown array element type " + std::to_string(elementId));
    const auto elementType = static_cast<GgufValueType>(elementId);
    const auto count = cursor.read<uint64_t>("array length");
    cursor.requireFits(count, encodedSize(elementType), "array length");
    return GgufValue(GgufValueType::Array, elementType,
                     readArrayElements(cursor, elementType, count));
}

GgufValue readValue(Cursor& cursor) {
    const auto typeId = cursor.read<uint32_t>("value type");
    if (typeId == static_cast<uint32_t>(GgufValueType::Array)) return readArray(cursor);
    if (!isScalarValueType(typeId)) cursor.fail("unknown value type " + std::to_string(typeId));
    const auto type = static_cast<GgufValueType>(typeId);
    if (isSigned(type)) return GgufValue(type, type, readSignedScalar(cursor, type));
    if (isUnsigned(type)) return GgufValue(type, type, readUnsignedScalar(cursor, type));
    if (isFloat(type)) return GgufValue(type, type, readFloatScalar(cursor, type));
    if (type == GgufValueType::Bool) return GgufValue(type, type, readBool(cursor));
    return GgufValue(type, type, std::string(cursor.readString("string")));
}

uint64_t readAlignment(const GgufValue* value) {
    if (!value) return kDefaultAlignment;
    if (value->type() != GgufValueType::Uint32)
        throw GgufError(std::string("general.alignment must be a uint32 (got ") +
                        ggufValueTypeName(value->type()) + ")");
    const auto alignment = static_cast<uint64_t>(*value->asInt());
    if (!std::has_single_bit(alignment))
        throw GgufError("general.alignment must be a power of two (got " +
                        std::to_string(alignment) + ")");
    return alignment;
}

// ne[0] first; each read as u64 and rejected when it would be negative as ggml's int64 ne.
std::vector<int64_t> readDims(Cursor& cursor) {
    const auto dimCount = cursor.read<uint32_t>("dimension count");
    if (dimCount == 0 || dimCount > kMaxDims)
        cursor.fail("has " + std::to_string(dimCount) + " dimensions (at least 1, at most 4)");
    std::vector<int64_t> dims;
    for (uint32_t i = 0; i < dimCount; ++i) {
        const auto raw = cursor.read<uint64_t>("dimension");
        const auto dim = static_cast<int64_t>(raw);
        if (dim < 0)
            cursor.fail("dimension " + std::to_string(i) + " is negative (" + std::to_string(dim) +
                        ")");
        if (dim == 0) cursor.fail("dimension " + std::to_string(i) + " is zero");
        dims.push_back(dim);
    }
    return dims;
}

uint64_t checkedElementCount(const Cursor& cursor, const std::vector<int64_t>& dims) {
    uint64_t count = 1;
    for (int64_t dim : dims) {
        if (static_cast<uint64_t>(dim) > static_cast<uint64_t>(INT64_MAX) / count)
            cursor.fail("element count overflows");
        count *= static_cast<uint64_t>(dim);
    }
    return count;
}

GgmlType readTensorType(Cursor& cursor) {
    const auto typeId = cursor.read<uint32_t>("tensor type");
    if (!ggmlTypeKnown(typeId)) cursor.fail("unknown tensor type " + std::to_string(typeId));
    return static_cast<GgmlType>(typeId);
}

uint64_t checkedByteSize(const Cursor& cursor, const GgufTensorInfo& tensor) {
    const int64_t blockValues = ggmlBlockValues(tensor.type);
    if (tensor.dims[0] % blockValues != 0)
        cursor.fail("row length " + std::to_string(tensor.dims[0]) + " is not a multiple of the " +
                    ggmlTypeName(tensor.type) + " block size " + std::to_string(blockValues));
    const std::optional<uint64_t> size = ggmlByteSize(tensor.type, tensor.elementCount);
    if (!size) cursor.fail("byte size overflows");
    return *size;
}

} // namespace

std::unique_ptr<GgufFile> GgufFile::parsed(std::unique_ptr<GgufFile> file, std::string& error) {
    try {
        file->parse();
    } catch (const GgufError& failure) {
        error = file->m_path + ": " + failure.what();
        return nullptr;
    } catch (const std::bad_alloc&) {
        error = file->m_path + ": out of memory while reading the header";
        return nullptr;
    }
    return file;
}

const GgufValue* GgufFile::find(std::string_view key) const {
    for (const GgufKeyValue& entry : m_metadata)
        if (entry.key == key) return &entry.value;
    return nullptr;
}

const GgufTensorInfo* GgufFile::findTensor(std::string_view name) const {
    const auto found = m_tensorIndex.find(name);
    return found == m_tensorIndex.end() ? nullptr : &m_tensors[found->second];
}

std::optional<int64_t> GgufFile::getInt(std::string_view key) const {
    const GgufValue* value = find(key);
    return value ? value->asInt() : std::nullopt;
}

std::optional<double> GgufFile::getFloat(std::string_view key) const {
    const GgufValue* value = find(key);
    return value ? value->asFloat() : std::nullopt;
}

std::optional<std::string> GgufFile::getString(std::string_view key) const {
    const GgufValue* value = find(key);
    const std::string* text = value ? value->asString() : nullptr;
    return text ? std::optional<std::string>(*text) : std::nullopt;
}

void GgufFile::parse() {
    if (m_size == 0) throw GgufError("the file is empty (0 bytes), not a GGUF file");
    Cursor cursor(m_data, m_size);
    cursor.setContext("header");
    if (cursor.read<uint32_t>("magic") != 0x46554747u) // "GGUF" read little-endian
        cursor.fail("bad magic: not a GGUF file");
    m_version = cursor.read<uint32_t>("version");
    if (m_version != 2 && m_version != 3)
        cursor.fail("unsupported GGUF version " + std::to_string(m_version) +
                    " (Sinkscope reads v2 and v3)");
    const auto tensorCount = cursor.read<uint64_t>("n_tensors");
    const auto keyValueCount = cursor.read<uint64_t>("n_kv");
    cursor.requireFits(tensorCount, kMinTensorInfoBytes, "n_tensors");
    cursor.requireFits(keyValueCount, kMinKeyValueBytes, "n_kv");

    // Keys and names are checked for duplicates as views into the file bytes, which never move.
    std::unordered_set<std::string_view> seenKeys;
    m_metadata.reserve(keyValueCount);
    for (uint64_t i = 0; i < keyValueCount; ++i) {
        cursor.setContext("metadata entry " + std::to_string(i));
        const std::string_view key = cursor.readString("key");
        if (!seenKeys.insert(key).second)
            cursor.fail("duplicate metadata key '" + printable(key) + "'");
        cursor.setContext("metadata key '" + printable(key) + "'");
        m_metadata.push_back({std::string(key), readValue(cursor)});
    }
    m_alignment = readAlignment(find("general.alignment"));

    m_tensors.reserve(tensorCount);
    m_tensorIndex.reserve(tensorCount);
    for (uint64_t i = 0; i < tensorCount; ++i) {
        cursor.setContext("tensor info " + std::to_string(i));
        const std::string_view name = cursor.readString("name");
        if (!m_tensorIndex.emplace(name, m_tensors.size()).second)
            cursor.fail("duplicate tensor name '" + printable(name) + "'");
        cursor.setContext("tensor '" + printable(name) + "'");
        GgufTensorInfo tensor;
        tensor.name = std::string(name);
        tensor.dims = readDims(cursor);
        tensor.elementCount = checkedElementCount(cursor, tensor.dims);
        tensor.type = readTensorType(cursor);
        tensor.offset = cursor.read<uint64_t>("data offset");
        tensor.byteSize = checkedByteSize(cursor, tensor);
        m_tensors.push_back(std::move(tensor));
    }
    placeTensors(cursor.position());
}

void GgufFile::placeTensors(uint64_t headerEnd) {
    // headerEnd <= m_size, so rounding up cannot overflow for any alignment up to 2^31.
    const uint64_t dataStart = (headerEnd + m_alignment - 1) / m_alignment * m_alignment;
    const uint64_t dataBytes = dataStart < m_size ? m_size - dataStart : 0;
    for (GgufTensorInfo& tensor : m_tensors) {
        const std::string where = "tensor '" + printable(tensor.name) + "'";
        if (tensor.offset % m_alignment != 0)
            throw GgufError(where + " offset " + std::to_string(tensor.offset) +
                            " is not a multiple of the alignment " + std::to_string(m_alignment));
        if (tensor.offset > dataBytes || tensor.byteSize > dataBytes - tensor.offset)
            throw GgufError(where + " data ends past the end of the file (offset " +
                            std::to_string(tensor.offset) + ", size " +
                            std::to_string(tensor.byteSize) + ", data section at " +
                            std::to_string(dataStart) + ", file " + std::to_string(m_size) + ")");
        tensor.data = m_data + dataStart + tensor.offset;
    }
    requireNoOverlap();
}

void GgufFile::requireNoOverlap() const {
    std::vector<size_t> byOffset(m_tensors.size()); // tensor indices sorted by data offset
    std::iota(byOffset.begin(), byOffset.end(), size_t{0});
    std::sort(byOffset.begin(), byOffset.end(),
              [this](size_t a, size_t b) { return m_tensors[a].offset < m_tensors[b].offset; });
    for (size_t i = 1; i < byOffset.size(); ++i) {
        const GgufTensorInfo& previous = m_tensors[byOffset[i - 1]];
        const GgufTensorInfo& current = m_tensors[byOffset[i]];
        // Both ends are within the file (checked above), so the sum cannot overflow.
        if (previous.offset + previous.byteSize > current.offset)
            throw GgufError("tensors '" + printable(previous.name) + "' and '" +
                            printable(current.name) + "' overlap");
    }
}

} // namespace sinkscope
