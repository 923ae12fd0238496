#include "window/about_box.h"

#include "sinkscope_version.h"
#include "worker/display_text.h"

#include <QFileInfo>
#include <QMessageBox>

namespace sinkscope::ui {

QString aboutText(const ModelInfo* model) {
    const QString modelLine =
        model ? QObject::tr("Model: %1 (%2, %3)")
                    .arg(QFileInfo(model->path).fileName().toHtmlEscaped(),
                         model->architecture.toHtmlEscaped(), parameterCount(model->parameters))
              : QObject::tr("No model loaded");
    // qVersion(): the Qt found at run time, which may be newer than the one built against.
    return QObject::tr("<b>Sinkscope</b> %1<br>A playground for a language model whose KV cache "
                       "is bounded: a sliding window of recent tokens plus pinned sink tokens."
                       "<p>Qt %2<br>%3</p>")
        .arg(QLatin1String(kVersion), QLatin1String(qVersion()), modelLine);
}

void showAboutBox(const ModelInfo* model, QWidget* parent) {
    auto* box = new QMessageBox(QMessageBox::Information, QObject::tr("About Sinkscope"),
                                aboutText(model), QMessageBox::Ok, parent);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

} // namespace sinkscope::ui
