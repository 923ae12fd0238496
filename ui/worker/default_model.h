// needle-nano, the playground's default model. It is embedded in the executable
// (":/models/needle-nano.gguf") and installed under AppDataLocation/models/ when the playground
// needs it, because the engine maps models from files.
#pragma once

#include <QString>

namespace sinkscope::ui {

// AppDataLocation/models/needle-nano.gguf
QString defaultModelPath();

// Whether `path` is the default model, this release's or an earlier one's (before needle-nano
// the playground wrote a synthetic model beside it, "synthetic-random.gguf"): the settings then
// name the default, not a model the user chose, and the playground opens this release's.
bool isDefaultModelPath(const QString& path);

// Writes the embedded model to `path` unless an identical file is already there (a damaged or
// older copy is replaced). The file is written beside `path` and renamed over it, so a copy the
// engine has mapped stays valid. Returns false with `error` set when it cannot be written.
bool installDefaultModel(const QString& path, QString& error);

} // namespace sinkscope::ui
