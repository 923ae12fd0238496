#include "tools/call_matcher.h"

#include "tools/call_matcher_states.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace sinkscope {

using namespace call_matcher_states;

namespace {

constexpr int kCompletionLimit = 1 << 20; // bytes; a completion is far shorter

} // namespace

CallMatcher::CallMatcher(const CallGrammar& grammar) : m_grammar(&grammar) {
    Frame root;
    if (grammar.format().syntax == CallSyntax::TaggedObjects) root.state = kBlockOpening;
    push(root);
}

CallMatcher& CallMatcher::operator=(const CallMatcher& other) {
    m_grammar = other.m_grammar;
    m_depth = other.m_depth;
    m_callsDone = other.m_callsDone;
    m_spanSource = other.m_spanSource;
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
        switch (m_grammar->format().syntax) {
        case CallSyntax::JsonList:
            parent.state =
                m_grammar->options().terminator.empty() ? kFinished : uint8_t{kRootTerminator};
            break;
        case CallSyntax::TaggedObjects:
            ++m_callsDone;
            parent.state = kBlockClosing;
            parent.count = 0;
            break;
        case CallSyntax::BareObject:
            ++m_callsDone;
            parent.state = kFinished;
            break;
        }
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

bool CallMatcher::acceptMarker(CallMarker marker) {
    if (!awaits(marker)) return false;
    Frame& root = m_frames[0];
    if (marker == CallMarker::Close) {
        afterBlock(root);
    } else {
        root.state = kBlockOpening;
        root.count = 0;
    }
    return true;
}

bool CallMatcher::awaits(CallMarker marker) const {
    return m_depth == 1 &&
           m_frames[0].state == (marker == CallMarker::Close ? kBlockCloseToken : kBlockOpenToken);
}

bool CallMatcher::isComplete() const {
    return m_depth == 1 && m_frames[0].state == kFinished;
}

bool CallMatcher::mayStop() const {
    return isComplete() ||
           (m_depth == 1 && m_frames[0].state == kBlockReopening && m_frames[0].count == 0);
}

void CallMatcher::afterBlock(Frame& root) const {
    const int maxCalls = m_grammar->format().maxCalls;
    root.state = maxCalls > 0 && m_callsDone >= maxCalls ? kFinished : uint8_t{kBlockReopening};
    root.count = 0;
}

int64_t CallMatcher::plainStringRoom() const {
    const Frame& frame = top();
    if (frame.kind != FrameKind::String || frame.state != kStringBody || spanRestricted(frame))
        return -1;
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
    if (options.format.syntax == CallSyntax::TaggedObjects) return stepBlocks(frame, byte);
    if (options.format.syntax == CallSyntax::BareObject) {
        if (frame.state != kRootStart) return Step::Rejected;
        frame.state = kBareInCall;
        push(freshFrame(m_grammar->callRule()));
        return Step::Descended;
    }
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

// TaggedObjects: the literal bytes around each call; the calls themselves are children.
CallMatcher::Step CallMatcher::stepBlocks(Frame& frame, uint8_t byte) {
    std::string_view literal;
    switch (frame.state) {
    case kBlockOpening:
        literal = "\n";
        break;
    case kBlockClosing:
        literal = m_grammar->blockClosing();
        break;
    case kBlockReopening:
        literal = m_grammar->blockReopening();
        break;
    default:
        return Step::Rejected;
    }
    if (byte != static_cast<uint8_t>(literal[static_cast<size_t>(frame.count)]))
        return Step::Rejected;
    if (++frame.count < static_cast<int64_t>(literal.size())) return Step::Accepted;
    const CallGrammarOptions& options = m_grammar->options();
    frame.count = 0;
    if (frame.state == kBlockOpening) {
        frame.state = kBlockInCall;
        push(freshFrame(m_grammar->callRule()));
    } else if (frame.state == kBlockClosing) {
        if (options.terminator.empty())
            frame.state = kBlockCloseToken;
        else
            afterBlock(frame);
    } else {
        frame.state = options.reopening.empty() ? uint8_t{kBlockOpenToken} : uint8_t{kBlockOpening};
    }
    return Step::Accepted;
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
            frame.state = m_grammar->format().spaced ? uint8_t{kArrayAfterCommaSpace}
                                                     : uint8_t{kArrayAfterComma};
            return Step::Accepted;
        }
        if (byte == ']' && frame.count >= rule.minItems) {
            frame.state = kFinished;
            return Step::Accepted;
        }
        return Step::Rejected;
    case kArrayAfterCommaSpace:
        if (byte != ' ') return Step::Rejected;
        frame.state = kArrayAfterComma;
        return Step::Accepted;
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
        switch (frame.state) {
        case kRootTerminator:
            return byte(m_grammar->options().terminator[static_cast<size_t>(frame.count)]);
        case kBlockOpening:
            return byte('\n');
        case kBlockClosing:
            return byte(m_grammar->blockClosing()[static_cast<size_t>(frame.count)]);
        case kBlockReopening:
            return byte(m_grammar->blockReopening()[static_cast<size_t>(frame.count)]);
        default:
            break;
        }
        if (m_grammar->format().syntax == CallSyntax::BareObject)
            return firstByteOf(freshFrame(m_grammar->callRule()));
        return byte('[');
    case FrameKind::Array: {
        const GrammarRule& rule = m_grammar->rules()[static_cast<size_t>(frame.rule)];
        const bool needMore = frame.count < rule.minItems;
        if (frame.state == kArrayOpen) return byte('[');
        if (frame.state == kArrayAfterItem) return byte(needMore ? ',' : ']');
        if (frame.state == kArrayAfterCommaSpace) return byte(' ');
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
        // A restricted string (minChars 0) closes from its body; inside an escape or a UTF-8
        // sequence its span goes on with the source's next byte, which completes it.
        if (spanRestricted(frame) && frame.state != kStringBody && frame.state != kStringOpen)
            return Preference{
                false, static_cast<uint8_t>(
                           m_spanSource.text[static_cast<size_t>(frame.value + frame.fraction)])};
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
    while (!matcher.mayStop() && !matcher.awaits(CallMarker::Open) &&
           !matcher.awaits(CallMarker::Close)) {
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
