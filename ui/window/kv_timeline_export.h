// File > Export KV Timeline (CSV)…: asks for a file and has the worker write the session's KV
// timeline there (worker/kv_timeline_csv.h); then the status bar says where and how many rows
// (and when the timeline's cap left out the session's first writes), and the banner says why a
// file could not be written.
#pragma once

#include "worker/engine_types.h"

#include <QObject>

class QMainWindow;

namespace sinkscope::ui {

class EngineClient;
class StatusBanner;

class KvTimelineExport : public QObject {
    Q_OBJECT
public:
    KvTimelineExport(QMainWindow& window, EngineClient& engine, StatusBanner& banner);

    void chooseFile();                  // the menu action: a window-modal save dialog
    void exportTo(const QString& path); // as if chosen there

private:
    void onExported(const KvTimelineExported& result);

    QMainWindow& m_window;
    EngineClient& m_engine;
    StatusBanner& m_banner;
};

} // namespace sinkscope::ui
