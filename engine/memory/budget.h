// The budget-derived KV window (docs: shared/docs/memory-architecture.md, section 1).
#pragma once

#include <cstdint>

namespace sinkscope {

inline constexpr int64_t kKvBudgetBytes = 11 * 1024 * 1024 + 512 * 1024; // 12,058,624
inline constexpr int64_t kKvGroup = 32;
inline constexpr int64_t kKvWindowMin = 160;

struct BudgetShape {
    int64_t layers = 0;
    int64_t kvHeads = 0;
    int64_t headDim = 0;
    int64_t dModel = 0;
    int64_t sites = 0; // engram sites; 0 for llama-family models
    int64_t maxSeq = 0;
};

// L * (2*kv + 2*(kv/32)*4) + sites * (d + (d/32)*4), kv = kvHeads * headDim, integer division.
int64_t bytesPerPosition(const BudgetShape& shape);
// max(160, min((budget / per_pos) / 32 * 32, max_seq)).
int64_t budgetWindow(const BudgetShape& shape);
// kvWindow > 0 ? min(budget, kvWindow) : budget.
int64_t effectiveWindow(int64_t budgetWindow, int64_t kvWindow);

} // namespace sinkscope
