"""PyTorch's BLAS at this CPU's real speed. Import it before torch.

Debian's OpenBLAS picks its kernels from the CPU's model number. On a CPU it does not know (a
newer Xeon, or a virtual machine that hides the model, as "Intel(R) Xeon(R) Processor") it falls
back to its Prescott (SSE3) kernels, which multiplied matrices 5-8 times slower on the development
machine (10-18 GFLOP/s on one core against 72-91 with the SkylakeX kernels; a training step of
the CPU shape went from 1.77 s to 0.74 s). The core type is named from the CPU's flags instead;
an OPENBLAS_CORETYPE the user set wins. OpenBLAS reads it when it loads, at `import torch`, and
child processes inherit it.
"""

import os

AVX512 = {"avx512f", "avx512bw", "avx512dq", "avx512vl"}
AVX2 = {"avx2", "fma"}


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def openblas_core(flags):
    """The OpenBLAS core type for these CPU flags, or None to leave OpenBLAS's own choice."""
    if AVX512 <= flags:
        return "SkylakeX"
    if AVX2 <= flags:
        return "Haswell"
    return None


core = openblas_core(cpu_flags())
if core and "OPENBLAS_CORETYPE" not in os.environ:
    os.environ["OPENBLAS_CORETYPE"] = core
