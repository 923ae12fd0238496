// Text as the panels write it: counts with their noun, rates, durations, errors.
#pragma once

#include <QString>

#include <exception>

namespace sinkscope::ui {

// "1 token", "40 tokens" (locale digit grouping).
QString countOf(qint64 count, const QString& singular, const QString& plural);
QString tokenCount(qint64 count); // countOf(count, "token", "tokens")
// A model's size: "12.3M params", "260K params".
QString parameterCount(qint64 parameters);
// One decimal below 100 (12.5), none above (1,234).
QString formatRate(double perSecond);
// Milliseconds: one decimal below 100 ms.
QString formatMilliseconds(double seconds);
// The message of a caught exception ("unknown error" when it is not a std::exception).
QString exceptionText(const std::exception_ptr& error);

} // namespace sinkscope::ui
