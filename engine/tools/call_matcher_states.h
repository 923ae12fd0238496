// The states of CallMatcher's frames, shared by its two source files (call_matcher.cpp: the
// structure; call_matcher_scalars.cpp: strings and numbers). Internal to the matcher.
#pragma once

#include <cstdint>

namespace sinkscope::call_matcher_states {

constexpr uint8_t kFinished = 255; // any frame: its value is complete and closed

enum RootState : uint8_t {
    kRootStart,       // JsonList: before ' ' or '['; BareObject: before the call
    kRootAfterSpace,  // JsonList
    kRootInArray,     // JsonList
    kRootTerminator,  // JsonList: count = terminator bytes read
    kBlockOpening,    // TaggedObjects: the "\n" before a call
    kBlockInCall,     // TaggedObjects
    kBlockClosing,    // TaggedObjects: count = bytes of blockClosing() read
    kBlockCloseToken, // TaggedObjects: the close marker token is due
    kBlockReopening,  // TaggedObjects: count = bytes of blockReopening() read (0: may stop)
    kBlockOpenToken,  // TaggedObjects: the open marker token is due
    kBareInCall,      // BareObject
};
enum ArrayState : uint8_t {
    kArrayOpen,
    kArrayAfterOpen,
    kArrayItemPending,
    kArrayAfterItem,
    kArrayAfterComma,
    kArrayAfterCommaSpace, // spaced: the ' ' after ','
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

} // namespace sinkscope::call_matcher_states
