// The tool block: the tokens a chat pins as sinks, and where each tool's definition lies in them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sinkscope {

// Text as the model reads it (markers written out, BOS not shown) and its token ids.
struct Rendered {
    std::string text;
    std::vector<int32_t> tokens;
};

// One tool's tokens in the tool block: [begin, end) token indexes, which are also its positions
// (the block starts the session) and, with ToolsAndBos sinks, its sink slots.
struct ToolTokenRange {
    std::string name;
    int begin = 0;
    int end = 0;
    int count() const { return end - begin; }
};

struct ToolBlock {
    std::string text;
    std::vector<int32_t> tokens;       // BOS through the tools (the layout's framing included)
    std::vector<ToolTokenRange> tools; // in declaration order; a token belongs to the tool its
                                       // first byte is in (the separator after a tool is the
                                       // tool's); empty when the block does not hold the tools
    bool startsWithBos = false;
    // False where the model's template writes the tools inside the user turn: the block is then
    // only what comes before them, and the tools travel with the transcript.
    bool pinsTools = true;
    std::string notice; // why the tools are not pinned, or how they are pinned unusually
    // Tokens to reserve beyond BOS: SessionOptions::sinkCapacity for a session that pins the block.
    int sinkCapacity() const;
};

} // namespace sinkscope
