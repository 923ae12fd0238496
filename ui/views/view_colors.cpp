#include "views/view_colors.h"

#include <cmath>

namespace sinkscope::views {

bool isDarkPalette(const QPalette& palette) {
    return palette.color(QPalette::Base).lightnessF() < 0.5;
}

QColor mixColors(const QColor& a, const QColor& b, double amount) {
    // Rounded to 8-bit channels: the colour equals the pixel it paints.
    const auto channel = [amount](int from, int to) {
        return int(std::lround(from + (to - from) * amount));
    };
    return QColor(channel(a.red(), b.red()), channel(a.green(), b.green()),
                  channel(a.blue(), b.blue()));
}

QColor fadedColor(const QColor& text, const QPalette& palette) {
    return mixColors(text, palette.color(QPalette::Base), 0.6);
}

MaskColors MaskColors::forPalette(const QPalette& palette) {
    // Mid-luminance hues stay legible on both backgrounds; the dark theme gets lighter variants.
    const bool dark = isDarkPalette(palette);
    MaskColors colors;
    colors.background = palette.color(QPalette::Base);
    colors.recent = dark ? QColor(0x5b, 0x9c, 0xf6) : QColor(0x1f, 0x6f, 0xd6);
    colors.sink = dark ? QColor(0xf7, 0xb3, 0x2b) : QColor(0xe0, 0x8a, 0x00);
    colors.evicted = dark ? QColor(0x9c, 0x4a, 0x5c) : QColor(0xe6, 0x9a, 0xa8);
    colors.future = mixColors(colors.background, palette.color(QPalette::Text), dark ? 0.10 : 0.07);
    colors.highlight = dark ? QColor(0x4a, 0xde, 0x80) : QColor(0x16, 0xa3, 0x4a);
    colors.errorText = dark ? QColor(0xff, 0x6b, 0x6b) : QColor(0xc6, 0x28, 0x28);
    return colors;
}

QColor MaskColors::cell(MaskCell kind) const {
    switch (kind) {
    case MaskCell::AttendedRecent:
        return recent;
    case MaskCell::AttendedSink:
        return sink;
    case MaskCell::Evicted:
        return evicted;
    case MaskCell::Future:
        break;
    }
    return future;
}

} // namespace sinkscope::views
