#include "model/kernels/cpu_isa.h"

#include <cpuid.h>

#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace sinkscope {

const char* isaName(Isa isa) {
    switch (isa) {
    case Isa::Portable:
        return "portable";
    case Isa::Avx2:
        return "avx2";
    case Isa::Avx512:
        return "avx512";
    case Isa::Avx512Vnni:
        return "avx512vnni";
    }
    return "portable";
}

namespace {

// CPUID leaf 1's F16C bit (not every compiler's __builtin_cpu_supports names it).
bool cpuHasF16c() {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
}

} // namespace

// __builtin_cpu_supports reads CPUID and, for the AVX levels, whether the OS saves the wider
// registers (XGETBV), so a level it reports can run.
bool isaSupported(Isa isa) {
    __builtin_cpu_init();
    const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                      cpuHasF16c() && __builtin_cpu_supports("bmi2");
    const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") &&
                        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
                        __builtin_cpu_supports("avx512vl");
    switch (isa) {
    case Isa::Portable:
        return true;
    case Isa::Avx2:
        return avx2;
    case Isa::Avx512:
        return avx512;
    case Isa::Avx512Vnni:
        return avx512 && __builtin_cpu_supports("avx512vnni");
    }
    return false;
}

namespace {

Isa chooseIsa() {
    if (const char* wanted = std::getenv("SINKSCOPE_ISA"))
        for (const Isa isa : kAllIsas)
            if (std::strcmp(wanted, isaName(isa)) == 0 && isaSupported(isa)) return isa;
    for (const Isa isa : {Isa::Avx512Vnni, Isa::Avx512, Isa::Avx2})
        if (isaSupported(isa)) return isa;
    return Isa::Portable;
}

} // namespace

Isa activeIsa() {
    static const Isa chosen = chooseIsa();
    return chosen;
}

} // namespace sinkscope
