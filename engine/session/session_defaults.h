// The session options a model asks for. A model may carry Sinkscope's hints in its GGUF metadata
// (sinkscope.kv_window: the window it was trained with; sinkscope.position_mode: "absolute" or
// "streaming"); where it does, they replace SessionOptions' defaults, and the user's own choices
// (the CLI's --kv-window and --positions, the playground's settings) override them in turn. A
// model without them (stories260K) gets SessionOptions' defaults unchanged.
#pragma once

#include "model/model.h"
#include "session/session.h"

namespace sinkscope {

SessionOptions defaultSessionOptions(const ModelConfig& config);

} // namespace sinkscope
