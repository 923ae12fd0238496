#include "model/kernels/cpu_isa.h"

#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
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
    case Isa::Avx512Amx:
        return "avx512amx";
    }
    return "portable";
}

namespace {

// CPUID leaf 1's F16C bit (not every compiler's __builtin_cpu_supports names it).
bool cpuHasF16c() {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
}

// AMX-TILE and AMX-INT8 (CPUID leaf 7, EDX bits 24 and 25), the tile state enabled by the OS
// (XCR0 bits 17 and 18), and Linux's permission for this process to use it: a process must ask
// once (arch_prctl ARCH_REQ_XCOMP_PERM for XTILEDATA) before its first tile instruction, which
// would otherwise kill it.
bool amxUsable() {
    static const bool usable = [] {
        constexpr unsigned kAmxTile = 1u << 24, kAmxInt8 = 1u << 25;
        constexpr unsigned kTileState = 3u << 17;
        constexpr int kArchReqXcompPerm = 0x1023, kXfeatureTileData = 18;
        unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
        if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) || (edx & kAmxTile) == 0 ||
            (edx & kAmxInt8) == 0)
            return false;
        if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || (ecx & bit_OSXSAVE) == 0) return false;
        unsigned xcr0Low = 0, xcr0High = 0;
        __asm__ volatile("xgetbv" : "=a"(xcr0Low), "=d"(xcr0High) : "c"(0));
        if ((xcr0Low & kTileState) != kTileState) return false;
        return ::syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureTileData) == 0;
    }();
    return usable;
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
    case Isa::Avx512Amx:
        return avx512 && __builtin_cpu_supports("avx512vnni") && amxUsable();
    }
    return false;
}

namespace {

Isa chooseIsa() {
    if (const char* wanted = std::getenv("SINKSCOPE_ISA"))
        for (const Isa isa : kAllIsas)
            if (std::strcmp(wanted, isaName(isa)) == 0 && isaSupported(isa)) return isa;
    for (const Isa isa : {Isa::Avx512Amx, Isa::Avx512Vnni, Isa::Avx512, Isa::Avx2})
        if (isaSupported(isa)) return isa;
    return Isa::Portable;
}

} // namespace

Isa activeIsa() {
    static const Isa chosen = chooseIsa();
    return chosen;
}

const char* rowStreamsName(RowStreams streams) {
    return streams == RowStreams::Single ? "single" : "grouped";
}

namespace {

// CPUID leaf 0's vendor string is "AuthenticAMD" on AMD processors (EBX, EDX, ECX in that order).
bool cpuIsAmd() {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return false;
    char vendor[12];
    std::memcpy(vendor, &ebx, 4);
    std::memcpy(vendor + 4, &edx, 4);
    std::memcpy(vendor + 8, &ecx, 4);
    return std::memcmp(vendor, "AuthenticAMD", sizeof vendor) == 0;
}

RowStreams chooseRowStreams() {
    if (const char* wanted = std::getenv("SINKSCOPE_ROW_STREAMS"))
        for (const RowStreams streams : {RowStreams::Grouped, RowStreams::Single})
            if (std::strcmp(wanted, rowStreamsName(streams)) == 0) return streams;
    return cpuIsAmd() ? RowStreams::Single : RowStreams::Grouped;
}

std::atomic<RowStreams>& rowStreams() {
    static std::atomic<RowStreams> streams{chooseRowStreams()};
    return streams;
}

} // namespace

RowStreams activeRowStreams() {
    return rowStreams().load(std::memory_order_relaxed);
}

void setRowStreams(RowStreams streams) {
    rowStreams().store(streams, std::memory_order_relaxed);
}

} // namespace sinkscope
