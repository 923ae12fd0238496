// CallMatcher's scalar values: strings, integers and numbers, and when a value may end.
#include "tools/call_matcher.h"

#include "text/utf8.h"
#include "tools/call_matcher_states.h"

#include <nlohmann/json.hpp>

namespace sinkscope {

using namespace call_matcher_states;

namespace {

constexpr int64_t kPow10[] = {1,
                              10,
                              100,
                              1'000,
                              10'000,
                              100'000,
                              1'000'000,
                              10'000'000,
                              100'000'000,
                              1'000'000'000,
                              10'000'000'000,
                              100'000'000'000,
                              1'000'000'000'000,
                              10'000'000'000'000,
                              100'000'000'000'000,
                              1'000'000'000'000'000,
                              10'000'000'000'000'000,
                              100'000'000'000'000'000,
                              1'000'000'000'000'000'000};

bool isDigit(uint8_t byte) {
    return byte >= '0' && byte <= '9';
}

bool isHexDigit(uint8_t byte) {
    return isDigit(byte) || (byte >= 'a' && byte <= 'f') || (byte >= 'A' && byte <= 'F');
}

} // namespace

bool CallMatcher::canEnd(const Frame& frame) const {
    if (frame.kind == FrameKind::Choice) {
        const LiteralChoice& choice = m_grammar->choices()[static_cast<size_t>(frame.rule)];
        return frame.low < frame.high &&
               static_cast<int64_t>(choice.texts[static_cast<size_t>(frame.low)].size()) ==
                   frame.count;
    }
    if (frame.kind != FrameKind::Integer && frame.kind != FrameKind::Number) return false;
    if (frame.state != kNumberInt && frame.state != kNumberFraction) return false;
    const bool isNumber = frame.kind == FrameKind::Number;
    int64_t magnitude = frame.value * (isNumber ? kMillionthsPerUnit : 1);
    if (frame.state == kNumberFraction)
        magnitude += frame.fraction * kPow10[kMaxNumberFractionDigits - frame.fractionDigits];
    if (frame.flag && magnitude == 0) return false; // "-0" is 0 written oddly: not written
    return m_grammar->rules()[static_cast<size_t>(frame.rule)].range.contains(
        frame.flag ? -magnitude : magnitude);
}

SpanSource::SpanSource(std::string_view message) {
    const std::string quoted = nlohmann::json(std::string(message))
                                   .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    text = quoted.substr(1, quoted.size() - 2);
    starts.assign(text.size(), 0);
    for (size_t i = 0; i < text.size();) {
        starts[i] = 1;
        const auto byte = static_cast<uint8_t>(text[i]);
        if (byte == '\\')
            i += i + 1 < text.size() && text[i + 1] == 'u' ? 6 : 2; // \uXXXX or \n, \", ...
        else if (const std::optional<Utf8Lead> lead = utf8Lead(byte))
            i += 1 + static_cast<size_t>(lead->continuationBytes);
        else
            ++i;
    }
}

bool CallMatcher::spanRestricted(const Frame& frame) const {
    return !m_spanSource.text.empty() && frame.kind == FrameKind::String &&
           m_grammar->rules()[static_cast<size_t>(frame.rule)].minChars == 0;
}

// The body so far is the source's text [value, value + fraction), its first occurrence that
// starts at a character; the body with `byte` appended must occur so too, and its first such
// occurrence starts at or after that one.
bool CallMatcher::extendSpan(Frame& frame, uint8_t byte) const {
    const std::string_view text = m_spanSource.text;
    const auto length = static_cast<size_t>(frame.fraction);
    const std::string_view body = text.substr(static_cast<size_t>(frame.value), length);
    for (size_t start = static_cast<size_t>(frame.value); start + length < text.size(); ++start) {
        if (m_spanSource.starts[start] == 0 || static_cast<uint8_t>(text[start + length]) != byte ||
            text.compare(start, length, body) != 0)
            continue;
        frame.value = static_cast<int64_t>(start);
        ++frame.fraction;
        return true;
    }
    return false;
}

CallMatcher::Step CallMatcher::stepString(Frame& frame, uint8_t byte) const {
    const GrammarRule& rule = m_grammar->rules()[static_cast<size_t>(frame.rule)];
    const bool closing = frame.state == kStringBody && byte == '"';
    if (frame.state != kStringOpen && !closing && spanRestricted(frame) && !extendSpan(frame, byte))
        return Step::Rejected;
    const auto startCharacter = [&](uint8_t state) {
        if (frame.count >= rule.maxChars) return Step::Rejected;
        ++frame.count;
        frame.state = state;
        return Step::Accepted;
    };
    switch (frame.state) {
    case kStringOpen:
        if (byte != '"') return Step::Rejected;
        frame.state = kStringBody;
        frame.value = 0;
        frame.fraction = 0;
        return Step::Accepted;
    case kStringBody:
        if (byte == '"') {
            if (frame.count < rule.minChars) return Step::Rejected;
            frame.state = kFinished;
            return Step::Accepted;
        }
        if (byte == '\\') return startCharacter(kStringEscape);
        if (byte < 0x20) return Step::Rejected;
        if (const std::optional<Utf8Lead> lead = utf8Lead(byte)) {
            if (lead->continuationBytes == 0) return startCharacter(kStringBody);
            frame.pending = lead->continuationBytes;
            frame.low = lead->firstLow;
            frame.high = lead->firstHigh;
            return startCharacter(kStringUtf8);
        }
        return Step::Rejected;
    case kStringUtf8:
        if (byte < frame.low || byte > frame.high) return Step::Rejected;
        frame.low = 0x80;
        frame.high = 0xBF;
        if (--frame.pending == 0) frame.state = kStringBody;
        return Step::Accepted;
    case kStringEscape:
        if (byte == 'u') {
            frame.state = kStringUnicode;
            frame.digits = 0;
            frame.flag = false;
            return Step::Accepted;
        }
        if (std::string_view("\"\\/bfnrt").find(static_cast<char>(byte)) == std::string_view::npos)
            return Step::Rejected;
        frame.state = kStringBody;
        return Step::Accepted;
    case kStringUnicode:
        // \uD800-\uDFFF would need a pair: not written.
        if (!isHexDigit(byte) || (frame.digits == 1 && frame.flag && !(byte >= '0' && byte <= '7')))
            return Step::Rejected;
        if (frame.digits == 0) frame.flag = byte == 'd' || byte == 'D';
        if (++frame.digits == 4) frame.state = kStringBody;
        return Step::Accepted;
    default:
        return Step::Rejected;
    }
}

CallMatcher::Step CallMatcher::stepNumber(Frame& frame, uint8_t byte) const {
    const bool isNumber = frame.kind == FrameKind::Number;
    const int maxDigits = isNumber ? kMaxNumberIntegerDigits : kMaxIntegerDigits;
    const int digit = byte - '0';
    Frame next = frame;
    switch (frame.state) {
    case kNumberStart:
    case kNumberSign:
        if (byte == '-' && frame.state == kNumberStart) {
            next.flag = true;
            next.state = kNumberSign;
        } else if (isDigit(byte)) {
            next.state = kNumberInt;
            next.digits = 1;
            next.value = digit;
        } else {
            return Step::Rejected;
        }
        break;
    case kNumberInt:
        if (byte == '.' && isNumber) {
            next.state = kNumberDot;
        } else if (isDigit(byte) && frame.value != 0 && frame.digits < maxDigits) {
            next.value = frame.value * 10 + digit;
            ++next.digits;
        } else {
            return Step::Rejected; // a leading zero takes no digit after it
        }
        break;
    case kNumberDot:
    case kNumberFraction:
        if (!isDigit(byte) || frame.fractionDigits == kMaxNumberFractionDigits)
            return Step::Rejected;
        next.state = kNumberFraction;
        next.fraction = frame.fraction * 10 + digit;
        ++next.fractionDigits;
        break;
    default:
        return Step::Rejected;
    }
    if (!numberFeasible(next)) return Step::Rejected;
    frame = next;
    return Step::Accepted;
}

// Whether some continuation of the digits so far ends inside the rule's range: the values a
// prefix can still reach are, in magnitude, a union of intervals (one per count of further
// integer digits), each checked against the range.
bool CallMatcher::numberFeasible(const Frame& frame) const {
    const GridRange& range = m_grammar->rules()[static_cast<size_t>(frame.rule)].range;
    const bool isNumber = frame.kind == FrameKind::Number;
    const int64_t scale = isNumber ? kMillionthsPerUnit : 1;
    const int maxDigits = isNumber ? kMaxNumberIntegerDigits : kMaxIntegerDigits;
    const auto reaches = [&](int64_t lowMagnitude, int64_t highMagnitude) {
        if (frame.flag) lowMagnitude = std::max<int64_t>(lowMagnitude, 1); // no "-0"
        if (lowMagnitude > highMagnitude) return false;
        const int64_t low = frame.flag ? -highMagnitude : lowMagnitude;
        const int64_t high = frame.flag ? -lowMagnitude : highMagnitude;
        return low <= range.hi && range.lo <= high;
    };
    switch (frame.state) {
    case kNumberStart:
        return !range.empty();
    case kNumberSign:
        return reaches(0, kPow10[maxDigits] * scale - 1);
    case kNumberInt:
        if (frame.value == 0) return reaches(0, scale - 1); // "0", or "0." and decimals
        for (int more = 0; frame.digits + more <= maxDigits; ++more) {
            const int64_t unit = kPow10[more] * scale;
            if (reaches(frame.value * unit, (frame.value + 1) * unit - 1)) return true;
        }
        return false;
    case kNumberDot:
        return reaches(frame.value * scale, (frame.value + 1) * scale - 1);
    case kNumberFraction: {
        const int64_t unit = kPow10[kMaxNumberFractionDigits - frame.fractionDigits];
        const int64_t base = frame.value * scale + frame.fraction * unit;
        return reaches(base, base + unit - 1);
    }
    default:
        return false;
    }
}

} // namespace sinkscope
