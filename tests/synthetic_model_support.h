// A synthetic model (engine/model/synthetic.h) loaded in memory, for tests that need a model of a
// given shape and no file.
#pragma once

#include "gguf/gguf.h"
#include "model/model.h"
#include "model/synthetic.h"

#include <QtTest>

#include <memory>
#include <string>

namespace sinkscope::test {

inline std::unique_ptr<Model> modelFromSpec(const SyntheticSpec& spec = {}) {
    std::string error;
    auto file = GgufFile::fromBytes(syntheticModelBytes(spec), error, "synthetic");
    if (!file) qFatal("synthetic model: %s", error.c_str());
    auto model = Model::fromGguf(std::move(file), error);
    if (!model) qFatal("synthetic model: %s", error.c_str());
    return model;
}

} // namespace sinkscope::test
