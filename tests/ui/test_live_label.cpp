// LiveLabel, the line of text the playground rewrites on every refresh: a new text repaints the
// line without asking any parent to lay out again (a QLabel in the same place does, which is what
// made every refresh repaint the whole tab), text too wide for the line is elided with all of it
// in the tooltip, and the context menu's Copy copies the whole text.
#include <QtTest>

#include "views/live_label.h"

#include <QAction>
#include <QClipboard>
#include <QLabel>
#include <QTabWidget>
#include <QVBoxLayout>

using sinkscope::views::LiveLabel;

namespace {

// Counts the events of one type that reach a widget.
class EventCounter : public QObject {
public:
    EventCounter(QObject* watched, QEvent::Type type) : m_type(type) {
        watched->installEventFilter(this);
    }
    int count() const { return m_count; }

protected:
    bool eventFilter(QObject*, QEvent* event) override {
        if (event->type() == m_type) ++m_count;
        return false;
    }

private:
    QEvent::Type m_type;
    int m_count = 0;
};

// A tab widget whose page holds `line` above a stretch, shown and laid out.
std::unique_ptr<QTabWidget> tabAround(QWidget* line) {
    auto tabs = std::make_unique<QTabWidget>();
    auto* page = new QWidget;
    auto* layout = new QVBoxLayout(page);
    layout->addWidget(line);
    layout->addStretch(1);
    tabs->addTab(page, QStringLiteral("page"));
    tabs->resize(600, 300);
    tabs->show();
    return tabs;
}

// Texts of different widths, as a tokens/s counter shows them.
QStringList changingTexts() {
    QStringList texts;
    for (int i = 1; i <= 12; ++i)
        texts << QStringLiteral("Generating… %1 tokens · %2 tok/s").arg(i * i * 37).arg(i * 1.7);
    return texts;
}

} // namespace

class TestLiveLabel : public QObject {
    Q_OBJECT

private slots:
    void newTextLaysOutNothing() {
        auto* line = new LiveLabel(QStringLiteral("Generating… 1,000 tokens · 25.0 tok/s"));
        const auto tabs = tabAround(line);
        QVERIFY(QTest::qWaitForWindowExposed(tabs.get()));
        const EventCounter layouts(tabs.get(), QEvent::LayoutRequest);
        const EventCounter paints(line, QEvent::Paint);
        const QSize hint = line->sizeHint();
        for (const QString& text : changingTexts()) {
            line->setText(text);
            QCoreApplication::processEvents();
            QCOMPARE(line->text(), text);
        }
        QCOMPARE(layouts.count(), 0);
        QCOMPARE(line->sizeHint(), hint);
        QVERIFY2(paints.count() > 0, "a new text must repaint the line");
    }

    // The control: the same texts in a QLabel make the tab widget lay out (and repaint) again,
    // so the test above would see it if LiveLabel behaved the same.
    void qLabelLaysOutTheTab() {
        auto* label = new QLabel;
        const auto tabs = tabAround(label);
        QVERIFY(QTest::qWaitForWindowExposed(tabs.get()));
        const EventCounter layouts(tabs.get(), QEvent::LayoutRequest);
        for (const QString& text : changingTexts()) {
            label->setText(text);
            QCoreApplication::processEvents();
        }
        QVERIFY(layouts.count() > 0);
    }

    void sameTextRepaintsNothing() {
        auto* line = new LiveLabel(QStringLiteral("sample"));
        const auto tabs = tabAround(line);
        QVERIFY(QTest::qWaitForWindowExposed(tabs.get()));
        line->setText(QStringLiteral("12 tok/s"));
        QCoreApplication::processEvents();
        const EventCounter paints(line, QEvent::Paint);
        line->setText(QStringLiteral("12 tok/s"));
        QCoreApplication::processEvents();
        QCOMPARE(paints.count(), 0);
    }

    void wideTextIsElidedAndKeptWhole() {
        LiveLabel line(QStringLiteral("short"));
        line.resize(line.fontMetrics().horizontalAdvance(QStringLiteral("0123456789")), 20);
        line.setText(QStringLiteral("0123"));
        QVERIFY(line.fitsWidth());
        const QString wide = QStringLiteral("window 256 (budget 256) · kv_bits 8 · sinks 290/290");
        line.setText(wide);
        QVERIFY(!line.fitsWidth());
        QCOMPARE(line.text(), wide);
    }

    void copyTakesTheWholeText() {
        LiveLabel line(QStringLiteral("short"));
        line.resize(40, 20);
        const QString wide = QStringLiteral("q 1,000–1,500 × k 1,000–1,500 of 1,500 · window 256");
        line.setText(wide);
        QCOMPARE(line.contextMenuPolicy(), Qt::ActionsContextMenu);
        const QList<QAction*> actions = line.actions();
        QCOMPARE(actions.size(), 1);
        QGuiApplication::clipboard()->clear();
        actions.first()->trigger();
        QCOMPARE(QGuiApplication::clipboard()->text(), wide);
    }
};

QTEST_MAIN(TestLiveLabel)
#include "test_live_label.moc"
