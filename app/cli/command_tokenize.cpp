// tokenize: the token ids `run` would feed for a text, with their stored pieces. Reads only the
// vocabulary (tokenizer.ggml.*), so llama.cpp's vocabulary files without tensors work too.
#include "cli_common.h"
#include "commands.h"

#include <iostream>

namespace sinkscope::cli {

int tokenizeCommand(CommandArgs args) {
    constexpr OptionSpec kOptions[] = {
        {"--model"}, {"--text"}, {"--special", false}, {"--no-bos", false}};
    const ParsedArgs parsed = ParsedArgs::parse("tokenize", kOptions, args);
    const std::string modelPath = parsed.required("--model");
    const std::string text = parsed.required("--text");
    const Tokenizer tokenizer = loadTokenizer(modelPath);
    for (const std::string& warning : tokenizer.warnings())
        std::cerr << "warning: " << warning << '\n';
    const bool addBos = tokenizer.addBos() && !parsed.has("--no-bos");
    const std::vector<int32_t> ids = tokenizer.encode(text, addBos, parsed.has("--special"));
    std::vector<std::string> pieces; // as stored in the vocabulary: "▁the", "<0x0A>", "Ġthe"
    pieces.reserve(ids.size());
    for (const int32_t id : ids)
        pieces.push_back(tokenizer.vocabulary().pieces.at(static_cast<size_t>(id)));
    printJson({{"ids", ids}, {"pieces", pieces}});
    return 0;
}

} // namespace sinkscope::cli
