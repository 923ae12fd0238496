// sinkscope [FILE | --model FILE] [--preset NAME|FILE] [--calls auto|required|none] [--tab NAME]
//           [--palette light|dark]
//           [--screenshot FILE (--prompt TEXT --n-predict N | --policies-demo)]
// sinkscope --version
//
// Opens the playground window, on FILE when one is given (as the desktop entry's "Open with"
// passes it); --preset pins a preset's tools and --calls sets the call policy, for this run only.
// With --screenshot it sends the prompt, waits for the reply to finish (a call is shown as a card,
// its tool's sink slots highlighted), saves the window as a PNG and exits (0 on success); it works
// on the offscreen platform.
// With --policies-demo instead of a prompt it runs a short policy comparison in the Policies tab
// on the built-in story, picks a position on the chart, and saves the window when the run ends.
// --palette draws the window in light or dark colours instead of the desktop's.
// --tab picks the right-hand tab shown (mask, kv, tools, settings, stats, policies); without it
// the window shows the tab it showed when it was last closed.
#include "app_palette.h"
#include "event_loop_watch.h"
#include "panels/policies_panel.h"
#include "panels/process_memory.h"
#include "sinkscope_version.h"
#include "window/app_icon.h"
#include "window/main_window.h"
#include "worker/engine_types.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QPixmap>
#include <QPushButton>
#include <QSpinBox>
#include <QTabWidget>
#include <QTimer>

#include <cstdio>
#include <optional>

namespace {

using sinkscope::ui::GenerationReport;
using sinkscope::ui::MainWindow;
using sinkscope::ui::ModelInfo;

constexpr int kScreenshotTimeoutMs = 10 * 60 * 1000;

struct CommandLine {
    QString model;
    QString screenshot;
    QString prompt;
    int nPredict = 0;
    int tab = -1; // -1: the tab restored from the last run
    bool policiesDemo = false;
    QString preset;
    QString palette; // "light", "dark", or empty: the desktop's
    std::optional<sinkscope::CallPolicy> calls;
};

const QStringList kTabNames = {QStringLiteral("mask"),  QStringLiteral("kv"),
                               QStringLiteral("tools"), QStringLiteral("settings"),
                               QStringLiteral("stats"), QStringLiteral("policies")};
const QStringList kCallPolicyNames = {QStringLiteral("auto"), QStringLiteral("required"),
                                      QStringLiteral("none")};
constexpr sinkscope::CallPolicy kCallPolicies[] = {
    sinkscope::CallPolicy::Auto, sinkscope::CallPolicy::Required, sinkscope::CallPolicy::None};
constexpr int kDemoWindow = 64; // --policies-demo: W, well inside stories260K's context
constexpr double kDemoPickedFraction = 0.75; // the chart position the demo picks

void fail(const QString& message) {
    std::fprintf(stderr, "sinkscope: %s\n", qPrintable(message));
}

// nullopt after printing what is wrong.
std::optional<CommandLine> parseCommandLine(const QCoreApplication& app) {
    QCommandLineParser parser;
    parser.setApplicationDescription(QApplication::translate(
        "main", "A playground for a language model with a bounded KV cache."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption model(QStringLiteral("model"),
                                   QApplication::translate("main", "The GGUF model to open."),
                                   QStringLiteral("FILE"));
    const QCommandLineOption screenshot(
        QStringLiteral("screenshot"),
        QApplication::translate("main", "Send --prompt, save the window to FILE (PNG) and exit."),
        QStringLiteral("FILE"));
    const QCommandLineOption prompt(QStringLiteral("prompt"),
                                    QApplication::translate("main", "The message to send."),
                                    QStringLiteral("TEXT"));
    const QCommandLineOption nPredict(
        QStringLiteral("n-predict"),
        QApplication::translate("main", "Maximum new tokens of the reply (this run only)."),
        QStringLiteral("N"));
    const QCommandLineOption tab(QStringLiteral("tab"),
                                 QApplication::translate("main", "The tab shown: %1.")
                                     .arg(kTabNames.join(QStringLiteral(", "))),
                                 QStringLiteral("NAME"));
    const QCommandLineOption policiesDemo(
        QStringLiteral("policies-demo"),
        QApplication::translate("main", "With --screenshot: run a short policy comparison on "
                                        "the built-in story instead of sending a prompt."));
    const QCommandLineOption preset(
        QStringLiteral("preset"),
        QApplication::translate(
            "main", "Pin this preset's tools (its name, e.g. \"Smart home\", or a preset or "
                    "tools file)."),
        QStringLiteral("NAME"));
    const QCommandLineOption calls(QStringLiteral("calls"),
                                   QApplication::translate("main", "Tool calls: %1.")
                                       .arg(kCallPolicyNames.join(QStringLiteral(", "))),
                                   QStringLiteral("POLICY"));
    const QCommandLineOption palette(
        QStringLiteral("palette"),
        QApplication::translate("main", "The window's colours: light or dark (default: the "
                                        "desktop's)."),
        QStringLiteral("NAME"));
    parser.addOptions(
        {model, screenshot, prompt, nPredict, tab, policiesDemo, preset, calls, palette});
    parser.addPositionalArgument(
        QStringLiteral("file"),
        QApplication::translate("main", "The GGUF model to open (as --model)."),
        QStringLiteral("[FILE]"));
    parser.process(app);

    CommandLine line;
    line.model = parser.value(model);
    const QStringList files = parser.positionalArguments();
    if (files.size() > 1 || (!files.isEmpty() && parser.isSet(model))) {
        fail(QStringLiteral("one model at a time: give FILE or --model, once"));
        return std::nullopt;
    }
    if (!files.isEmpty()) line.model = files.constFirst();
    line.screenshot = parser.value(screenshot);
    line.prompt = parser.value(prompt);
    if (parser.isSet(nPredict)) {
        bool ok = false;
        line.nPredict = parser.value(nPredict).toInt(&ok);
        if (!ok || line.nPredict <= 0) {
            fail(QStringLiteral("--n-predict needs a positive number, got '%1'")
                     .arg(parser.value(nPredict)));
            return std::nullopt;
        }
    }
    line.policiesDemo = parser.isSet(policiesDemo);
    line.palette = parser.value(palette).toLower();
    if (parser.isSet(palette) && line.palette != QLatin1String("light") &&
        line.palette != QLatin1String("dark")) {
        fail(QStringLiteral("--palette must be light or dark"));
        return std::nullopt;
    }
    line.preset = parser.value(preset);
    if (parser.isSet(calls)) {
        const qsizetype index = kCallPolicyNames.indexOf(parser.value(calls).toLower());
        if (index < 0) {
            fail(QStringLiteral("--calls must be one of %1")
                     .arg(kCallPolicyNames.join(QStringLiteral(", "))));
            return std::nullopt;
        }
        line.calls = kCallPolicies[index];
    }
    if (parser.isSet(tab)) {
        line.tab = int(kTabNames.indexOf(parser.value(tab).toLower()));
        if (line.tab < 0) {
            fail(QStringLiteral("--tab must be one of %1")
                     .arg(kTabNames.join(QStringLiteral(", "))));
            return std::nullopt;
        }
    }
    if (!line.screenshot.isEmpty() && !line.policiesDemo && line.prompt.trimmed().isEmpty()) {
        fail(QStringLiteral("--screenshot needs a non-empty --prompt"));
        return std::nullopt;
    }
    return line;
}

// Saves the window once the last batch has laid out and painted, and exits.
void saveWindowAndExit(MainWindow& window, const QString& path) {
    QTimer::singleShot(0, &window, [&window, path] {
        if (!window.grab().save(path, "PNG")) {
            fail(QStringLiteral("could not write %1").arg(path));
            QCoreApplication::exit(1);
            return;
        }
        QCoreApplication::exit(0);
    });
}

// dense, window, sink:1, sink:4 and sink:4:streaming over the built-in story with W = 64, run once
// the model's first session is built; the window is saved when the run ends.
void runPoliciesDemo(MainWindow& window, const CommandLine& line) {
    sinkscope::ui::PoliciesPanel* panel = window.policiesPanel();
    QObject::connect(
        &window, &MainWindow::sessionRebuilt, &window,
        [panel](const sinkscope::ui::SessionInfo& info) {
            // The budget window (the spin box's limit) is known from here on.
            if (info.reason != QStringLiteral("Model loaded")) return;
            panel->setPolicyChecked(QStringLiteral("recompute"), false);
            panel->findChild<QSpinBox*>(QStringLiteral("policyWindow"))->setValue(kDemoWindow);
            panel->runButton()->click();
        });
    QObject::connect(
        panel, &sinkscope::ui::PoliciesPanel::runFinished, &window,
        [&window, panel, path = line.screenshot](const sinkscope::ui::PolicyRunReport& report) {
            if (report.state != sinkscope::ui::PolicyRunState::Finished) {
                fail(QStringLiteral("the policy run %1: %2")
                         .arg(policyRunStateText(report.state), report.error));
                QCoreApplication::exit(1);
                return;
            }
            panel->selectPosition(qint64(double(report.streamTokens - 2) * kDemoPickedFraction));
            saveWindowAndExit(window, path);
        });
}

// Sends the prompt once the model is ready, and saves the window when the reply is done. Prints
// one JSON line with the reply's speed, the GUI thread's longest stall and longest busy stretch
// while it ran (event_loop_watch.h), and the process's resident memory when it ended.
void runScreenshot(MainWindow& window, const CommandLine& line) {
    auto* watch = new EventLoopWatch(&window);
    if (line.policiesDemo)
        runPoliciesDemo(window, line);
    else
        QObject::connect(
            &window, &MainWindow::modelReady, &window,
            [&window, watch, prompt = line.prompt](const ModelInfo&) {
                watch->start();
                window.sendMessage(prompt);
            },
            Qt::SingleShotConnection);
    QObject::connect(&window, &MainWindow::modelLoadFailed, &window,
                     [&window](const QString& message) {
                         if (window.hasModel()) return;
                         fail(message);
                         QCoreApplication::exit(1);
                     });
    QObject::connect(
        &window, &MainWindow::replyFinished, &window,
        [&window, watch, path = line.screenshot](const GenerationReport& report) {
            if (report.reason == sinkscope::ui::StopReason::Failed) {
                fail(QStringLiteral("generation failed"));
                QCoreApplication::exit(1);
                return;
            }
            std::printf("{\"prompt_tokens\": %d, \"generated_tokens\": %d, "
                        "\"prefill_tokens_per_s\": %.1f, \"decode_tokens_per_s\": "
                        "%.1f, \"max_event_loop_stall_ms\": %.1f, "
                        "\"max_event_loop_busy_ms\": %.1f, \"rss_bytes\": %lld}\n",
                        report.promptTokens, report.generatedTokens,
                        report.prefillSeconds > 0 ? report.promptTokens / report.prefillSeconds
                                                  : 0.0,
                        report.tokensPerSecond(), watch->longestStallMs(), watch->longestBusyMs(),
                        static_cast<long long>(sinkscope::ui::residentSetBytes()));
            std::fflush(stdout);
            if (!report.calls.isEmpty()) window.highlightTool(report.calls[0].name);
            saveWindowAndExit(window, path);
        });
    QTimer::singleShot(kScreenshotTimeoutMs, &window, [] {
        fail(QStringLiteral("timed out waiting for the reply or the policy run"));
        QCoreApplication::exit(2);
    });
}

} // namespace

void nameApplication() {
    QCoreApplication::setOrganizationName(QStringLiteral("Sinkscope"));
    QCoreApplication::setApplicationName(QStringLiteral("sinkscope"));
    QCoreApplication::setApplicationVersion(QString::fromLatin1(sinkscope::kVersion));
}

// --version and --help print and exit without a window, so they must not need a display:
// QApplication aborts when no platform plugin can start (a terminal without DISPLAY).
bool onlyPrints(int argc, char** argv) {
    static const QStringList kPrintOnly = {QStringLiteral("--version"),  QStringLiteral("-v"),
                                           QStringLiteral("--help"),     QStringLiteral("-h"),
                                           QStringLiteral("--help-all"), QStringLiteral("-?")};
    for (int i = 1; i < argc; ++i)
        if (kPrintOnly.contains(QString::fromLocal8Bit(argv[i]))) return true;
    return false;
}

int main(int argc, char** argv) {
    if (onlyPrints(argc, argv)) {
        QCoreApplication app(argc, argv);
        nameApplication();
        return parseCommandLine(app) ? 0 : 1; // process() exits after printing
    }
    QApplication app(argc, argv);
    nameApplication();
    QApplication::setApplicationDisplayName(QStringLiteral("Sinkscope"));
    QApplication::setWindowIcon(sinkscope::ui::applicationIcon());

    const std::optional<CommandLine> line = parseCommandLine(app);
    if (!line) return 1;
    if (!line->palette.isEmpty()) applyPalette(app, line->palette);

    MainWindow::Options options;
    options.modelPath = line->model;
    options.maxNewTokens = line->nPredict;
    options.persistSettings = line->screenshot.isEmpty();
    options.preset = line->preset;
    options.calls = line->calls;
    MainWindow window(options);
    if (line->tab >= 0) window.tabs()->setCurrentIndex(line->tab);
    if (!line->screenshot.isEmpty()) runScreenshot(window, *line);
    window.show();
    return app.exec();
}
