#include "eval/perplexity.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace sinkscope {

double negativeLogLikelihood(std::span<const float> logits, int32_t next) {
    const float maxLogit = *std::max_element(logits.begin(), logits.end());
    double sum = 0;
    for (const float logit : logits)
        sum += std::exp(static_cast<double>(logit) - maxLogit);
    return std::log(sum) - (static_cast<double>(logits[next]) - maxLogit);
}

std::string_view perplexityText(std::string_view fileText) {
    if (!fileText.empty() && fileText.back() == '\n') fileText.remove_suffix(1);
    return fileText;
}

PerplexityResult chunkedPerplexity(const Model& model, std::span<const int32_t> tokens, int ctx,
                                   const SessionOptions& options) {
    if (ctx < 4) throw std::invalid_argument("perplexity context must be at least 4 tokens");
    const int chunks = static_cast<int>(tokens.size() / static_cast<size_t>(ctx));
    if (chunks == 0)
        throw std::invalid_argument("the text has " + std::to_string(tokens.size()) +
                                    " tokens, fewer than one chunk of " + std::to_string(ctx));
    Session session(model, options);
    PerplexityResult result;
    result.chunks = chunks;
    double totalNll = 0;
    // As llama-perplexity: each chunk starts with BOS only where the vocabulary adds one.
    const bool startWithBos = model.tokenizer().addBos();
    std::vector<int32_t> fed(static_cast<size_t>(ctx - 1));
    for (int c = 0; c < chunks; ++c) {
        session.reset();
        const std::span<const int32_t> chunk = tokens.subspan(static_cast<size_t>(c) * ctx, ctx);
        std::copy_n(chunk.begin(), ctx - 1, fed.begin());
        if (startWithBos) fed[0] = model.tokenizer().bos();
        session.score(fed, [&](size_t j, std::span<const float> logits) {
            if (j >= static_cast<size_t>(ctx / 2)) {
                totalNll += negativeLogLikelihood(logits, chunk[j + 1]);
                ++result.scoredTokens;
            }
            return true;
        });
    }
    result.perplexity = std::exp(totalNll / static_cast<double>(result.scoredTokens));
    return result;
}

} // namespace sinkscope
