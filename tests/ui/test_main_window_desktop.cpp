// The playground as a desktop application: models dropped on the window or picked from File >
// Recent Models, the window's layout kept from one start to the next, the About box, the
// shortcuts in the menus, and the window's icon.
#include <QtTest>

#include "chat_panel/chat_panel.h"
#include "chat_panel/message_input.h"
#include "main_window_fixture.h"
#include "model/synthetic.h"
#include "model_files/model_info_dialog.h"
#include "model_files/recent_models.h"
#include "sinkscope_version.h"
#include "window/app_icon.h"
#include "worker/display_text.h"
#include "worker/engine_client.h"

#include <QDir>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QUrl>

using namespace sinkscope;
using namespace sinkscope::ui;
using namespace sinkscope::test;

namespace {

// A synthetic qwen2 model: another architecture and size than the fixture's, so that the window
// shows which one is loaded.
QString writeOtherModel(const QString& path) {
    SyntheticSpec spec;
    spec.architecture = "qwen2";
    std::string error;
    if (!writeSyntheticModel(spec, QFile::encodeName(path).toStdString(), error))
        qWarning("synthetic model: %s", error.c_str());
    return path;
}

QMimeData* filesMime(const QStringList& paths) {
    auto* mime = new QMimeData;
    QList<QUrl> urls;
    for (const QString& path : paths)
        urls << QUrl::fromLocalFile(path);
    mime->setUrls(urls);
    return mime;
}

// Drags `mime` over `target` as a file manager does: enter, then drop. Returns whether the
// target accepted the drag and the drop.
std::pair<bool, bool> dragAndDrop(QWidget* target, const QMimeData& mime) {
    const QPoint at = target->rect().center();
    QDragEnterEvent enter(at, Qt::CopyAction | Qt::MoveAction | Qt::LinkAction, &mime,
                          Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(target, &enter);
    QDropEvent drop(QPointF(at), Qt::CopyAction | Qt::MoveAction | Qt::LinkAction, &mime,
                    Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(target, &drop);
    return {enter.isAccepted(), drop.isAccepted()};
}

// The entries of File > Recent Models as the menu shows them when it opens.
QList<QAction*> shownEntries(RecentModelsMenu* menu) {
    menu->popup(QPoint(0, 0));
    QList<QAction*> entries;
    for (QAction* action : menu->actions())
        if (!action->isSeparator()) entries << action;
    return entries;
}

} // namespace

class TestMainWindowDesktop : public QObject, public MainWindowFixture {
    Q_OBJECT

private slots:
    void initTestCase() { setUpFolders(); }
    void init() { saveSettings(); }
    void droppedModelOpens();
    void refusedDropKeepsTheModel_data();
    void refusedDropKeepsTheModel();
    void dropWhileGeneratingStopsTheReply();
    void recentModelsListOpenAndClear();
    void recentModelsKeepTheLastEight();
    void layoutIsRestoredAtTheNextStart();
    void damagedLayoutSettingsAreIgnored();
    void aboutNamesVersionQtAndModel();
    void ctrlIShowsModelInformation();
    void windowIconHasTheShippedSizes();
};

// Dropped on the message box, which takes text drops: the model opens, no URL is typed.
void TestMainWindowDesktop::droppedModelOpens() {
    WindowPtr window = openWindow();
    QVERIFY(window);
    const QString other = writeOtherModel(m_dir.filePath(QStringLiteral("dropped.gguf")));
    QSignalSpy ready(window.get(), &MainWindow::modelReady);
    const std::unique_ptr<QMimeData> mime(filesMime({other}));
    const auto [entered, dropped] = dragAndDrop(window->chatPanel()->input()->viewport(), *mime);
    QVERIFY(entered);
    QVERIFY(dropped);
    QVERIFY(ready.wait(kWaitMs));
    QCOMPARE(ready.takeFirst().at(0).value<ModelInfo>().path, other);
    QCOMPARE(window->modelInfo()->architecture, QStringLiteral("qwen2"));
    QVERIFY2(window->modelLabelText().contains(parameterCount(window->modelInfo()->parameters)),
             qPrintable(window->modelLabelText()));
    QVERIFY(window->chatPanel()->input()->toPlainText().isEmpty());
}

void TestMainWindowDesktop::refusedDropKeepsTheModel_data() {
    QTest::addColumn<QStringList>("names");
    QTest::addColumn<QString>("reason");
    QTest::newRow("text file") << QStringList{"notes.txt"} << "notes.txt is not a GGUF model";
    QTest::newRow("two models") << QStringList{"a.gguf", "b.gguf"} << "one model file at a time";
    QTest::newRow("folder") << QStringList{"folder.gguf"} << "folder.gguf is a folder";
}

// Refused on the window itself: the reason is in the status bar, nothing starts loading.
void TestMainWindowDesktop::refusedDropKeepsTheModel() {
    QFETCH(QStringList, names);
    QFETCH(QString, reason);
    QStringList paths;
    for (const QString& name : names)
        paths << m_dir.filePath(name);
    if (names.size() == 1 && names[0] == QLatin1String("folder.gguf"))
        QVERIFY(QDir().mkpath(paths[0]));
    else
        for (const QString& path : paths)
            QVERIFY(QFile(path).open(QIODevice::WriteOnly));

    WindowPtr window = openWindow();
    QVERIFY(window);
    const QString label = window->modelLabelText();
    const std::unique_ptr<QMimeData> mime(filesMime(paths));
    const auto [entered, dropped] = dragAndDrop(window.get(), *mime);
    QVERIFY(!entered);
    QVERIFY(!dropped);
    QVERIFY2(window->statusBar()->currentMessage().contains(reason),
             qPrintable(window->statusBar()->currentMessage()));
    QVERIFY(!window->findChild<QProgressBar*>()->isVisible()); // not loading
    QCOMPARE(window->modelInfo()->path, m_modelPath);
    QCOMPARE(window->modelLabelText(), label);
}

// As File > Open Model… during a reply: the reply stops, then the dropped model opens.
void TestMainWindowDesktop::dropWhileGeneratingStopsTheReply() {
    saveSettings([](AppSettings& s) { s.limits.maxNewTokens = 1000000; });
    WindowPtr window = openWindow();
    QVERIFY(window);
    QSignalSpy replies(window.get(), &MainWindow::replyFinished);
    QSignalSpy ready(window.get(), &MainWindow::modelReady);
    typeMessage(*window, QStringLiteral("Keep talking"));
    QTRY_VERIFY_WITH_TIMEOUT(window->engine()->generatedTokenCount() >= 3, kWaitMs);
    QVERIFY(window->engine()->isGenerating());

    const QString other = writeOtherModel(m_dir.filePath(QStringLiteral("mid-reply.gguf")));
    const std::unique_ptr<QMimeData> mime(filesMime({other}));
    QVERIFY(dragAndDrop(window.get(), *mime).second);
    QCOMPARE(waitForReply(replies).reason, StopReason::Stopped);
    // The model may have loaded while the reply's end was awaited.
    QVERIFY(!ready.isEmpty() || ready.wait(kWaitMs));
    QCOMPARE(window->modelInfo()->path, other);
}

void TestMainWindowDesktop::recentModelsListOpenAndClear() {
    const QString second = writeOtherModel(m_dir.filePath(QStringLiteral("second.gguf")));
    const QString third = writeOtherModel(m_dir.filePath(QStringLiteral("third.gguf")));
    WindowPtr window = openWindow();
    QVERIFY(window);
    window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(window.get()));
    auto* menu = window->findChild<RecentModelsMenu*>();
    QVERIFY(menu);
    QSignalSpy ready(window.get(), &MainWindow::modelReady);
    for (const QString& path : {second, third, second}) {
        window->openModelFile(path);
        QVERIFY(ready.wait(kWaitMs));
    }
    // Most recent first, each once; kept in the settings.
    const QStringList expected = {second, third, m_modelPath};
    QCOMPARE(menu->models(), expected);
    QCOMPARE(AppSettings::load().recentModels, expected);
    QList<QAction*> entries = shownEntries(menu);
    QCOMPARE(entries.size(), 4);
    QVERIFY2(entries[0]->text().startsWith("&1 second.gguf — "), qPrintable(entries[0]->text()));
    QVERIFY(entries[1]->text().startsWith("&2 third.gguf — "));
    QVERIFY(entries[2]->text().startsWith("&3 synthetic.gguf — "));
    QCOMPARE(entries[1]->shortcut(), QKeySequence(QStringLiteral("Ctrl+Alt+2")));
    QCOMPARE(entries[3]->text(), QStringLiteral("&Clear Recent Models"));
    QVERIFY(!entries[3]->shortcut().isEmpty());
    menu->hide();

    // A file gone since is greyed when the menu opens again; the others still open.
    QVERIFY(QFile::remove(third));
    entries = shownEntries(menu);
    QVERIFY(entries[0]->isEnabled());
    QVERIFY(!entries[1]->isEnabled());
    QVERIFY(entries[2]->isEnabled());
    menu->hide();
    QTest::keyClick(window.get(), Qt::Key_3, Qt::ControlModifier | Qt::AltModifier);
    QVERIFY(ready.wait(kWaitMs));
    QCOMPARE(window->modelInfo()->path, m_modelPath);
    QCOMPARE(menu->models(), QStringList({m_modelPath, second, third}));

    // Clear, clicked in the open menu.
    entries = shownEntries(menu);
    QVERIFY(QTest::qWaitForWindowExposed(menu));
    QTest::mouseClick(menu, Qt::LeftButton, {}, menu->actionGeometry(entries[3]).center());
    QVERIFY(menu->models().isEmpty());
    QVERIFY(AppSettings::load().recentModels.isEmpty());
    entries = shownEntries(menu);
    QCOMPARE(entries.size(), 2);
    QCOMPARE(entries[0]->text(), QStringLiteral("No recent models"));
    QVERIFY(!entries[0]->isEnabled());
    QVERIFY(!entries[1]->isEnabled());
}

// The list as the settings keep it: at most eight, the newest first, one entry per file however
// its path was written, nothing empty.
void TestMainWindowDesktop::recentModelsKeepTheLastEight() {
    QStringList recent;
    for (int i = 0; i < 10; ++i)
        recent = withRecentModel(recent, m_dir.filePath(QStringLiteral("m%1.gguf").arg(i)));
    QCOMPARE(recent.size(), kMaxRecentModels);
    QCOMPARE(recent.constFirst(), m_dir.filePath(QStringLiteral("m9.gguf")));
    QCOMPARE(recent.constLast(), m_dir.filePath(QStringLiteral("m2.gguf")));

    // m5 again, written another way: it moves to the front, once.
    recent = withRecentModel(recent, m_dir.path() + QStringLiteral("/sub/../m5.gguf"));
    QCOMPARE(recent.size(), kMaxRecentModels);
    QCOMPARE(recent.count(m_dir.filePath(QStringLiteral("m5.gguf"))), 0);
    QCOMPARE(recent.constFirst(), m_dir.path() + QStringLiteral("/sub/../m5.gguf"));
    QCOMPARE(recent.constLast(), m_dir.filePath(QStringLiteral("m2.gguf")));

    QSettings(QStringLiteral("Sinkscope"), QStringLiteral("sinkscope"))
        .setValue("model/recent", QStringList{"", m_modelPath, "", m_modelPath});
    QCOMPARE(AppSettings::load().recentModels, QStringList{m_modelPath});
}

// Size, tab and splitters as the user left them when the window closed come back at the next
// start; a run that saves nothing (a screenshot) keeps the default layout.
void TestMainWindowDesktop::layoutIsRestoredAtTheNextStart() {
    QSize size;
    QList<int> chatSizes;
    {
        WindowPtr window = openWindow();
        QVERIFY(window);
        window->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(window.get()));
        QCOMPARE(window->tabs()->currentIndex(), 0);
        QTest::keyClick(window.get(), Qt::Key_5, Qt::ControlModifier); // View > Stats
        QCOMPARE(window->tabs()->currentIndex(), 4);
        window->resize(window->size() + QSize(200, 100));
        size = window->size();
        auto* splitter = window->findChild<QSplitter*>(QStringLiteral("chatSplitter"));
        QVERIFY(splitter);
        const QList<int> before = splitter->sizes();
        // The handle dragged 150 pixels to the left.
        QWidget* handle = splitter->handle(1);
        const QPoint grip = handle->rect().center();
        QTest::mousePress(handle, Qt::LeftButton, {}, grip);
        QTest::mouseMove(handle, grip - QPoint(150, 0));
        QTest::mouseRelease(handle, Qt::LeftButton, {}, grip - QPoint(150, 0));
        chatSizes = splitter->sizes();
        QVERIFY2(chatSizes[0] < before[0] - 100,
                 qPrintable(QStringLiteral("%1 -> %2").arg(before[0]).arg(chatSizes[0])));
        QVERIFY(window->close());
    }

    WindowPtr restarted = openWindow();
    QVERIFY(restarted);
    QCOMPARE(restarted->size(), size);
    QCOMPARE(restarted->tabs()->currentIndex(), 4);
    QCOMPARE(restarted->findChild<QSplitter*>(QStringLiteral("chatSplitter"))->sizes(), chatSizes);

    MainWindow::Options screenshot;
    screenshot.persistSettings = false;
    MainWindow unsaved(screenshot);
    QCOMPARE(unsaved.tabs()->currentIndex(), 0);
    QVERIFY(unsaved.size() != size);
}

// Settings edited by hand or by another version: the window opens with its default layout.
void TestMainWindowDesktop::damagedLayoutSettingsAreIgnored() {
    {
        QSettings settings(QStringLiteral("Sinkscope"), QStringLiteral("sinkscope"));
        settings.setValue("window/geometry", QByteArray("not a geometry"));
        settings.setValue("window/splitters/chatSplitter", QByteArray(3, '\xff'));
        settings.setValue("window/tab", 99);
        settings.setValue("model/recent", QStringLiteral("just one string.gguf"));
    }
    WindowPtr window = openWindow();
    QVERIFY(window);
    QCOMPARE(window->size(), QSize(1400, 900));
    QCOMPARE(window->tabs()->currentIndex(), 0);
    QCOMPARE(window->findChild<RecentModelsMenu*>()->models(),
             QStringList({m_modelPath, "just one string.gguf"}));
}

void TestMainWindowDesktop::aboutNamesVersionQtAndModel() {
    WindowPtr window = openWindow();
    QVERIFY(window);
    QAction* about = menuAction(window->menuBar(), "&Help", "&About Sinkscope");
    QVERIFY(about);
    about->trigger();
    auto* box = window->findChild<QMessageBox*>();
    QVERIFY(box);
    const QString text = box->text();
    const ModelInfo& model = *window->modelInfo();
    for (const QString& part : {QStringLiteral("Sinkscope</b> %1").arg(QLatin1String(kVersion)),
                                QStringLiteral("Qt %1").arg(QLatin1String(qVersion())),
                                QStringLiteral("Model: synthetic.gguf (llama, %1)")
                                    .arg(parameterCount(model.parameters))})
        QVERIFY2(text.contains(part), qPrintable(text + QStringLiteral(" lacks ") + part));
}

// The model information opens from the keyboard as from the status bar's model label.
void TestMainWindowDesktop::ctrlIShowsModelInformation() {
    WindowPtr window = openWindow();
    QVERIFY(window);
    window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(window.get()));
    QAction* info = menuAction(window->menuBar(), "&Help", "&Model Information…");
    QVERIFY(info);
    QCOMPARE(info->shortcut(), QKeySequence(QStringLiteral("Ctrl+I")));
    QTest::keyClick(window.get(), Qt::Key_I, Qt::ControlModifier);
    auto* dialog = window->findChild<ModelInfoDialog*>();
    QVERIFY(dialog);
    QVERIFY(QTest::qWaitForWindowExposed(dialog));
}

// The icon sinkscope sets (app/gui/main.cpp: QApplication::setWindowIcon(applicationIcon())):
// the compiled-in PNGs in every size shipped, drawn without an SVG plugin, and the window's own.
void TestMainWindowDesktop::windowIconHasTheShippedSizes() {
    QApplication::setWindowIcon(applicationIcon());
    const QIcon icon = QApplication::windowIcon();
    QVERIFY(!icon.isNull());
    QList<QSize> shipped;
    for (const int size : kAppIconSizes)
        shipped << QSize(size, size);
    QCOMPARE(icon.availableSizes(), shipped);
    for (const QSize& size : shipped) {
        const QImage image = icon.pixmap(size).toImage();
        QCOMPARE(image.size(), size);
        // The rounded square is opaque inside, and its corners are transparent.
        QCOMPARE(image.pixelColor(size.width() / 2, size.height() / 2).alpha(), 255);
        QCOMPARE(image.pixelColor(0, 0).alpha(), 0);
    }
    WindowPtr window = openWindow();
    QVERIFY(window);
    QVERIFY(!window->windowIcon().isNull());
    QCOMPARE(window->windowIcon().availableSizes(), shipped);
}

QTEST_MAIN(TestMainWindowDesktop)
#include "test_main_window_desktop.moc"
