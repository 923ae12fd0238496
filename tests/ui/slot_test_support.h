// Hand-made KV slots for the suites that draw snapshots (the KV cache view, the memory gauge).
#pragma once

#include "memory/snapshot.h"

#include <cstdint>
#include <string>
#include <utility>

namespace sinkscope::test {

// A slot holding `piece` at `position` (token id 100 + position), admitted by keep().
inline SlotView keptSlot(int64_t position, SlotKind kind, std::string piece) {
    SlotView view;
    view.token = int32_t(100 + position);
    view.position = position;
    view.kind = kind;
    view.piece = std::move(piece);
    view.kept = true;
    return view;
}

} // namespace sinkscope::test
