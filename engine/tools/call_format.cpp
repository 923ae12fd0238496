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

CallFormat smolLmCallFormat() {
    CallFormat format;
    format.spaced = true;
    return format;
}

CallFormat qwenCallFormat() {
    CallFormat format;
    format.syntax = CallSyntax::TaggedObjects;
    format.spaced = true;
    return format;
}

CallFormat llama3CallFormat() {
    CallFormat format;
    format.syntax = CallSyntax::BareObject;
    format.open.clear();
    format.close.clear();
    format.argumentsKey = "parameters";
    format.spaced = true;
    format.maxCalls = 1;
    return format;
}

} // namespace sinkscope
