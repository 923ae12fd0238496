// make-model: write a deterministic synthetic model (random weights) for tests and benchmarks.
#include "cli_common.h"
#include "commands.h"
#include "model/synthetic.h"

#include <filesystem>

namespace sinkscope::cli {

namespace {

constexpr Choice<GgmlType> kTypeChoices[] = {
    {"f32", GgmlType::F32},   {"f16", GgmlType::F16},     {"q8_0", GgmlType::Q8_0},
    {"q4_0", GgmlType::Q4_0}, {"q4_k_m", GgmlType::Q4_K}, // with SyntheticSpec::q4KMediumMix
};

// --rope picks the llama-shaped architecture with that rotation; --arch names any of them.
constexpr Choice<std::string_view> kRopeChoices[] = {
    {"adjacent", "llama"},
    {"neox", "exaone"},
};

constexpr Choice<std::string_view> kArchitectureChoices[] = {
    {"llama", "llama"},
    {"exaone", "exaone"},
    {"qwen2", "qwen2"},
    {"qwen3", "qwen3"},
};

SyntheticSpec specFromArgs(const ParsedArgs& args) {
    SyntheticSpec spec;
    spec.nVocab = static_cast<int>(args.integer("--vocab", spec.nVocab, 259, 1 << 20));
    spec.nEmbd = static_cast<int>(args.integer("--embd", spec.nEmbd, 2, 1 << 16));
    spec.nLayer = static_cast<int>(args.integer("--layers", spec.nLayer, 1, 1024));
    spec.nHead = static_cast<int>(args.integer("--heads", spec.nHead, 1, 1024));
    spec.nHeadKv = static_cast<int>(args.integer("--kv-heads", spec.nHeadKv, 1, 1024));
    spec.nFf = static_cast<int>(args.integer("--ff", spec.nFf, 1, 1 << 18));
    spec.nCtxTrain = static_cast<int>(args.integer("--ctx", spec.nCtxTrain, 1, 1 << 24));
    spec.seed = static_cast<uint64_t>(
        args.integer("--seed", static_cast<int64_t>(spec.seed), 0, INT64_MAX));
    if (const std::optional<std::string> type = args.value("--type")) {
        spec.weightType = parseChoice("--type", *type, kTypeChoices);
        spec.q4KMediumMix = *type == "q4_k_m";
    }
    if (args.has("--rope") && args.has("--arch"))
        throw UsageError("give --arch or --rope, not both");
    if (const std::optional<std::string> rope = args.value("--rope"))
        spec.architecture = parseChoice("--rope", *rope, kRopeChoices);
    if (const std::optional<std::string> arch = args.value("--arch"))
        spec.architecture = parseChoice("--arch", *arch, kArchitectureChoices);
    spec.tiedOutput = args.has("--tied");
    return spec;
}

// The shape rules a llama model must meet, checked here so that they read as usage errors.
void validateSpec(const SyntheticSpec& spec) {
    if (spec.nEmbd % spec.nHead != 0 || (spec.nEmbd / spec.nHead) % 2 != 0)
        throw UsageError("--embd " + std::to_string(spec.nEmbd) + " must be --heads " +
                         std::to_string(spec.nHead) + " times an even head size");
    if (spec.nHead % spec.nHeadKv != 0)
        throw UsageError("--heads " + std::to_string(spec.nHead) + " must be a multiple of " +
                         "--kv-heads " + std::to_string(spec.nHeadKv));
    const bool blockQuantized =
        spec.weightType == GgmlType::Q8_0 || spec.weightType == GgmlType::Q4_0 || spec.q4KMediumMix;
    if (blockQuantized && (spec.nEmbd % 32 != 0 || spec.nFf % 32 != 0))
        throw UsageError("--type " + choiceText(spec.weightType, kTypeChoices) +
                         " needs --embd and --ff to be multiples of 32");
}

} // namespace

int makeModelCommand(CommandArgs args) {
    constexpr OptionSpec kOptions[] = {
        {"--out"}, {"--vocab"}, {"--embd"}, {"--layers"}, {"--heads"}, {"--kv-heads"},    {"--ff"},
        {"--ctx"}, {"--seed"},  {"--type"}, {"--rope"},   {"--arch"},  {"--tied", false},
    };
    const ParsedArgs parsed = ParsedArgs::parse("make-model", kOptions, args);
    const std::string path = parsed.required("--out");
    const SyntheticSpec spec = specFromArgs(parsed);
    validateSpec(spec);

    std::string error;
    if (!writeSyntheticModel(spec, path, error))
        throw InputError("cannot write model '" + path + "': " + error);
    const std::unique_ptr<Model> model = loadModel(path); // proves the file loads
    printJson({
        {"path", path},
        {"bytes", std::filesystem::file_size(path)},
        {"parameters", model->parameterCount()},
        {"type", choiceText(spec.weightType, kTypeChoices)},
        {"architecture", spec.architecture},
        {"rope", model->config().rope == RopeStyle::HalfSplit ? "neox" : "adjacent"},
        {"tied", spec.tiedOutput},
        {"seed", spec.seed},
    });
    return 0;
}

} // namespace sinkscope::cli
