// `cmake --install` into a temporary prefix, as a packager or a user runs it: both executables in
// bin/ (and they run from there), the desktop entry in share/applications/ naming the installed
// program and icon, and the icon under share/icons/hicolor/ (the SVG and its PNG sizes).
#include "cli_run.h"
#include "sinkscope_version.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMap>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtEndian>
#include <QtTest>

using namespace sinkscope::test;

namespace {

constexpr int kInstallWaitMs = 120'000;

// The [Desktop Entry] group's keys and values (freedesktop Desktop Entry Specification: one
// "Key=Value" a line, '#' comments, groups in brackets).
QMap<QString, QString> desktopEntry(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text)) return {};
    QMap<QString, QString> entry;
    QString group;
    while (!file.atEnd()) {
        const QString line = QString::fromUtf8(file.readLine()).trimmed();
        if (line.isEmpty() || line.startsWith(QLatin1Char('#'))) continue;
        if (line.startsWith(QLatin1Char('['))) {
            group = line;
            continue;
        }
        const qsizetype equals = line.indexOf(QLatin1Char('='));
        if (group == QLatin1String("[Desktop Entry]") && equals > 0)
            entry.insert(line.left(equals).trimmed(), line.mid(equals + 1).trimmed());
    }
    return entry;
}

} // namespace

class TestInstall : public QObject {
    Q_OBJECT
    QTemporaryDir m_prefix;

    QString installed(const QString& relative) const { return m_prefix.filePath(relative); }

private slots:
    void initTestCase() {
        QVERIFY(m_prefix.isValid());
        const CliRun run =
            runProgram(QStringLiteral(SINKSCOPE_CMAKE_COMMAND),
                       {QStringLiteral("--install"), QStringLiteral(SINKSCOPE_BUILD_DIR),
                        QStringLiteral("--prefix"), m_prefix.path()},
                       kInstallWaitMs);
        QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(run)));
    }

    void installsBothExecutablesThatRun_data() {
        QTest::addColumn<QString>("name");
        QTest::newRow("sinkscope") << QStringLiteral("sinkscope");
        QTest::newRow("sinkscope-cli") << QStringLiteral("sinkscope-cli");
    }

    void installsBothExecutablesThatRun() {
        QFETCH(QString, name);
        const QFileInfo program(installed(QStringLiteral("bin/") + name));
        QVERIFY2(program.isFile() && program.isExecutable(), qPrintable(program.filePath()));
        const CliRun run = runProgram(program.filePath(), {QStringLiteral("--version")}, 60'000);
        QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(run)));
        QCOMPARE(QString::fromUtf8(run.out),
                 QStringLiteral("%1 %2\n").arg(name, QLatin1String(sinkscope::kVersion)));
    }

    void desktopEntryNamesTheInstalledProgramAndIcon() {
        const QString path = installed(QStringLiteral("share/applications/sinkscope.desktop"));
        QVERIFY2(QFileInfo(path).isFile(), qPrintable(path));
        const QMap<QString, QString> entry = desktopEntry(path);
        QCOMPARE(entry.value("Type"), QStringLiteral("Application"));
        QCOMPARE(entry.value("Name"), QStringLiteral("Sinkscope"));
        QVERIFY(!entry.value("Comment").isEmpty());
        QCOMPARE(entry.value("Terminal"), QStringLiteral("false"));
        QCOMPARE(entry.value("Categories"), QStringLiteral("Development;Science;"));

        // Exec runs the installed executable with the opened file; Icon names the installed icon.
        const QStringList exec = entry.value("Exec").split(QLatin1Char(' '));
        QCOMPARE(exec, QStringList({"sinkscope", "%f"}));
        QVERIFY(QFileInfo(installed(QStringLiteral("bin/") + exec.constFirst())).isExecutable());
        const QString icon = installed(
            QStringLiteral("share/icons/hicolor/scalable/apps/%1.svg").arg(entry.value("Icon")));
        QFile iconFile(icon);
        QVERIFY2(iconFile.open(QIODevice::ReadOnly), qPrintable(icon));
        QVERIFY(iconFile.readAll().contains("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    }

    // PNG renderings for menus that draw no SVG: a PNG of each size in its hicolor folder.
    void installsThePngIconSizes() {
        for (const int size : {16, 32, 48, 64, 128, 256}) {
            const QString path =
                installed(QStringLiteral("share/icons/hicolor/%1x%1/apps/sinkscope.png").arg(size));
            QFile file(path);
            QVERIFY2(file.open(QIODevice::ReadOnly), qPrintable(path));
            const QByteArray head = file.read(24); // the signature, then IHDR's width and height
            QVERIFY(head.startsWith("\x89PNG\r\n\x1a\n"));
            QCOMPARE(qFromBigEndian<quint32>(head.constData() + 16), quint32(size));
            QCOMPARE(qFromBigEndian<quint32>(head.constData() + 20), quint32(size));
        }
    }

    // The reference checker where the machine has it (desktop-file-utils is not a dependency).
    void desktopEntryValidates() {
        const QString validator =
            QStandardPaths::findExecutable(QStringLiteral("desktop-file-validate"));
        if (validator.isEmpty()) QSKIP("desktop-file-validate is not installed");
        const CliRun run = runProgram(
            validator, {installed(QStringLiteral("share/applications/sinkscope.desktop"))});
        QVERIFY2(run.finished && run.exitCode == 0 && run.out.isEmpty(),
                 qPrintable(describe(run) + QString::fromUtf8(run.out)));
    }
};

QTEST_GUILESS_MAIN(TestInstall)
#include "test_install.moc"
