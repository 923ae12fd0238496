// The plain-text chat layout fed to the model, kept in one place so that a real tool-calling
// format can replace it:
//
//   <s>Tools: {compact tools JSON}\n          <- BOS + sink block, pinned (ToolsAndBos)
//   User: {text}\nAssistant:{reply}\n         <- one turn; the reply ends at EOS, a newline or
//   User: ...                                    the token limit
#pragma once

#include "tokenizer.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sinkscope::ui {

class ChatFormat {
public:
    explicit ChatFormat(const Tokenizer& tokenizer) : m_tokenizer(tokenizer) {}

    // BOS when the model wants one; the stream's position 0.
    std::vector<int32_t> beginTokens() const;
    // "Tools: <json>\n", or nothing when there are no tools.
    static std::string sinkBlockText(const std::string& toolsJson);
    std::vector<int32_t> sinkBlockTokens(const std::string& toolsJson) const;
    // One user turn; starts with a newline when the previous reply did not end its line.
    static std::string turnText(const std::string& userText, bool atLineStart);
    std::vector<int32_t> turnTokens(const std::string& userText, bool atLineStart) const;
    // Whether a transcript ([tokens]) ends at the start of a line (or is empty).
    bool endsAtLineStart(const std::vector<int32_t>& transcript) const;
    // A generated piece that ends the reply when replies stop at the end of their line.
    static bool endsLine(const std::string& piece);

private:
    const Tokenizer& m_tokenizer;
};

} // namespace sinkscope::ui
