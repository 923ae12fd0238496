// The numbers the call grammar writes, and a schema's bounds as the grammar sees them.
//   integer: -?(0|[1-9][0-9]*), at most 15 digits
//   number:  -?(0|[1-9][0-9]*)(\.[0-9]+)?, at most 12 integer digits and 6 decimals, no exponent
// Numbers are held in millionths (int64), so that bounds are exact on the grammar's grid: a
// minimum of 0.1 is 100000 millionths, an exclusive one 100001.
#pragma once

#include <cstdint>
#include <optional>

namespace sinkscope {

struct NumericBound;

inline constexpr int kMaxIntegerDigits = 15;
inline constexpr int kMaxNumberIntegerDigits = 12;
inline constexpr int kMaxNumberFractionDigits = 6;
inline constexpr int64_t kMillionthsPerUnit = 1'000'000;

// A closed interval of whole units (integers) or millionths (numbers); empty when lo > hi.
struct GridRange {
    int64_t lo = 0;
    int64_t hi = 0;
    bool empty() const { return lo > hi; }
    bool contains(int64_t value) const { return lo <= value && value <= hi; }
};

// The integers the grammar may write within the bounds.
GridRange integerGridRange(const std::optional<NumericBound>& minimum,
                           const std::optional<NumericBound>& maximum);
// The numbers, in millionths, the grammar may write within the bounds.
GridRange numberGridRange(const std::optional<NumericBound>& minimum,
                          const std::optional<NumericBound>& maximum);

} // namespace sinkscope
