// One line of text that changes many times a second while the engine runs: speeds, counters, the
// heatmap's viewport. A QLabel asks its parents to lay out again on every setText, and inside a tab
// widget that repaints the whole tab (QTabWidget repaints itself on every layout request): at 30
// refreshes a second that drawing took CPU from the decoding threads. This widget's size does not
// depend on its text, so a new text repaints the line and lays out nothing. Text wider than the
// widget is elided at the right; the tooltip then shows all of it, and the context menu's Copy
// copies it.
#pragma once

#include <QString>
#include <QWidget>

namespace sinkscope::views {

class LiveLabel : public QWidget {
    Q_OBJECT
public:
    // `widthSample`: a typical text, whose width is the preferred width (the layout may give
    // more or less).
    explicit LiveLabel(const QString& widthSample, QWidget* parent = nullptr);

    QString text() const { return m_text; }
    void setText(const QString& text);
    // Whether the whole text fits (false: it is shown elided).
    bool fitsWidth() const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    bool event(QEvent* event) override;

private:
    QString m_text;
    QString m_widthSample;
};

} // namespace sinkscope::views
