// The SHA-256 of a file, read in chunks so that a model of hundreds of megabytes neither fills
// memory nor, on the engine thread, holds up a stop for long.
#pragma once

#include <QString>

#include <functional>

namespace sinkscope::ui {

// Lowercase hex; "" with `error` set when the file cannot be read, or when `cancelled` (asked
// between chunks) returns true.
QString sha256OfFile(const QString& path, QString& error,
                     const std::function<bool()>& cancelled = {});

} // namespace sinkscope::ui
