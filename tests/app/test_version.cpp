// --version of both executables as a user runs them: one line naming the program and the project's
// version (project() in the top CMakeLists.txt, through the generated sinkscope_version.h), exit 0.
#include "cli_run.h"
#include "sinkscope_version.h"

#include <QRegularExpression>
#include <QtTest>

using namespace sinkscope::test;

class TestVersion : public QObject {
    Q_OBJECT

private slots:
    void versionIsThreeNumbers() {
        QVERIFY2(QRegularExpression(QStringLiteral("^\\d+\\.\\d+\\.\\d+$"))
                     .match(QLatin1String(sinkscope::kVersion))
                     .hasMatch(),
                 sinkscope::kVersion);
    }

    void printsTheVersion_data() {
        QTest::addColumn<QString>("program");
        QTest::addColumn<QString>("name");
        QTest::newRow("sinkscope") << QStringLiteral(SINKSCOPE_GUI_PATH) << "sinkscope";
        QTest::newRow("sinkscope-cli") << QStringLiteral(SINKSCOPE_CLI_PATH) << "sinkscope-cli";
    }

    void printsTheVersion() {
        QFETCH(QString, program);
        QFETCH(QString, name);
        const CliRun run = runProgram(program, {QStringLiteral("--version")}, 60'000);
        QVERIFY2(run.finished && !run.crashed && run.exitCode == 0, qPrintable(describe(run)));
        QCOMPARE(QString::fromUtf8(run.out),
                 QStringLiteral("%1 %2\n").arg(name, QLatin1String(sinkscope::kVersion)));
    }

    // A terminal without a display: the GUI still prints its version and help, as a CLI does
    // (a window system is needed only for the window).
    void guiPrintsWithoutADisplay_data() {
        QTest::addColumn<QString>("option");
        QTest::addColumn<QString>("expected");
        QTest::newRow("--version")
            << "--version" << QStringLiteral("sinkscope %1\n").arg(sinkscope::kVersion);
        QTest::newRow("--help") << "--help"
                                << "--screenshot <FILE>";
    }

    void guiPrintsWithoutADisplay() {
        QFETCH(QString, option);
        QFETCH(QString, expected);
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.remove(QStringLiteral("DISPLAY"));
        environment.remove(QStringLiteral("WAYLAND_DISPLAY"));
        environment.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("xcb"));
        const CliRun run =
            runProgram(QStringLiteral(SINKSCOPE_GUI_PATH), {option}, 60'000, environment);
        QVERIFY2(run.finished && !run.crashed && run.exitCode == 0, qPrintable(describe(run)));
        QVERIFY2(QString::fromUtf8(run.out).contains(expected), run.out.constData());
    }

    // The GUI takes one model file as its argument (the desktop entry's Exec=sinkscope %f); two
    // are refused before any window opens.
    // So is a palette it does not know.
    void guiRefusesBadArguments_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("two models") << QStringList{"a.gguf", "b.gguf"} << "one model at a time";
        QTest::newRow("unknown palette")
            << QStringList{"--palette", "purple"} << "--palette must be light or dark";
    }

    void guiRefusesBadArguments() {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const CliRun run = runProgram(QStringLiteral(SINKSCOPE_GUI_PATH), args, 60'000);
        QVERIFY2(run.finished && !run.crashed, qPrintable(describe(run)));
        QCOMPARE(run.exitCode, 1);
        QVERIFY2(QString::fromUtf8(run.err).contains(message), run.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestVersion)
#include "test_version.moc"
