// CallMatcher's scalar values: strings, integers and numbers, and when a value may end.
#include "tools/call_matcher.h"

#include "text/utf8.h"
#include "tools/call_matcher_states.h"

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

CallMatcher::Step CallMatcher::stepString(Frame& frame, uint8_t byte) const {
    const GrammarRule& rule = m_grammar->rules()[static_cast<size_t>(frame.rule)];
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
