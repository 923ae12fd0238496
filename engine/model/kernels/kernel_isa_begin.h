// Opens the instruction-set region of a kernel source. engine/CMakeLists.txt compiles each kernel
// source once per level (model/kernels/cpu_isa.h) with SINKSCOPE_KERNEL_ISA set to 0 (portable), 1
// (AVX2), 2 (AVX-512), 3 (AVX-512 with VNNI) or 4 (the same and AMX); every function defined
// between this header and model/kernels/kernel_isa_end.h is compiled for that level, inside
// namespace sinkscope::SINKSCOPE_ISA_NAMESPACE.
//
// Include it after every other header: inline functions and templates that come from headers then
// keep the baseline target in every level's object, so the linker's pick among their identical
// copies can never hand AVX code to a CPU without it.
//
// No include guard: a kernel source includes it once, and model/kernels/kernel_isa_end.h closes it.
#if !defined(SINKSCOPE_KERNEL_ISA)
#error "a kernel source is built through sinkscope_isa_kernels() in engine/CMakeLists.txt"
#elif SINKSCOPE_KERNEL_ISA == 0
#define SINKSCOPE_ISA_NAMESPACE isa_portable
#elif SINKSCOPE_KERNEL_ISA == 1
#define SINKSCOPE_ISA_NAMESPACE isa_avx2
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c,bmi,bmi2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,bmi,bmi2")
#endif
#elif SINKSCOPE_KERNEL_ISA == 2
#define SINKSCOPE_ISA_NAMESPACE isa_avx512
#if defined(__clang__)
#pragma clang attribute push(                                                                      \
    __attribute__((target("avx2,fma,f16c,bmi,bmi2,avx512f,avx512bw,avx512dq,avx512vl"))),          \
    apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,bmi,bmi2,avx512f,avx512bw,avx512dq,avx512vl")
#endif
#elif SINKSCOPE_KERNEL_ISA == 3
#define SINKSCOPE_ISA_NAMESPACE isa_avx512vnni
#if defined(__clang__)
#pragma clang attribute push(                                                                      \
    __attribute__((                                                                                \
        target("avx2,fma,f16c,bmi,bmi2,avx512f,avx512bw,avx512dq,avx512vl,avx512vnni"))),          \
    apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,bmi,bmi2,avx512f,avx512bw,avx512dq,avx512vl,avx512vnni")
#endif
#elif SINKSCOPE_KERNEL_ISA == 4
#define SINKSCOPE_ISA_NAMESPACE isa_avx512amx
#if defined(__clang__)
#pragma clang attribute push(                                                                      \
    __attribute__((target("avx2,fma,f16c,bmi,bmi2,avx512f,avx512bw,avx512dq,avx512vl,"             \
                          "avx512vnni,amx-tile,amx-int8"))),                                       \
    apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target(                                                                                \
    "avx2,fma,f16c,bmi,bmi2,avx512f,avx512bw,avx512dq,avx512vl,avx512vnni,amx-tile,amx-int8")
#endif
#else
#error "SINKSCOPE_KERNEL_ISA must be 0, 1, 2, 3 or 4"
#endif
