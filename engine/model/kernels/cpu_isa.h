// The x86-64 instruction-set levels the forward pass's hot kernels are compiled for, and the one
// this CPU runs. One binary runs everywhere: the level is chosen when the process first needs a
// kernel, not when it is built. Every level computes the same bits (model/kernels/ggml_float.h
// fixes the float order and the fused multiply-adds), so a level only changes speed.
#pragma once

namespace sinkscope {

enum class Isa {
    Portable,   // x86-64 baseline (SSE2); std::fma is the C library's
    Avx2,       // x86-64-v3's vector part: AVX2, FMA, F16C, BMI2
    Avx512,     // the above and AVX-512 F, BW, DQ, VL (x86-64-v4)
    Avx512Vnni, // the above and AVX-512 VNNI: four byte products summed in one instruction
};

inline constexpr Isa kAllIsas[] = {Isa::Portable, Isa::Avx2, Isa::Avx512, Isa::Avx512Vnni};

// "portable", "avx2", "avx512", "avx512vnni"
const char* isaName(Isa isa);

// Whether this CPU and its operating system can run `isa`'s kernels.
bool isaSupported(Isa isa);

// The level the kernels run at: the best one supported, or the one the environment variable
// SINKSCOPE_ISA names (portable, avx2, avx512, avx512vnni) when it is supported, for measuring one
// level against another. Fixed at the first call.
Isa activeIsa();

} // namespace sinkscope
