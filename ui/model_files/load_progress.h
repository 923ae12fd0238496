// The status bar's view of a load (a model opening, a saved session being restored, edited tools
// being pinned): the stage, a bar (busy, or the prefill's tokens done out of its total) and
// Cancel. Hidden while nothing loads.
#pragma once

#include "worker/engine_types.h"

#include <QWidget>

class QLabel;
class QProgressBar;
class QPushButton;

namespace sinkscope::ui {

class LoadProgressWidget : public QWidget {
    Q_OBJECT
public:
    explicit LoadProgressWidget(QWidget* parent = nullptr);

    // Shows the stage; the report that ends a load hides the widget.
    void showProgress(const LoadProgress& progress);
    QString text() const; // "Loading model.gguf: Prefilling the sinks 64 / 301"
    QPushButton* cancelButton() const { return m_cancel; }

signals:
    void cancelRequested();

private:
    QLabel* m_label = nullptr;
    QProgressBar* m_bar = nullptr;
    QPushButton* m_cancel = nullptr;
    quint64 m_cancelledTicket = 0; // the Cancel clicked during this load: it says so until it ends
    quint64 m_ticket = 0;          // the load shown
    QString m_title;               // "Loading model.gguf"
};

} // namespace sinkscope::ui
