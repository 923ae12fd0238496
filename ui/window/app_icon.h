// The application's icon: resources/icons/sinkscope.svg rendered to PNGs in the sizes desktops
// ask for (scripts/render-icons.sh), compiled in as resources, so that it shows without Qt's SVG
// plugin. The GUI sets it with QApplication::setWindowIcon.
#pragma once

#include <QIcon>

#include <array>

namespace sinkscope::ui {

inline constexpr std::array<int, 6> kAppIconSizes = {16, 32, 48, 64, 128, 256};

QIcon applicationIcon();

} // namespace sinkscope::ui
