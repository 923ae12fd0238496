// The x86-64 instruction-set levels the forward pass's hot kernels are compiled for, and the one
// this CPU runs. One binary runs everywhere: the level is chosen when the process first needs a
// kernel, not when it is built. Every level computes the same bits (model/kernels/ggml_float.h
// fixes the float order and the fused multiply-adds), so a level only changes speed. The one
// exception is the AMX level's own row layout (RowLayout::Tiles16 in model/row_layout.h), whose
// products sum as llama.cpp's AMX backend sums them.
#pragma once

namespace sinkscope {

enum class Isa {
    Portable,   // x86-64 baseline (SSE2); std::fma is the C library's
    Avx2,       // x86-64-v3's vector part: AVX2, FMA, F16C, BMI2
    Avx512,     // the above and AVX-512 F, BW, DQ, VL (x86-64-v4)
    Avx512Vnni, // the above and AVX-512 VNNI: four byte products summed in one instruction
    Avx512Amx,  // the above and AMX-INT8: 16 x 16 x 64 byte products in one tile instruction
};

inline constexpr Isa kAllIsas[] = {Isa::Portable, Isa::Avx2, Isa::Avx512, Isa::Avx512Vnni,
                                   Isa::Avx512Amx};

// "portable", "avx2", "avx512", "avx512vnni", "avx512amx"
const char* isaName(Isa isa);

// Whether this CPU and its operating system can run `isa`'s kernels. For the AMX level this asks
// Linux, once, for the process's permission to use the tile registers.
bool isaSupported(Isa isa);

// The level the kernels run at: the best one supported, or the one the environment variable
// SINKSCOPE_ISA names (portable ... avx512amx) when it is supported, for measuring one
// level against another. Fixed at the first call.
Isa activeIsa();

// How the matrix-vector kernels walk a quantized matrix while decoding, where every weight is read
// once per token and the speed is how fast one core streams bytes from memory. Grouped: four rows
// at once, each row's bytes asked for kPrefetchBytes ahead (model/kernels/prefetch.h); Single:
// one row after another, left to the hardware prefetcher (Q4_0 takes four blocks of the row at a
// time, so that its float chain is not the bound). Both give the same bits; which is faster
// depends on the CPU's prefetchers. On the 0.5B shape, one thread: an Intel Xeon read 5-7 GB/s
// left to its prefetcher, and grouped rows took Q8_0 from 10 to 17-19 tokens/s; an AMD EPYC
// (Zen 4) decoded Q8_0 at 35-48 tokens/s single against 17-20 grouped, Q4_K_M at 31-33 against
// 22-24, Q4_0 at 36-45 against 35. F32 rows stay grouped in either mode (their four-row tiles
// share each load of x: 292 tokens/s against 202 single on a 24M F32 model on that EPYC).
enum class RowStreams { Grouped, Single };

// "grouped", "single"
const char* rowStreamsName(RowStreams streams);

// Single on AMD CPUs, Grouped on the others, unless the environment variable
// SINKSCOPE_ROW_STREAMS names one (grouped, single) for measuring one against the other.
RowStreams activeRowStreams();

// Sets the mode from now on (tests run every kernel in both).
void setRowStreams(RowStreams streams);

} // namespace sinkscope
