#include "tools/call_format.h"

namespace sinkscope {

const char* callSyntaxName(CallSyntax syntax) {
    switch (syntax) {
    case CallSyntax::JsonList:
        return "json-list";
    case CallSyntax::TaggedObjects:
        return "tagged-objects";
    case CallSyntax::BareObject:
        break;
    }
    return "bare-object";
}

CallFormat needleCallFormat() {
    return CallFormat{};
}

} // namespace sinkscope
