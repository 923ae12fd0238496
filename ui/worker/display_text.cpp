#include "worker/display_text.h"

#include <QCoreApplication>
#include <QLocale>

namespace sinkscope::ui {

QString countOf(qint64 count, const QString& singular, const QString& plural) {
    return QStringLiteral("%1 %2").arg(QLocale().toString(count), count == 1 ? singular : plural);
}

QString tokenCount(qint64 count) {
    return countOf(count, QCoreApplication::translate("ui", "token"),
                   QCoreApplication::translate("ui", "tokens"));
}

QString parameterCount(qint64 parameters) {
    if (parameters >= 1000000)
        return QCoreApplication::translate("ui", "%1M params")
            .arg(QLocale().toString(parameters / 1e6, 'f', 1));
    return QCoreApplication::translate("ui", "%1K params")
        .arg(QLocale().toString(parameters / 1e3, 'f', 0));
}

QString formatRate(double perSecond) {
    return QLocale().toString(perSecond, 'f', perSecond < 100 ? 1 : 0);
}

QString formatMilliseconds(double seconds) {
    const double milliseconds = seconds * 1e3;
    return QLocale().toString(milliseconds, 'f', milliseconds < 100 ? 1 : 0);
}

QString exceptionText(const std::exception_ptr& error) {
    try {
        std::rethrow_exception(error);
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what());
    } catch (...) {
        return QStringLiteral("unknown error");
    }
}

} // namespace sinkscope::ui
