#include "views/tools_validation.h"

#include "tools/tool_schema.h"

#include <algorithm>
#include <string_view>

namespace sinkscope::views {

namespace {

ToolsValidation failure(const QString& text, int offset, const QString& what) {
    ToolsValidation result;
    result.offset = std::clamp(offset, 0, int(text.size()));
    const QStringView before = QStringView(text).left(result.offset);
    result.line = int(before.count(QLatin1Char('\n'))) + 1;
    result.column = result.offset - int(before.lastIndexOf(QLatin1Char('\n')));
    result.message =
        QStringLiteral("line %1, column %2: %3").arg(result.line).arg(result.column).arg(what);
    return result;
}

} // namespace

// The engine's parser decides (schema subset, JSON-pointer messages, warnings); this only turns
// its byte offsets into the editor's lines and columns of characters.
ToolsValidation validateTools(const QString& text) {
    const QByteArray utf8 = text.toUtf8();
    const ToolsParseResult parsed =
        parseTools(std::string_view(utf8.constData(), size_t(utf8.size())));
    if (!parsed.ok()) {
        const SchemaIssue& issue = parsed.errors.front();
        const auto bytesBefore = qsizetype(std::min<size_t>(issue.offset, size_t(utf8.size())));
        const int offset = int(QString::fromUtf8(utf8.left(bytesBefore)).size());
        return failure(text, offset, QString::fromStdString(issue.text()));
    }
    ToolsValidation result;
    result.ok = true;
    result.compactJson = QString::fromStdString(parsed.tools->compactJson());
    for (const SchemaIssue& warning : parsed.warnings)
        result.warnings << QString::fromStdString(warning.text());
    return result;
}

} // namespace sinkscope::views
