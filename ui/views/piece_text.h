// Token pieces as the widgets show them: whitespace and control characters made visible.
#pragma once

#include <QString>

#include <string>

namespace sinkscope::views {

// "\n" -> "⏎", "\t" -> "⇥", "\r" -> "␍", ' ' -> "·", other control bytes -> their Unicode
// control pictures; the rest of the UTF-8 text is kept.
QString visiblePiece(const std::string& piece);
QString visiblePiece(const QString& piece);

} // namespace sinkscope::views
