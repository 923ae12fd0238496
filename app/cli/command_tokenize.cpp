// tokenize: the token ids `run` would feed for a text, with their stored pieces.
#include "cli_common.h"
#include "commands.h"

namespace sinkscope::cli {

int tokenizeCommand(CommandArgs args) {
    constexpr OptionSpec kOptions[] = {{"--model"}, {"--text"}, {"--special", false}};
    const ParsedArgs parsed = ParsedArgs::parse("tokenize", kOptions, args);
    const std::string modelPath = parsed.required("--model");
    const std::string text = parsed.required("--text");
    const std::unique_ptr<Model> model = loadModel(modelPath);
    const Tokenizer& tokenizer = model->tokenizer();
    const std::vector<int32_t> ids = tokenizeWithBos(tokenizer, text, parsed.has("--special"));
    std::vector<std::string> pieces; // as stored in the vocabulary: "▁the", "<0x0A>", "<s>"
    pieces.reserve(ids.size());
    for (const int32_t id : ids)
        pieces.push_back(tokenizer.vocabulary().pieces.at(static_cast<size_t>(id)));
    printJson({{"ids", ids}, {"pieces", pieces}});
    return 0;
}

} // namespace sinkscope::cli
