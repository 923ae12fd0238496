#include "session/session_defaults.h"

namespace sinkscope {

SessionOptions defaultSessionOptions(const ModelConfig& config) {
    SessionOptions options;
    if (config.suggestedKvWindow > 0) options.kvWindow = config.suggestedKvWindow;
    // Model::load accepts only these two spellings (or none).
    if (config.suggestedPositionMode == positionModeName(PositionMode::Streaming))
        options.positions = PositionMode::Streaming;
    else if (config.suggestedPositionMode == positionModeName(PositionMode::Absolute))
        options.positions = PositionMode::Absolute;
    return options;
}

} // namespace sinkscope
