// An incremental matcher for a CallGrammar (call_grammar.h): fed bytes one at a time (and, where
// the grammar has marker tokens, those markers), it says whether each keeps the text inside the
// grammar, whether the calls are complete, and the shortest completion.
//
// It is a pushdown automaton over a fixed array of frames (one per open value), so that copying
// it (the masker copies one per trie level) costs a few hundred bytes.
#pragma once

#include "tools/call_grammar.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace sinkscope {

// A call marker written as one token of its own (TaggedObjects: between blocks).
enum class CallMarker { Open, Close };

class CallMatcher {
public:
    static constexpr int kMaxFrames = 24; // schema depth is at most 6 (tool_schema.cpp)

    explicit CallMatcher(const CallGrammar& grammar);
    CallMatcher(const CallMatcher& other) { *this = other; }
    CallMatcher& operator=(const CallMatcher& other); // copies only the open frames

    // Feeds one byte; false when it cannot continue any valid call. After false the matcher is
    // spent: feed a copy when unsure (acceptBytes does).
    bool accept(uint8_t byte);
    // Feeds bytes all or nothing: unchanged when false.
    bool acceptBytes(std::string_view bytes);
    // Feeds a marker token; false (and nothing changes) when it is not due (awaits()).
    bool acceptMarker(CallMarker marker);
    // The grammar's next symbol is this marker token (and no byte can come).
    bool awaits(CallMarker marker) const;
    // The whole reply has been read, terminator included: nothing more may come.
    bool isComplete() const;
    // The reply may stop here: complete, or (TaggedObjects) after a block, where another block
    // may also follow.
    bool mayStop() const;
    // The index of the call being written; the number of calls once it is closed.
    int callIndex() const { return m_callsDone; }
    // The shortest bytes that lead to where the reply may stop, or to a marker token that is due
    // (the caller feeds it, then asks again): the caller wraps a call up with them when the token
    // budget runs out. Empty there.
    std::string completion() const;
    // When the next byte is inside a string's body (no escape or UTF-8 sequence open): how many
    // more characters it may take. -1 otherwise, and in a span-restricted string. Lets the masker
    // accept plain text tokens by their character count alone.
    int64_t plainStringRoom() const;

    // From the next string on, every string value without a minimum length must be, byte for
    // byte between its quotes, a span of the source's text that starts at one of its characters
    // (SpanSource below: the user's message, so that free-text arguments are copied words). An
    // empty source: no restriction. The source must outlive the matcher and its copies.
    struct SpanView {
        std::string_view text;   // as a JSON string body writes it
        std::string_view starts; // [text.size()]: nonzero where a character begins
    };
    void restrictStringsToSpans(SpanView source) { m_spanSource = source; }

private:
    // One open value. Fields by kind:
    //   Root:    state, count = terminator bytes read
    //   Array:   state, count = items written
    //   Object:  state, count = next property index
    //   Call:    state
    //   String:  state, count = characters, pending = UTF-8 continuation bytes due, low/high =
    //            their allowed range, flag = a \u escape began with d/D (no surrogates);
    //            span-restricted: value = where the body's first occurrence in the span source
    //            starts, fraction = the body's bytes
    //   Integer, Number: state, flag = negative, digits, value = integer part,
    //            fractionDigits, fraction = decimal digits as an integer
    //   Choice:  count = bytes matched, low/high = the alive literals [low, high)
    enum class FrameKind : uint8_t { Root, String, Integer, Number, Choice, Array, Object, Call };
    struct Frame {
        FrameKind kind = FrameKind::Root;
        uint8_t state = 0;
        bool flag = false;
        int32_t rule = -1;
        int32_t low = 0;
        int32_t high = 0;
        int32_t pending = 0;
        int32_t digits = 0;
        int32_t fractionDigits = 0;
        int64_t count = 0;
        int64_t value = 0;
        int64_t fraction = 0;
    };
    enum class Step { Accepted, Rejected, Descended };
    struct Preference {
        bool end = false; // end the frame here (it can end) rather than write a byte
        uint8_t byte = 0;
    };

    Frame& top() { return m_frames[static_cast<size_t>(m_depth - 1)]; }
    const Frame& top() const { return m_frames[static_cast<size_t>(m_depth - 1)]; }
    Frame freshFrame(int rule) const;
    Frame choiceFrame(int choice) const; // Choice frames name their literals, not a rule
    void push(const Frame& frame);
    void popAndNotify();
    void popFinished();
    bool canEnd(const Frame& frame) const;
    bool isFinished(const Frame& frame) const;
    Step step(Frame& frame, uint8_t byte);
    Step stepRoot(Frame& frame, uint8_t byte);
    Step stepBlocks(Frame& frame, uint8_t byte);
    void afterBlock(Frame& root) const;
    Step stepArray(Frame& frame, uint8_t byte);
    Step stepObject(Frame& frame, uint8_t byte);
    Step stepCall(Frame& frame, uint8_t byte);
    Step stepString(Frame& frame, uint8_t byte) const;
    bool spanRestricted(const Frame& frame) const;
    bool extendSpan(Frame& frame, uint8_t byte) const;
    Step stepNumber(Frame& frame, uint8_t byte) const;
    Step stepChoice(Frame& frame, uint8_t byte) const;
    bool numberFeasible(const Frame& frame) const;
    Preference preferred(const Frame& frame) const;

    const CallGrammar* m_grammar;
    std::array<Frame, kMaxFrames> m_frames; // [m_depth] open values, the root first
    int m_depth = 0;
    int m_callsDone = 0;
    SpanView m_spanSource; // restrictStringsToSpans
};

// The message a span-restricted matcher copies from, JSON-escaped (invalid UTF-8 replaced), with
// where each of its characters begins (a span may not start inside an escape or a UTF-8 letter).
struct SpanSource {
    explicit SpanSource(std::string_view message);
    CallMatcher::SpanView view() const { return {text, starts}; }
    std::string text;
    std::string starts;
};

} // namespace sinkscope
