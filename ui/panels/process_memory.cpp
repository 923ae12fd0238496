#include "panels/process_memory.h"

#include <QByteArray>
#include <QFile>

namespace sinkscope::ui {

qint64 residentSetBytes() {
    QFile status(QStringLiteral("/proc/self/status"));
    if (!status.open(QIODevice::ReadOnly)) return -1;
    // The line reads "VmRSS:    123456 kB".
    const QByteArray key("VmRSS:");
    for (QByteArray line = status.readLine(); !line.isEmpty(); line = status.readLine()) {
        if (!line.startsWith(key)) continue;
        const QList<QByteArray> fields = line.mid(key.size()).simplified().split(' ');
        bool ok = false;
        const qint64 kib = fields.value(0).toLongLong(&ok);
        return ok ? kib * 1024 : -1;
    }
    return -1;
}

} // namespace sinkscope::ui
