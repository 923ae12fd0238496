// How a template writes tool calls, read back from its render of probe calls: the text an
// assistant message with one call (and, where the template accepts it, two calls) adds after the
// generation prompt, with the turn's closing removed.
//
//   "<tool_call>[{\"name\": ..., \"arguments\": {...}}]</tool_call>"  JsonList, spaced
//   "<tool_call>\n{\"name\": ..., \"arguments\": {...}}\n</tool_call>"  TaggedObjects
//   "{\"name\": ..., \"parameters\": {...}}"                          BareObject
#pragma once

#include "tools/call_format.h"

#include <optional>
#include <string>
#include <string_view>

namespace sinkscope {

// `oneCall` holds one call object; `twoCalls` two (nullopt: the template refused two calls, so
// maxCalls is 1). nullopt and `error` when the text is none of the syntaxes.
std::optional<CallFormat> callFormatFromRender(std::string_view oneCall,
                                               std::optional<std::string_view> twoCalls,
                                               std::string& error);

} // namespace sinkscope
