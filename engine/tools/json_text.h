// JSON written on one line the way chat templates write it: compact (`{"a":[1,2]}`), or spaced as
// Python's json.dumps and Hugging Face's tojson write it (`{"a": [1, 2]}`). Keys in their order,
// non-ASCII kept, invalid UTF-8 replaced.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace sinkscope {

std::string jsonText(const nlohmann::ordered_json& value, bool spaced);

} // namespace sinkscope
