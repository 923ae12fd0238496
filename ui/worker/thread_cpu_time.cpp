#include "worker/thread_cpu_time.h"

#include <ctime>

namespace sinkscope::ui {

double threadCpuMs() {
    timespec now{};
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now) != 0) return 0;
    return double(now.tv_sec) * 1e3 + double(now.tv_nsec) / 1e6;
}

} // namespace sinkscope::ui
