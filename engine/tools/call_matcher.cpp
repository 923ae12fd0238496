#include "tools/call_matcher.h"

#include "text/utf8.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace sinkscope {

namespace {

using Json = nlohmann::ordered_json;

constexpr uint8_t kFinished = 255; // any frame: its value is complete and closed

enum RootState : uint8_t { kRootStart, kRootAfterSpace, kRootInArray, kRootTerminator };
enum ArrayState : uint8_t {
    kArrayOpen,
    kArrayAfterOpen,
    kArrayItemPending,
    kArrayAfterItem,
    kArrayAfterComma
};
enum ObjectState : uint8_t {
    kObjectOpen,
    kObjectExpectKey,
    kObjectKeyPending,
    kObjectValuePending
};
enum CallState : uint8_t { kCallFresh, kCallHeaderPending, kCallArgumentsPending, kCallClose };
enum StringState : uint8_t { kStringOpen, kStringBody, kStringEscape, kStringUnicode, kStringUtf8 };
enum NumberState : uint8_t { kNumberStart, kNumberSign, kNumberInt, kNumberDot, kNumberFraction };

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

constexpr int kCompletionLimit = 1 << 20; // bytes; a completion is far shorter

bool isDigit(uint8_t byte) {
    return byte >= '0' && byte <= '9';
}

bool isHexDigit(uint8_t byte) {
    return isDigit(byte) || (byte >= 'a' && byte <= 'f') || (byte >= 'A' && byte <= 'F');
}

} // namespace

CallMatcher::CallMatcher(const CallGrammar& grammar) : m_grammar(&grammar) {
    push(Frame{});
}

CallMatcher& CallMatcher::operator=(const CallMatcher& other) {
    m_grammar = other.m_grammar;
    m_depth = other.m_depth;
    m_callsDone = other.m_callsDone;
    std::copy_n(other.m_frames.begin(), m_depth, m_frames.begin());
    return *this;
}

CallMatcher::Frame CallMatcher::freshFrame(int rule) const {
    const GrammarRule& r = m_grammar->rules()[static_cast<size_t>(rule)];
    Frame frame;
    frame.rule = rule;
    switch (r.kind) {
    case RuleKind::String:
        frame.kind = FrameKind::String;
        break;
    case RuleKind::Integer:
        frame.kind = FrameKind::Integer;
        break;
    case RuleKind::Number:
        frame.kind = FrameKind::Number;
        break;
    case RuleKind::Choice:
        return choiceFrame(r.choice);
    case RuleKind::Array:
        frame.kind = FrameKind::Array;
        break;
    case RuleKind::Object:
        frame.kind = FrameKind::Object;
        break;
    case RuleKind::Call:
        frame.kind = FrameKind::Call;
        break;
    }
    return frame;
}

void CallMatcher::push(const Frame& frame) {
    if (m_depth == kMaxFrames) throw std::logic_error("call grammar nested deeper than its frames");
    m_frames[static_cast<size_t>(m_depth++)] = frame;
}

CallMatcher::Frame CallMatcher::choiceFrame(int choice) const {
    Frame frame;
    frame.kind = FrameKind::Choice;
    frame.rule = choice;
    frame.high =
        static_cast<int32_t>(m_grammar->choices()[static_cast<size_t>(choice)].texts.size());
    return frame;
}

void CallMatcher::popAndNotify() {
    const Frame child = top();
    --m_depth;
    Frame& parent = top();
    const auto chosenTag = [&] {
        return m_grammar->choices()[static_cast<size_t>(child.rule)]
            .tags[static_cast<size_t>(child.low)];
    };
    switch (parent.kind) {
    case FrameKind::Root:
        parent.state =
            m_grammar->options().terminator.empty() ? kFinished : uint8_t{kRootTerminator};
        break;
    case FrameKind::Array:
        if (child.kind == FrameKind::Call) ++m_callsDone;
        ++parent.count;
        parent.state = kArrayAfterItem;
        break;
    case FrameKind::Object: {
        if (parent.state == kObjectValuePending) {
            ++parent.value;
            parent.state = kObjectExpectKey;
            break;
        }
        const int property = chosenTag();
        parent.count = property + 1;
        parent.state = kObjectValuePending;
        push(freshFrame(m_grammar->rules()[static_cast<size_t>(parent.rule)]
                            .propertyRules[static_cast<size_t>(property)]));
        break;
    }
    case FrameKind::Call:
        if (parent.state == kCallArgumentsPending) {
            parent.state = kCallClose;
            break;
        }
        parent.state = kCallArgumentsPending;
        push(freshFrame(m_grammar->rules()[static_cast<size_t>(parent.rule)]
                            .toolArguments[static_cast<size_t>(chosenTag())]));
        break;
    default:
        throw std::logic_error("a scalar frame cannot hold a child");
    }
}

void CallMatcher::popFinished() {
    while (m_depth > 1 && isFinished(top()))
        popAndNotify();
}

bool CallMatcher::isFinished(const Frame& frame) const {
    if (frame.state == kFinished) return true;
    return frame.kind == FrameKind::Choice && frame.high - frame.low == 1 && canEnd(frame);
}

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

bool CallMatcher::accept(uint8_t byte) {
    for (;;) {
        Frame& frame = top();
        const Step result = step(frame, byte);
        if (result == Step::Accepted) {
            popFinished();
            return true;
        }
        if (result == Step::Descended) continue; // the new child reads the byte
        if (frame.kind == FrameKind::Root || !canEnd(frame)) return false;
        popAndNotify(); // the value ends here; its parent reads the byte
    }
}

bool CallMatcher::acceptBytes(std::string_view bytes) {
    CallMatcher trial = *this;
    for (const char byte : bytes)
        if (!trial.accept(static_cast<uint8_t>(byte))) return false;
    *this = trial;
    return true;
}

bool CallMatcher::isComplete() const {
    return m_depth == 1 && m_frames[0].state == kFinished;
}

int64_t CallMatcher::plainStringRoom() const {
    const Frame& frame = top();
    if (frame.kind != FrameKind::String || frame.state != kStringBody) return -1;
    return m_grammar->rules()[static_cast<size_t>(frame.rule)].maxChars - frame.count;
}

CallMatcher::Step CallMatcher::step(Frame& frame, uint8_t byte) {
    switch (frame.kind) {
    case FrameKind::Root:
        return stepRoot(frame, byte);
    case FrameKind::Array:
        return stepArray(frame, byte);
    case FrameKind::Object:
        return stepObject(frame, byte);
    case FrameKind::Call:
        return stepCall(frame, byte);
    case FrameKind::String:
        return stepString(frame, byte);
    case FrameKind::Integer:
    case FrameKind::Number:
        return stepNumber(frame, byte);
    case FrameKind::Choice:
        return stepChoice(frame, byte);
    }
    return Step::Rejected;
}

CallMatcher::Step CallMatcher::stepRoot(Frame& frame, uint8_t byte) {
    const CallGrammarOptions& options = m_grammar->options();
    switch (frame.state) {
    case kRootStart:
    case kRootAfterSpace:
        if (byte == ' ' && frame.state == kRootStart && options.leadingSpace) {
            frame.state = kRootAfterSpace;
            return Step::Accepted;
        }
        if (byte != '[') return Step::Rejected;
        frame.state = kRootInArray;
        push(freshFrame(m_grammar->callsRule()));
        return Step::Descended;
    case kRootTerminator:
        if (byte != static_cast<uint8_t>(options.terminator[static_cast<size_t>(frame.count)]))
            return Step::Rejected;
        if (++frame.count == static_cast<int64_t>(options.terminator.size()))
            frame.state = kFinished;
        return Step::Accepted;
    default:
        return Step::Rejected;
    }
}

CallMatcher::Step CallMatcher::stepArray(Frame& frame, uint8_t byte) {
    const GrammarRule& rule = m_grammar->rules()[static_cast<size_t>(frame.rule)];
    switch (frame.state) {
    case kArrayOpen:
        if (byte != '[') return Step::Rejected;
        frame.state = kArrayAfterOpen;
        return Step::Accepted;
    case kArrayAfterOpen:
        if (byte == ']' && rule.minItems == 0) {
            frame.state = kFinished;
            return Step::Accepted;
        }
        if (rule.maxItems == 0) return Step::Rejected;
        break;
    case kArrayAfterItem:
        if (byte == ',' && frame.count < rule.maxItems) {
            frame.state = kArrayAfterComma;
            return Step::Accepted;
        }
        if (byte == ']' && frame.count >= rule.minItems) {
            frame.state = kFinished;
            return Step::Accepted;
        }
        return Step::Rejected;
    case kArrayAfterComma:
        break;
    default:
        return Step::Rejected;
    }
    frame.state = kArrayItemPending;
    push(freshFrame(rule.item));
    return Step::Descended;
}

CallMatcher::Step CallMatcher::stepObject(Frame& frame, uint8_t byte) {
    const GrammarRule& rule = m_grammar->rules()[static_cast<size_t>(frame.rule)];
    const auto count = static_cast<int64_t>(rule.propertyRules.size());
    if (frame.state == kObjectOpen) {
        if (byte != '{') return Step::Rejected;
        frame.state = kObjectExpectKey;
        return Step::Accepted;
    }
    if (frame.state != kObjectExpectKey) return Step::Rejected;
    if (byte == '}' && rule.firstRequiredAt[static_cast<size_t>(frame.count)] == count) {
        frame.state = kFinished;
        return Step::Accepted;
    }
    const int keys =
        rule.keyChoices[static_cast<size_t>(2 * frame.count + (frame.value > 0 ? 1 : 0))];
    if (keys < 0) return Step::Rejected;
    frame.state = kObjectKeyPending;
    push(choiceFrame(keys));
    return Step::Descended;
}

CallMatcher::Step CallMatcher::stepCall(Frame& frame, uint8_t byte) {
    const GrammarRule& rule = m_grammar->rules()[static_cast<size_t>(frame.rule)];
    if (frame.state == kCallFresh) {
        frame.state = kCallHeaderPending;
        push(choiceFrame(rule.choice));
        return Step::Descended;
    }
    if (frame.state != kCallClose || byte != '}') return Step::Rejected;
    frame.state = kFinished;
    return Step::Accepted;
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

CallMatcher::Step CallMatcher::stepChoice(Frame& frame, uint8_t byte) const {
    const std::vector<std::string>& texts =
        m_grammar->choices()[static_cast<size_t>(frame.rule)].texts;
    const auto at = static_cast<size_t>(frame.count);
    // The alive texts are sorted and share the first `at` bytes: those that continue with
    // `byte` are contiguous.
    const auto byteAt = [&](int32_t i) {
        const std::string& text = texts[static_cast<size_t>(i)];
        return text.size() > at ? static_cast<int>(static_cast<uint8_t>(text[at])) : -1;
    };
    int32_t low = frame.low;
    while (low < frame.high && byteAt(low) < byte)
        ++low;
    int32_t high = low;
    while (high < frame.high && byteAt(high) == byte)
        ++high;
    if (low == high) return Step::Rejected;
    frame.low = low;
    frame.high = high;
    ++frame.count;
    return Step::Accepted;
}

CallMatcher::Preference CallMatcher::preferred(const Frame& frame) const {
    const auto byte = [](char c) { return Preference{false, static_cast<uint8_t>(c)}; };
    const auto firstByteOf = [&](const Frame& fresh) { return preferred(fresh); };
    switch (frame.kind) {
    case FrameKind::Root:
        if (frame.state == kRootTerminator)
            return byte(m_grammar->options().terminator[static_cast<size_t>(frame.count)]);
        return byte('[');
    case FrameKind::Array: {
        const GrammarRule& rule = m_grammar->rules()[static_cast<size_t>(frame.rule)];
        const bool needMore = frame.count < rule.minItems;
        if (frame.state == kArrayOpen) return byte('[');
        if (frame.state == kArrayAfterItem) return byte(needMore ? ',' : ']');
        if (frame.state == kArrayAfterComma || needMore) return firstByteOf(freshFrame(rule.item));
        return byte(']');
    }
    case FrameKind::Object: {
        const GrammarRule& rule = m_grammar->rules()[static_cast<size_t>(frame.rule)];
        if (frame.state == kObjectOpen) return byte('{');
        if (rule.firstRequiredAt[static_cast<size_t>(frame.count)] ==
            static_cast<int>(rule.propertyRules.size()))
            return byte('}');
        const int keys =
            rule.keyChoices[static_cast<size_t>(2 * frame.count + (frame.value > 0 ? 1 : 0))];
        return firstByteOf(choiceFrame(keys));
    }
    case FrameKind::Call:
        if (frame.state == kCallClose) return byte('}');
        return firstByteOf(choiceFrame(m_grammar->rules()[static_cast<size_t>(frame.rule)].choice));
    case FrameKind::String: {
        const GrammarRule& rule = m_grammar->rules()[static_cast<size_t>(frame.rule)];
        switch (frame.state) {
        case kStringBody:
            return byte(frame.count < rule.minChars ? 'a' : '"');
        case kStringEscape:
            return byte('n');
        case kStringUnicode:
            return byte('0');
        case kStringUtf8:
            return Preference{false, static_cast<uint8_t>(frame.low)};
        default:
            return byte('"');
        }
    }
    case FrameKind::Integer:
    case FrameKind::Number:
        if (canEnd(frame)) return Preference{true, 0};
        for (const char c : std::string_view("0123456789-.")) {
            Frame trial = frame;
            if (stepNumber(trial, static_cast<uint8_t>(c)) == Step::Accepted) return byte(c);
        }
        throw std::logic_error("a number frame has no way to continue");
    case FrameKind::Choice: {
        const std::vector<std::string>& texts =
            m_grammar->choices()[static_cast<size_t>(frame.rule)].texts;
        int32_t shortest = frame.low;
        for (int32_t i = frame.low; i < frame.high; ++i)
            if (texts[static_cast<size_t>(i)].size() < texts[static_cast<size_t>(shortest)].size())
                shortest = i;
        const std::string& text = texts[static_cast<size_t>(shortest)];
        if (static_cast<int64_t>(text.size()) == frame.count) return Preference{true, 0};
        return byte(text[static_cast<size_t>(frame.count)]);
    }
    }
    throw std::logic_error("unknown frame kind");
}

std::string CallMatcher::completion() const {
    CallMatcher matcher = *this;
    std::string bytes;
    while (!matcher.isComplete()) {
        if (bytes.size() > kCompletionLimit) throw std::logic_error("call completion does not end");
        const Preference next = matcher.preferred(matcher.top());
        if (next.end) {
            matcher.popAndNotify();
            matcher.popFinished();
            continue;
        }
        if (!matcher.accept(next.byte)) throw std::logic_error("call completion broke the grammar");
        bytes += static_cast<char>(next.byte);
    }
    return bytes;
}

} // namespace sinkscope
