#include "tools/numeric_range.h"

#include "tools/tool_schema.h"

#include <algorithm>
#include <cmath>

namespace sinkscope {

namespace {

constexpr double kIntegerLimit = 999'999'999'999'999.0;        // 15 digits
constexpr double kMillionthsLimit = 999'999'999'999'999'999.0; // 12 + 6 digits

int64_t clampedToInt(double value, double limit) {
    return static_cast<int64_t>(std::clamp(value, -limit, limit));
}

// The smallest grid value above (or at, when inclusive) `bound`, `scaled` grid steps per unit.
int64_t lowestAbove(const NumericBound& bound, double scale, double limit) {
    const double scaled = bound.value * scale;
    const double nearest = std::nearbyint(scaled);
    // A bound that is on the grid up to rounding (0.1 * 1e6 = 100000.00000000001) is exact.
    const bool onGrid = std::fabs(scaled - nearest) <= 1e-7 * std::max(1.0, std::fabs(scaled));
    const double lowest = onGrid ? nearest + (bound.exclusive ? 1 : 0) : std::ceil(scaled);
    return clampedToInt(lowest, limit);
}

int64_t highestBelow(const NumericBound& bound, double scale, double limit) {
    const double scaled = bound.value * scale;
    const double nearest = std::nearbyint(scaled);
    const bool onGrid = std::fabs(scaled - nearest) <= 1e-7 * std::max(1.0, std::fabs(scaled));
    const double highest = onGrid ? nearest - (bound.exclusive ? 1 : 0) : std::floor(scaled);
    return clampedToInt(highest, limit);
}

GridRange gridRange(const std::optional<NumericBound>& minimum,
                    const std::optional<NumericBound>& maximum, double scale, double limit) {
    GridRange range{clampedToInt(-limit, limit), clampedToInt(limit, limit)};
    if (minimum) range.lo = std::max(range.lo, lowestAbove(*minimum, scale, limit));
    if (maximum) range.hi = std::min(range.hi, highestBelow(*maximum, scale, limit));
    return range;
}

} // namespace

GridRange integerGridRange(const std::optional<NumericBound>& minimum,
                           const std::optional<NumericBound>& maximum) {
    return gridRange(minimum, maximum, 1.0, kIntegerLimit);
}

GridRange numberGridRange(const std::optional<NumericBound>& minimum,
                          const std::optional<NumericBound>& maximum) {
    return gridRange(minimum, maximum, static_cast<double>(kMillionthsPerUnit), kMillionthsLimit);
}

} // namespace sinkscope
