// Checks the tools editor's text before it is applied, with the engine's schema parser
// (engine/tools/tool_schema.h): JSON syntax, the supported JSON-Schema subset, names, duplicates.
#pragma once

#include <QString>
#include <QStringList>

namespace sinkscope::views {

struct ToolsValidation {
    bool ok = false;
    QString compactJson;  // on success: the array without whitespace, keys in their written order
    QString message;      // on failure: "line L, column C: what is wrong"
    int line = 0;         // 1-based
    int column = 0;       // 1-based, in characters
    int offset = -1;      // the error's character index in the text
    QStringList warnings; // on success: "pointer: unsupported keyword …" and the like
};

ToolsValidation validateTools(const QString& text);

} // namespace sinkscope::views
