#include "window/app_icon.h"

namespace sinkscope::ui {

QIcon applicationIcon() {
    QIcon icon;
    for (const int size : kAppIconSizes)
        icon.addFile(QStringLiteral(":/icons/sinkscope-%1.png").arg(size), QSize(size, size));
    return icon;
}

} // namespace sinkscope::ui
