// Runs a token stream through Sinkscope's Session, pinning the tokens marked as sinks, and
// writes the logits after every token: the reference that verify_engine.py compares PyTorch
// against. Not part of the CMake build; verify_engine.py compiles it against a build's engine
// library.
//
//   engine_logits MODEL.gguf TOKENS.txt OUT.f32 WINDOW
//   TOKENS.txt: one "id sink" pair per line (sink 0 or 1); OUT.f32: [tokens][n_vocab] float32.
#include "model/model.h"
#include "session/session.h"

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: engine_logits MODEL TOKENS OUT WINDOW\n");
        return 2;
    }
    std::string error;
    const auto model = sinkscope::Model::load(argv[1], error);
    if (!model) {
        std::fprintf(stderr, "%s\n", error.c_str());
        return 3;
    }
    std::ifstream in(argv[2]);
    std::vector<int32_t> ids;
    std::vector<bool> sinks;
    int32_t id = 0;
    int sink = 0;
    while (in >> id >> sink) {
        ids.push_back(id);
        sinks.push_back(sink != 0);
    }
    sinkscope::SessionOptions options;
    options.kvWindow = std::stoi(argv[4]);
    options.kvBits = 32;
    options.positions = sinkscope::PositionMode::Streaming;
    options.sinks = sinkscope::SinkMode::ToolsAndBos;
    int sinkCount = 0;
    for (const bool s : sinks)
        sinkCount += s ? 1 : 0;
    options.sinkCapacity = sinkCount > 0 ? sinkCount - 1 : 0; // beyond BOS
    sinkscope::Session session(*model, options);
    std::FILE* out = std::fopen(argv[3], "wb");
    if (!out) return 1;
    for (size_t i = 0; i < ids.size(); ++i) {
        const auto logits = session.feed(ids[i], sinks[i]);
        std::fwrite(logits.data(), sizeof(float), logits.size(), out);
    }
    std::fclose(out);
    return 0;
}
