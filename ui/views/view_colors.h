// Colours shared by the inspection widgets, chosen from the widget's palette so that the same
// meaning keeps the same hue in light and dark themes.
#pragma once

#include "memory/mask.h"

#include <QColor>
#include <QPalette>

namespace sinkscope::views {

bool isDarkPalette(const QPalette& palette);

// Mix `a` toward `b`: amount 0 gives a, 1 gives b.
QColor mixColors(const QColor& a, const QColor& b, double amount);
// Text that has left the KV window, drawn toward the background.
QColor fadedColor(const QColor& text, const QPalette& palette);

struct MaskColors {
    QColor recent;     // attended, inside the window
    QColor sink;       // attended only because the key is a sink
    QColor evicted;    // past, outside the window, not a sink
    QColor future;     // k > q
    QColor background; // outside the matrix, gaps between cells
    QColor highlight;  // the highlighted key column
    QColor errorText;  // error messages

    static MaskColors forPalette(const QPalette& palette);
    QColor cell(MaskCell kind) const;
};

} // namespace sinkscope::views
