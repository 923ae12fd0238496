// Checks the tools editor's text before it is applied: it must parse as JSON and be an array of
// tool objects, each with a string "name" (the full schema is checked by the engine's tools).
#pragma once

#include <QString>

namespace sinkscope::views {

struct ToolsValidation {
    bool ok = false;
    QString compactJson; // on success: the array without whitespace, keys in their written order
    QString message;     // on failure: "line L, column C: what is wrong"
    int line = 0;        // 1-based
    int column = 0;      // 1-based, in characters
    int offset = -1;     // the error's character index in the text
};

ToolsValidation validateTools(const QString& text);

} // namespace sinkscope::views
