// Numbers as the panels write them: counts with their noun, rates, durations.
#pragma once

#include <QString>

namespace sinkscope::ui {

// "1 token", "40 tokens" (locale digit grouping).
QString countOf(qint64 count, const QString& singular, const QString& plural);
QString tokenCount(qint64 count); // countOf(count, "token", "tokens")
// One decimal below 100 (12.5), none above (1,234).
QString formatRate(double perSecond);
// Milliseconds: one decimal below 100 ms.
QString formatMilliseconds(double seconds);

} // namespace sinkscope::ui
