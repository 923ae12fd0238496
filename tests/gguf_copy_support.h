// Rewriting a GGUF file in a test: every metadata key copied into a writer, so that a test can
// then add the tensors it keeps, changes or leaves out.
#pragma once

#include "gguf/gguf.h"
#include "gguf/gguf_writer.h"

#include <vector>

namespace sinkscope::test {

inline void copyMetadata(const GgufFile& file, GgufWriter& w) {
    for (const GgufKeyValue& kv : file.metadata()) {
        if (const std::string* text = kv.value.asString())
            w.setString(kv.key, *text);
        else if (const auto* strings = kv.value.asStringArray())
            w.setStringArray(kv.key, *strings);
        else if (const auto* floats = kv.value.asFloatArray())
            w.setFloat32Array(kv.key, std::vector<float>(floats->begin(), floats->end()));
        else if (const auto* ints = kv.value.asIntArray())
            w.setInt32Array(kv.key, std::vector<int32_t>(ints->begin(), ints->end()));
        else if (kv.value.type() == GgufValueType::Float32)
            w.setFloat32(kv.key, static_cast<float>(*kv.value.asFloat()));
        else
            w.setUint32(kv.key, static_cast<uint32_t>(*kv.value.asInt()));
    }
}

} // namespace sinkscope::test
