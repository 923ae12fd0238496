// CPU time used by the calling thread: what the GUI thread's own work costs, as opposed to the
// wall-clock time in which other threads (the engine's) also ran.
#pragma once

namespace sinkscope::ui {

// Milliseconds of CPU time the calling thread has used; 0 where the clock is not available.
double threadCpuMs();

} // namespace sinkscope::ui
