// Text from a vocabulary file quoted in a one-line message: control bytes become '?', and long
// texts are cut short.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sinkscope {

inline std::string quotedText(std::string_view text) {
    constexpr size_t kLongest = 48;
    std::string shown = "\"";
    for (const char byte : text.substr(0, kLongest)) {
        const auto value = static_cast<uint8_t>(byte);
        shown.push_back(value < 0x20 || value == 0x7F ? '?' : byte);
    }
    return shown + (text.size() > kLongest ? "...\"" : "\"");
}

} // namespace sinkscope
