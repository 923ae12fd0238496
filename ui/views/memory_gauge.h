// The bounded KV memory at a glance, for the status bar: a bar laid out as the cache is (the
// pinned sink slots, then the ring of window slots, filled in the heatmap's colours, with a tick
// at the slot the next token writes) and one line of figures. Its tooltip says what the next token
// will do: which slot it writes and which token, if any, that evicts.
#pragma once

#include "memory/snapshot.h"

#include <QWidget>

namespace sinkscope::views {

struct GaugeFigures {
    int sinkSlots = 0;
    int sinksUsed = 0;
    qint64 window = 0;
    qint64 ringFilled = 0; // ring slots holding a token
    qint64 bytesAllocated = 0;
    qint64 budgetBytes = 0;
    qint64 evictions = 0;
    int nextSlot = -1; // the slot the next window token writes (-1: unknown)
};

class MemoryGauge : public QWidget {
    Q_OBJECT
public:
    explicit MemoryGauge(QWidget* parent = nullptr);

    // A new session, before its first step: the sinks pinned, the ring empty.
    void showSession(int sinkSlots, int sinksUsed, qint64 window, qint64 bytesAllocated,
                     qint64 budgetBytes);
    void showStep(const StepSnapshot& snapshot);
    void clear(); // no model

    const GaugeFigures& figures() const { return m_figures; }
    QString figuresText() const { return m_text; }

    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    void refresh(const QString& nextWrite);
    void fitText(); // widens the size hint when the text outgrew it

    GaugeFigures m_figures;
    QString m_text;
    int m_textWidth = 0; // of the widest text since the last clear(), in pixels
    bool m_empty = true;
};

} // namespace sinkscope::views
