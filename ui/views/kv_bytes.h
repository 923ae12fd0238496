// KV memory as the inspection views write it: mebibytes with two decimals, as the budget reads
// (11.50 MiB), so that the KV view, the memory gauge and the budget agree digit for digit.
#pragma once

#include <QString>

#include <cstdint>

namespace sinkscope::views {

inline QString mebibytes(int64_t bytes) {
    constexpr double kMiB = 1024.0 * 1024.0;
    return QStringLiteral("%1 MiB").arg(double(bytes) / kMiB, 0, 'f', 2);
}

} // namespace sinkscope::views
