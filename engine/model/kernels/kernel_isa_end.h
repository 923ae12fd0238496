// Closes the region model/kernels/kernel_isa_begin.h opened. SINKSCOPE_ISA_NAMESPACE stays defined,
// so the source can then fill its level's KernelTable (model/kernels/kernel_table.h) with baseline
// code.
#if SINKSCOPE_KERNEL_ISA != 0
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif
