#include "memory/budget.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace sinkscope {

namespace {

// The shape's fields come from a model file: a product that overflows is a bad shape, not UB.
int64_t checkedMultiply(int64_t a, int64_t b) {
    int64_t product = 0;
    if (__builtin_mul_overflow(a, b, &product))
        throw std::invalid_argument("budget shape: bytes per position overflow 64 bits");
    return product;
}

int64_t checkedAdd(int64_t a, int64_t b) {
    int64_t sum = 0;
    if (__builtin_add_overflow(a, b, &sum))
        throw std::invalid_argument("budget shape: bytes per position overflow 64 bits");
    return sum;
}

void requireNonNegative(int64_t value, const char* field) {
    if (value < 0)
        throw std::invalid_argument(std::string("budget shape: ") + field + " is negative (" +
                                    std::to_string(value) + ")");
}

void validate(const BudgetShape& shape) {
    requireNonNegative(shape.layers, "layers");
    requireNonNegative(shape.kvHeads, "kvHeads");
    requireNonNegative(shape.headDim, "headDim");
    requireNonNegative(shape.dModel, "dModel");
    requireNonNegative(shape.sites, "sites");
    requireNonNegative(shape.maxSeq, "maxSeq");
}

// Bytes of one int8 row of `width` values with one f32 scale per whole group of 32, as the
// budget counts it: width + (width / 32) * 4.
int64_t int8RowBytes(int64_t width) {
    return checkedAdd(width, checkedMultiply(width / kKvGroup, 4));
}

} // namespace

int64_t bytesPerPosition(const BudgetShape& shape) {
    validate(shape);
    const int64_t kvWidth = checkedMultiply(shape.kvHeads, shape.headDim);
    const int64_t kvBytes =
        checkedMultiply(shape.layers, checkedMultiply(2, int8RowBytes(kvWidth)));
    const int64_t siteBytes = checkedMultiply(shape.sites, int8RowBytes(shape.dModel));
    const int64_t perPosition = checkedAdd(kvBytes, siteBytes);
    if (perPosition <= 0)
        throw std::invalid_argument("budget shape: a position takes no bytes (layers " +
                                    std::to_string(shape.layers) + ", kv width " +
                                    std::to_string(kvWidth) + ", sites " +
                                    std::to_string(shape.sites) + ")");
    return perPosition;
}

int64_t budgetWindow(const BudgetShape& shape) {
    const int64_t positions = kKvBudgetBytes / bytesPerPosition(shape);
    const int64_t rounded = positions / kKvGroup * kKvGroup;
    return std::max(kKvWindowMin, std::min(rounded, shape.maxSeq));
}

int64_t effectiveWindow(int64_t budgetWindow, int64_t kvWindow) {
    return kvWindow > 0 ? std::min(budgetWindow, kvWindow) : budgetWindow;
}

} // namespace sinkscope
