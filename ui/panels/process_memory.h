// The process's resident memory, for the Stats tab.
#pragma once

#include <QtGlobal>

namespace sinkscope::ui {

// VmRSS from /proc/self/status in bytes; -1 where it cannot be read (not Linux).
qint64 residentSetBytes();

} // namespace sinkscope::ui
