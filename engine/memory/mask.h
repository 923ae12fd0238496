// The attention mask of the memory architecture: one pure function, used by attention and drawn
// by the heatmap (docs: shared/docs/memory-architecture.md, section 2).
#pragma once

namespace sinkscope {

// May the query at position q attend to the key at position k, with window W?
constexpr bool keep(long long q, long long k, long long window, bool keyIsSink) {
    return k <= q && ((q - k) < window || keyIsSink);
}

enum class MaskCell : unsigned char {
    AttendedRecent, // keep, inside the window
    AttendedSink,   // keep only because the key is a sink
    Evicted,        // past, outside the window, not a sink
    Future,         // k > q
};

constexpr MaskCell classify(long long q, long long k, long long window, bool keyIsSink) {
    if (k > q) return MaskCell::Future;
    if ((q - k) < window) return MaskCell::AttendedRecent;
    return keyIsSink ? MaskCell::AttendedSink : MaskCell::Evicted;
}

} // namespace sinkscope
