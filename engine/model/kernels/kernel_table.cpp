#include "model/kernels/kernel_table.h"

#include "model/kernels/ggml_float.h"

namespace sinkscope {

// Each level's kernel sources fill their part of its table (model/kernels/kernel_isa_begin.h).
#define SINKSCOPE_DECLARE_FILLS(level)                                                             \
    namespace level {                                                                              \
    void fillFloatKernels(KernelTable& table);                                                     \
    void fillActivationKernels(KernelTable& table);                                                \
    void fillDotKernels(KernelTable& table);                                                       \
    void fillAttentionKernels(KernelTable& table);                                                 \
    void fillIntrinsicDotKernels(KernelTable& table);                                              \
    void fillGemmKernels(KernelTable& table);                                                      \
    void fillIntrinsicGemmKernels(KernelTable& table);                                             \
    void fillAvx512GemmKernels(KernelTable& table);                                                \
    void fillTileKernels(KernelTable& table);                                                      \
    }
SINKSCOPE_DECLARE_FILLS(isa_portable)
SINKSCOPE_DECLARE_FILLS(isa_avx2)
SINKSCOPE_DECLARE_FILLS(isa_avx512)
SINKSCOPE_DECLARE_FILLS(isa_avx512vnni)
SINKSCOPE_DECLARE_FILLS(isa_avx512amx)
#undef SINKSCOPE_DECLARE_FILLS

namespace {

// A level's table: the fills in order (the intrinsic dots replace some of the generic ones; the
// matrix-matrix products build on the level's row kernels).
template <void (*... Fills)(KernelTable&)> KernelTable buildTable(Isa isa) {
    KernelTable table;
    table.isa = isa;
    (Fills(table), ...);
    return table;
}

#define SINKSCOPE_LEVEL_TABLE(level, isa)                                                          \
    buildTable<level::fillFloatKernels, level::fillActivationKernels, level::fillDotKernels,       \
               level::fillIntrinsicDotKernels, level::fillGemmKernels,                             \
               level::fillIntrinsicGemmKernels, level::fillAvx512GemmKernels,                      \
               level::fillTileKernels, level::fillAttentionKernels>(isa)

struct Tables {
    KernelTable byIsa[5] = {SINKSCOPE_LEVEL_TABLE(isa_portable, Isa::Portable),
                            SINKSCOPE_LEVEL_TABLE(isa_avx2, Isa::Avx2),
                            SINKSCOPE_LEVEL_TABLE(isa_avx512, Isa::Avx512),
                            SINKSCOPE_LEVEL_TABLE(isa_avx512vnni, Isa::Avx512Vnni),
                            SINKSCOPE_LEVEL_TABLE(isa_avx512amx, Isa::Avx512Amx)};
};

#undef SINKSCOPE_LEVEL_TABLE

} // namespace

const KernelTable& kernelsFor(Isa isa) {
    static const Tables tables;
    return tables.byIsa[static_cast<int>(isa)];
}

const KernelTable& kernels() {
    static const KernelTable& active = kernelsFor(activeIsa());
    return active;
}

namespace ggml {

float foldLanes16(const float lanes[16]) {
    return kernels().foldLanes16(lanes);
}
float foldLanes8(const float lanes[8]) {
    return kernels().foldLanes8(lanes);
}
float laneDot16(const float* a, const float* b, int n) {
    return kernels().laneDot16(a, b, n);
}
float vectorExp(float x) {
    return kernels().vectorExp(x);
}
void softmaxRow(float* x, int n) {
    kernels().softmaxRow(x, n);
}
void swiglu(float* gate, const float* up, int n) {
    kernels().swiglu(gate, up, n);
}

} // namespace ggml

} // namespace sinkscope
