// budget: the budget-derived KV window of a model file or of a shape given on the command line.
#include "cli_common.h"
#include "commands.h"
#include "memory/budget.h"
#include "session/session_defaults.h"

#include <array>

namespace sinkscope::cli {

namespace {

constexpr int64_t kMaxDimension = 1'000'000;

struct ShapeOption {
    std::string_view name;
    int64_t BudgetShape::*field;
    int64_t min;
};

constexpr std::array<ShapeOption, 6> kShapeOptions = {{
    {"--layers", &BudgetShape::layers, 1},
    {"--kv-heads", &BudgetShape::kvHeads, 1},
    {"--head-dim", &BudgetShape::headDim, 1},
    {"--d-model", &BudgetShape::dModel, 1},
    {"--sites", &BudgetShape::sites, 0},
    {"--max-seq", &BudgetShape::maxSeq, 1},
}};

bool anyShapeOption(const ParsedArgs& args) {
    for (const ShapeOption& option : kShapeOptions)
        if (args.has(option.name)) return true;
    return false;
}

BudgetShape shapeFromArgs(const ParsedArgs& args) {
    BudgetShape shape;
    for (const ShapeOption& option : kShapeOptions)
        shape.*option.field =
            parseInteger(option.name, args.required(option.name), option.min, kMaxDimension);
    return shape;
}

// A llama-family model has no engram sites; its trained context bounds the window.
BudgetShape shapeFromModel(const ModelConfig& config) {
    return {.layers = config.nLayer,
            .kvHeads = config.nHeadKv,
            .headDim = config.headDim,
            .dModel = config.nEmbd,
            .sites = 0,
            .maxSeq = config.nCtxTrain};
}

nlohmann::ordered_json budgetReport(const BudgetShape& shape, int64_t kvWindow,
                                    PositionMode positions) {
    const int64_t window = budgetWindow(shape);
    return {
        {"per_pos", bytesPerPosition(shape)},
        {"budget_window", window},
        {"effective_window", effectiveWindow(window, kvWindow)},
        {"kv_window", kvWindow},
        {"positions", positionsText(positions)},
        {"kv_budget_bytes", kKvBudgetBytes},
        {"layers", shape.layers},
        {"kv_heads", shape.kvHeads},
        {"head_dim", shape.headDim},
        {"d_model", shape.dModel},
        {"sites", shape.sites},
        {"max_seq", shape.maxSeq},
    };
}

} // namespace

int budgetCommand(CommandArgs args) {
    std::vector<OptionSpec> specs = {{"--model"}, {"--kv-window"}};
    for (const ShapeOption& option : kShapeOptions)
        specs.push_back({option.name});
    const ParsedArgs parsed = ParsedArgs::parse("budget", specs, args);
    const int64_t kvWindow = parsed.integer("--kv-window", 0, 0, kMaxDimension);
    const bool fromModel = parsed.has("--model");
    if (fromModel && anyShapeOption(parsed))
        throw UsageError("'budget' takes --model or the shape options, not both");
    if (!fromModel && !anyShapeOption(parsed))
        throw UsageError("'budget' needs --model FILE or --layers, --kv-heads, --head-dim, "
                         "--d-model, --sites and --max-seq");
    if (!fromModel) {
        printJson(budgetReport(shapeFromArgs(parsed), kvWindow, SessionOptions{}.positions));
        return 0;
    }
    const std::unique_ptr<Model> model = loadModel(parsed.required("--model"));
    const ModelConfig& config = model->config();
    // The model's own window (its sinkscope.kv_window; none: the budget's), unless given.
    const int64_t modelWindow = parsed.has("--kv-window") ? kvWindow : config.suggestedKvWindow;
    try {
        printJson(budgetReport(shapeFromModel(config), modelWindow,
                               defaultSessionOptions(config).positions));
    } catch (const std::invalid_argument& badShape) {
        throw InputError(std::string("model '") + parsed.required("--model") +
                         "' has an unusable shape: " + badShape.what());
    }
    return 0;
}

} // namespace sinkscope::cli
