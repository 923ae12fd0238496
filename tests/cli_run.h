// Runs the sinkscope-cli binary built with the tests (SINKSCOPE_CLI_PATH) and collects what it
// printed, for the suites that test the command line as a user calls it.
#pragma once

#include <QByteArray>
#include <QProcess>
#include <QString>
#include <QStringList>

namespace sinkscope::test {

struct CliRun {
    QStringList args;
    bool finished = false; // false: it could not start, or ran past the time limit and was killed
    bool crashed = false;
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

// Runs `sinkscope-cli args...` with stdin closed, killing it after `timeoutMs`.
inline CliRun runCli(const QStringList& args, int timeoutMs = 300'000) {
    QProcess process;
    process.start(QStringLiteral(SINKSCOPE_CLI_PATH), args);
    CliRun run;
    run.args = args;
    if (!process.waitForStarted()) {
        run.err = "could not start " SINKSCOPE_CLI_PATH;
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

// "sinkscope-cli ARGS -> exit N, stderr: ...", for failure messages.
inline QString describe(const CliRun& run) {
    return QStringLiteral("sinkscope-cli %1 -> exit %2, stderr: %3")
        .arg(run.args.join(QLatin1Char(' ')))
        .arg(run.exitCode)
        .arg(QString::fromUtf8(run.err));
}

} // namespace sinkscope::test
