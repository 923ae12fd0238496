// GGUF reader over a read-only memory map, or over a copy in memory (GgufFile::open in gguf.cpp
// says which, and what each means when the file changes on disk).
//
// File layout (all little-endian; v2 and v3 share it, v1 is rejected):
//   u32 magic "GGUF", u32 version, u64 n_tensors, u64 n_kv
//   n_kv x { string key, u32 value_type, value }
//       string = u64 length + bytes (no terminator)
//       array  = u32 element_type, u64 count, count x element
//   n_tensors x { string name, u32 n_dims (1..4), n_dims x u64 ne, u32 ggml_type, u64 offset }
//   padding to `general.alignment` (default 32), then the data section;
//   each tensor's offset is relative to the data section and a multiple of the alignment.
//
// Every count, length, type, dimension and offset is checked against the bytes that remain
// before it is used; a bad file gives a message naming what is wrong, never a crash.
// Stricter than the format allows, on purpose: arrays of arrays, duplicate keys or tensor names,
// dimensions <= 0, bool bytes other than 0/1 and overlapping tensor data are rejected;
// `general.alignment` must be a uint32 power of two. Tensor types unknown to ggml are rejected;
// known but unsupported ones parse (the Model loader rejects them). Tensors may appear in any
// order in the data section as long as they are aligned, inside the file and disjoint.
#pragma once

#include "gguf/ggml_types.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace sinkscope {

enum class GgufValueType : uint32_t {
    Uint8 = 0,
    Int8 = 1,
    Uint16 = 2,
    Int16 = 3,
    Uint32 = 4,
    Int32 = 5,
    Float32 = 6,
    Bool = 7,
    String = 8,
    Array = 9,
    Uint64 = 10,
    Int64 = 11,
    Float64 = 12,
};

const char* ggufValueTypeName(GgufValueType type);

// One metadata value. Arrays hold their elements decoded into one of the vectors below.
class GgufValue {
public:
    using Storage = std::variant<int64_t, uint64_t, double, bool, std::string, std::vector<int64_t>,
                                 std::vector<double>, std::vector<std::string>, std::vector<bool>>;
    GgufValue() = default;
    GgufValue(GgufValueType type, GgufValueType elementType, Storage storage)
        : m_type(type), m_elementType(elementType), m_storage(std::move(storage)) {}

    GgufValueType type() const { return m_type; }
    GgufValueType elementType() const { return m_elementType; } // arrays only

    // Scalars. Integers convert when the value fits; floats accept float32/float64.
    std::optional<int64_t> asInt() const;
    std::optional<double> asFloat() const;
    std::optional<bool> asBool() const;
    const std::string* asString() const;

    // Arrays (nullptr when this is not an array of that kind). Integer arrays of any width
    // decode into int64 (uint64 elements above INT64_MAX make the file invalid).
    const std::vector<int64_t>* asIntArray() const;
    const std::vector<double>* asFloatArray() const;
    const std::vector<std::string>* asStringArray() const;
    size_t arraySize() const;

private:
    GgufValueType m_type = GgufValueType::Uint32;
    GgufValueType m_elementType = GgufValueType::Uint32;
    Storage m_storage;
};

struct GgufKeyValue {
    std::string key;
    GgufValue value;
};

struct GgufTensorInfo {
    std::string name;
    GgmlType type = GgmlType::F32;
    std::vector<int64_t> dims; // ne[0] first: ne[0] is the row length (fastest-moving)
    uint64_t elementCount = 0;
    uint64_t offset = 0; // relative to the data section
    uint64_t byteSize = 0;
    const uint8_t* data = nullptr; // into the mapping; valid while the GgufFile lives
};

// How open() gets the file's bytes (see the comment above GgufFile::open in gguf.cpp).
enum class GgufReadMode {
    Automatic, // map, except on network and removable-media filesystems, where it copies
    Map,       // a read-only mapping: no copy, but truncating the file under it means SIGBUS
    Copy,      // read() into memory: later changes to the file cannot reach the model
};

class GgufFile {
public:
    // nullptr + a one-line message in `error` on failure.
    static std::unique_ptr<GgufFile> open(const std::string& path, std::string& error,
                                          GgufReadMode mode = GgufReadMode::Automatic);
    // Parses bytes held in memory (tests, fuzzing). `name` appears in messages.
    static std::unique_ptr<GgufFile> fromBytes(std::vector<uint8_t> bytes, std::string& error,
                                               const std::string& name = "<memory>");
    ~GgufFile();
    GgufFile(const GgufFile&) = delete;
    GgufFile& operator=(const GgufFile&) = delete;

    const std::string& path() const { return m_path; }
    uint32_t version() const { return m_version; }
    uint64_t alignment() const { return m_alignment; }
    uint64_t fileSize() const { return m_size; }
    bool isMapped() const { return m_mapping != nullptr; } // false: the bytes are a copy
    // Hands the pages wholly inside [begin, begin + bytes) of the mapping back to the system
    // (madvise MADV_DONTNEED): the memory they hold is freed, and a later read maps them from the
    // file again. For a reader that has copied those bytes elsewhere; does nothing for a copy.
    void releasePages(const uint8_t* begin, size_t bytes) const;
    // Makes every page of the mapping that was not handed back (releasePages) the process's own
    // memory, holding the same bytes at the same addresses, so that truncating, rewriting or
    // deleting the file afterwards cannot reach what the model reads: no SIGBUS, no weights
    // changing under it. The model loader calls it once its copies are made (see GgufFile::open in
    // gguf_open.cpp). False with a message when the file shrank while its pages were being copied;
    // does nothing for a copy.
    bool detachFromFile(std::string& error);

    const std::vector<GgufKeyValue>& metadata() const { return m_metadata; }
    const GgufValue* find(std::string_view key) const;
    const std::vector<GgufTensorInfo>& tensors() const { return m_tensors; }
    const GgufTensorInfo* findTensor(std::string_view name) const;

    // Convenience lookups; nullopt when absent or of another kind.
    std::optional<int64_t> getInt(std::string_view key) const;
    std::optional<double> getFloat(std::string_view key) const;
    std::optional<std::string> getString(std::string_view key) const;

private:
    GgufFile() = default;
    // Runs parse(); on failure sets `error` to "<path>: <message>" and returns nullptr.
    static std::unique_ptr<GgufFile> parsed(std::unique_ptr<GgufFile> file, std::string& error);
    void parse(); // throws GgufError (internal) with the message
    // Checks each tensor's offset and extent against the data section that starts at
    // `headerEnd` rounded up to the alignment, sets the data pointers, rejects overlaps.
    void placeTensors(uint64_t headerEnd);
    void requireNoOverlap() const;

    std::string m_path;
    const uint8_t* m_data = nullptr; // [m_size] the whole file
    uint64_t m_size = 0;
    void* m_mapping = nullptr; // non-null when m_data is an mmap
    int m_fd = -1;             // the mapped file, open until detachFromFile()
    // Page-aligned [first, last) address ranges handed back by releasePages, never read by
    // detachFromFile (the loader has its own copies of their bytes).
    mutable std::vector<std::pair<uintptr_t, uintptr_t>> m_releasedPages;
    std::vector<uint8_t> m_ownedBytes; // when parsed from memory
    uint32_t m_version = 0;
    uint64_t m_alignment = 32;
    std::vector<GgufKeyValue> m_metadata;
    std::vector<GgufTensorInfo> m_tensors;
    // name (a view into the file's bytes, which never move) -> index in m_tensors. The model
    // loader looks up 9 tensors per layer: a linear search made a 4096-layer file quadratic.
    std::unordered_map<std::string_view, size_t> m_tensorIndex;
};

} // namespace sinkscope
