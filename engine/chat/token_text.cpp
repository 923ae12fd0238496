#include "chat/token_text.h"

#include <algorithm>
#include <optional>

namespace sinkscope {

namespace {

struct Fragment {
    size_t offset = 0;
    size_t length = 0;
    std::optional<int32_t> special;
};

bool isSpecial(TokenType type) {
    return type == TokenType::Control || type == TokenType::UserDefined ||
           type == TokenType::Unknown;
}

// The special tokens in the order llama.cpp cuts them out: longest text first.
std::vector<int32_t> specialTokensByLength(const Tokenizer& tokenizer) {
    const Vocabulary& vocab = tokenizer.vocabulary();
    std::vector<int32_t> ids;
    for (int32_t id = 0; id < tokenizer.size(); ++id)
        if (isSpecial(tokenizer.type(id)) && !vocab.pieces[static_cast<size_t>(id)].empty())
            ids.push_back(id);
    std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) {
        return vocab.pieces[static_cast<size_t>(a)].size() >
               vocab.pieces[static_cast<size_t>(b)].size();
    });
    return ids;
}

bool overlapsAny(size_t begin, size_t end, std::span<const TextSpan> spans) {
    return std::ranges::any_of(
        spans, [&](const TextSpan& span) { return begin < span.end && span.begin < end; });
}

// Splits the text fragments at each occurrence of `special` that no protected span overlaps.
std::vector<Fragment> cutOut(std::string_view text, const std::vector<Fragment>& fragments,
                             std::string_view special, int32_t id,
                             std::span<const TextSpan> protectedSpans) {
    std::vector<Fragment> result;
    for (const Fragment& fragment : fragments) {
        if (fragment.special) {
            result.push_back(fragment);
            continue;
        }
        const size_t end = fragment.offset + fragment.length;
        size_t start = fragment.offset;
        for (size_t found = text.find(special, start);
             found != std::string_view::npos && found + special.size() <= end;
             found = text.find(special, found + 1)) {
            if (found < start || overlapsAny(found, found + special.size(), protectedSpans))
                continue;
            if (found > start) result.push_back({start, found - start, {}});
            result.push_back({found, special.size(), id});
            start = found + special.size();
        }
        if (start < end) result.push_back({start, end - start, {}});
    }
    return result;
}

std::string_view trimmed(std::string_view text) {
    constexpr std::string_view kSpace = " \t\n\r\f\v";
    const size_t first = text.find_first_not_of(kSpace);
    if (first == std::string_view::npos) return {};
    return text.substr(first, text.find_last_not_of(kSpace) - first + 1);
}

} // namespace

size_t TokenizedText::tokenAtOrAfter(size_t offset) const {
    return static_cast<size_t>(std::lower_bound(starts.begin(), starts.end(), offset) -
                               starts.begin());
}

std::vector<size_t> tokenByteStarts(const Tokenizer& tokenizer, std::string_view text,
                                    std::span<const int32_t> ids) {
    std::vector<size_t> starts;
    starts.reserve(ids.size());
    size_t cursor = 0;
    for (const int32_t id : ids) {
        starts.push_back(cursor);
        const std::string piece = tokenizer.piece(id, true);
        const std::string_view rest = text.substr(cursor);
        if (rest.starts_with(piece))
            cursor += piece.size();
        else if (piece.starts_with(' ') && rest.starts_with(std::string_view(piece).substr(1)))
            cursor += piece.size() - 1; // the space prefix is not in the text
        else
            cursor = std::min(text.size(), cursor + std::max<size_t>(piece.size(), 1));
    }
    return starts;
}

TokenizedText tokenizeRendered(const Tokenizer& tokenizer, std::string_view text,
                               std::span<const TextSpan> protectedSpans, bool addBos) {
    std::vector<Fragment> fragments;
    if (!text.empty()) fragments.push_back({0, text.size(), {}});
    const Vocabulary& vocab = tokenizer.vocabulary();
    for (const int32_t id : specialTokensByLength(tokenizer))
        fragments =
            cutOut(text, fragments, vocab.pieces[static_cast<size_t>(id)], id, protectedSpans);
    TokenizedText result;
    const bool bosInText = !fragments.empty() && fragments.front().special == tokenizer.bos();
    if (addBos && !bosInText) {
        result.tokens.push_back(tokenizer.bos());
        result.starts.push_back(0);
    }
    for (const Fragment& fragment : fragments) {
        if (fragment.special) {
            result.tokens.push_back(*fragment.special);
            result.starts.push_back(fragment.offset);
            continue;
        }
        const std::string_view piece = text.substr(fragment.offset, fragment.length);
        const std::vector<int32_t> ids = tokenizer.encode(piece, false, false);
        for (const size_t start : tokenByteStarts(tokenizer, piece, ids))
            result.starts.push_back(fragment.offset + start);
        result.tokens.insert(result.tokens.end(), ids.begin(), ids.end());
    }
    return result;
}

std::vector<TextSpan> findInOrder(std::string_view text, std::span<const std::string> pieces) {
    std::vector<TextSpan> spans;
    size_t from = 0;
    for (const std::string& piece : pieces) {
        std::string_view wanted = piece;
        size_t found = wanted.empty() ? std::string_view::npos : text.find(wanted, from);
        if (found == std::string_view::npos && !trimmed(wanted).empty()) {
            wanted = trimmed(wanted);
            found = text.find(wanted, from);
        }
        if (found == std::string_view::npos) continue;
        spans.push_back({found, found + wanted.size()});
        from = found + wanted.size();
    }
    return spans;
}

} // namespace sinkscope
