// Perplexity by llama.cpp's llama-perplexity method, so figures compare with its tools.
#pragma once

#include "session/session.h"

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace sinkscope {

// -log softmax(logits)[next], computed in double.
double negativeLogLikelihood(std::span<const float> logits, int32_t next);

struct PerplexityResult {
    double perplexity = 0;
    int chunks = 0;
    int64_t scoredTokens = 0;
};

// A text file's contents as llama-perplexity -f reads them: without one final newline.
std::string_view perplexityText(std::string_view fileText);

// tokens: the whole text, BOS first where the vocabulary adds BOS. n_chunks = floor(n / ctx);
// chunk i = tokens [i*ctx, (i+1)*ctx) in a fresh session, its first token replaced by BOS where
// the vocabulary adds BOS (otherwise kept); the logits at chunk
// positions ctx/2 .. ctx-2 score the next token; PPL = exp(mean NLL). Throws std::invalid_argument
// when the text is shorter than one chunk or ctx < 4.
PerplexityResult chunkedPerplexity(const Model& model, std::span<const int32_t> tokens, int ctx,
                                   const SessionOptions& options);

} // namespace sinkscope
