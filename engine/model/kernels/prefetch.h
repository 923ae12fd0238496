// Software prefetch for the weight streams of the matrix-vector kernels.
//
// Decoding reads every weight once per token, so it runs at the speed one core can pull bytes
// from memory. A core only has a dozen or so cache-line misses in flight; the hardware prefetcher
// ramps up late on the several short row streams a kernel walks at once (four rows of a group,
// each a few hundred bytes), and a core left to it read 5-7 GB/s here. Asking for the bytes
// kPrefetchBytes ahead of each read keeps enough lines in flight: on the 0.5B shape decode went
// from 17 to 28-31 tokens/s (Q4_0), 10 to 17-19 (Q8_0) and 11 to 18-20 (Q4_K_M) on one thread
// (1 KiB ahead gained little, 4 KiB most of it, 8 KiB the rest). That was an Intel Xeon; an AMD
// EPYC (Zen 4) streams faster left to its own prefetcher, one row at a time, so the kernels
// prefetch only where RowStreams::Grouped is in force (model/kernels/cpu_isa.h).
//
// Rows of a matrix lie one after another, so the bytes ahead of a row are its successors' (or
// whatever follows the matrix: a prefetch never faults, and an address past the data only costs a
// wasted line). The address is formed as an integer, so no pointer leaves its object.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sinkscope {

constexpr size_t kPrefetchBytes = 8192;
constexpr size_t kCacheLineBytes = 64;

// Asks for the cache line kPrefetchBytes after p.
inline void prefetchAhead(const void* p) {
    __builtin_prefetch(
        reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(p) + kPrefetchBytes), 0, 3);
}

// Asks for every line of [p, p + bytes) shifted kPrefetchBytes ahead: for a kernel that reads a
// whole row (or block) in one go.
inline void prefetchRangeAhead(const void* p, size_t bytes) {
    const uintptr_t begin = reinterpret_cast<uintptr_t>(p);
    for (size_t offset = 0; offset < bytes; offset += kCacheLineBytes)
        prefetchAhead(reinterpret_cast<const void*>(begin + offset));
}

} // namespace sinkscope
