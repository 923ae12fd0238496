#include "gguf/gguf.h"

#include <type_traits>

namespace sinkscope {

const char* ggufValueTypeName(GgufValueType type) {
    switch (type) {
    case GgufValueType::Uint8:
        return "uint8";
    case GgufValueType::Int8:
        return "int8";
    case GgufValueType::Uint16:
        return "uint16";
    case GgufValueType::Int16:
        return "int16";
    case GgufValueType::Uint32:
        return "uint32";
    case GgufValueType::Int32:
        return "int32";
    case GgufValueType::Float32:
        return "float32";
    case GgufValueType::Bool:
        return "bool";
    case GgufValueType::String:
        return "string";
    case GgufValueType::Array:
        return "array";
    case GgufValueType::Uint64:
        return "uint64";
    case GgufValueType::Int64:
        return "int64";
    case GgufValueType::Float64:
        return "float64";
    }
    return "unknown";
}

std::optional<int64_t> GgufValue::asInt() const {
    if (const auto* value = std::get_if<int64_t>(&m_storage)) return *value;
    if (const auto* value = std::get_if<uint64_t>(&m_storage))
        if (*value <= static_cast<uint64_t>(INT64_MAX)) return static_cast<int64_t>(*value);
    return std::nullopt;
}

std::optional<double> GgufValue::asFloat() const {
    if (const auto* value = std::get_if<double>(&m_storage)) return *value;
    return std::nullopt;
}

std::optional<bool> GgufValue::asBool() const {
    if (const auto* value = std::get_if<bool>(&m_storage)) return *value;
    return std::nullopt;
}

const std::string* GgufValue::asString() const {
    return std::get_if<std::string>(&m_storage);
}

const std::vector<int64_t>* GgufValue::asIntArray() const {
    return std::get_if<std::vector<int64_t>>(&m_storage);
}

const std::vector<double>* GgufValue::asFloatArray() const {
    return std::get_if<std::vector<double>>(&m_storage);
}

const std::vector<std::string>* GgufValue::asStringArray() const {
    return std::get_if<std::vector<std::string>>(&m_storage);
}

size_t GgufValue::arraySize() const {
    return std::visit(
        [](const auto& value) -> size_t {
            using T = std::decay_t<decltype(value)>;
            if constexpr (requires { value.size(); } && !std::is_same_v<T, std::string>)
                return value.size();
            else
                return 0;
        },
        m_storage);
}

} // namespace sinkscope
