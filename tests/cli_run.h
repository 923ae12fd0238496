// Runs the sinkscope-cli binary built with the tests (SINKSCOPE_CLI_PATH), or another program, and
// collects what it printed, for the suites that test the command line as a user calls it.
#pragma once

#include <QByteArray>
#include <QFileInfo>
#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

namespace sinkscope::test {

struct CliRun {
    QString program;
    QStringList args;
    bool finished = false; // false: it could not start, or ran past the time limit and was killed
    bool crashed = false;
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

// Runs `program args...` with stdin closed, killing it after `timeoutMs`.
inline CliRun
runProgram(const QString& program, const QStringList& args, int timeoutMs = 300'000,
           const QProcessEnvironment& environment = QProcessEnvironment::systemEnvironment()) {
    QProcess process;
    process.setProcessEnvironment(environment);
    process.start(program, args);
    CliRun run;
    run.program = program;
    run.args = args;
    if (!process.waitForStarted()) {
        run.err = "could not start " + program.toUtf8();
        return run;
    }
    process.closeWriteChannel();
    run.finished = process.waitForFinished(timeoutMs);
    if (!run.finished) {
        process.kill();
        process.waitForFinished();
        run.err.prepend("did not run to the end; ");
    }
    run.crashed = process.exitStatus() == QProcess::CrashExit;
    run.exitCode = process.exitCode();
    run.out += process.readAllStandardOutput();
    run.err += process.readAllStandardError();
    return run;
}

// Runs `sinkscope-cli args...` as runProgram does.
inline CliRun runCli(const QStringList& args, int timeoutMs = 300'000) {
    return runProgram(QStringLiteral(SINKSCOPE_CLI_PATH), args, timeoutMs);
}

// "sinkscope-cli ARGS -> exit N, stderr: ..." (the program's file name), for failure messages.
inline QString describe(const CliRun& run) {
    return QStringLiteral("%1 %2 -> exit %3, stderr: %4")
        .arg(QFileInfo(run.program).fileName(), run.args.join(QLatin1Char(' ')))
        .arg(run.exitCode)
        .arg(QString::fromUtf8(run.err));
}

} // namespace sinkscope::test
