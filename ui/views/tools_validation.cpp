#include "tools_validation.h"

#include <nlohmann/json.hpp>

#include <QList>

#include <algorithm>

namespace sinkscope::views {

namespace {

using Json = nlohmann::ordered_json;

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

// nlohmann's message reads "[json.exception.parse_error.101] parse error at line 1, column 13:
// syntax error ..."; the position is reported by us, so keep only what follows it.
QString parseErrorText(const char* what) {
    const QString message = QString::fromUtf8(what);
    const qsizetype column = message.indexOf(QLatin1String("column "));
    const qsizetype colon = column < 0 ? -1 : message.indexOf(QLatin1String(": "), column);
    return colon < 0 ? message : message.mid(colon + 2);
}

// The character index where each element of the top-level array starts; strings are skipped so
// that brackets and commas inside them do not count.
QList<int> topLevelElementOffsets(const QString& text) {
    QList<int> offsets;
    int depth = 0;
    bool inString = false;
    bool escaped = false;
    bool expectingElement = false;
    for (int i = 0; i < text.size(); ++i) {
        const QChar c = text[i];
        if (inString) {
            if (escaped)
                escaped = false;
            else if (c == QLatin1Char('\\'))
                escaped = true;
            else if (c == QLatin1Char('"'))
                inString = false;
            continue;
        }
        if (depth == 1 && expectingElement && !c.isSpace() && c != QLatin1Char(']')) {
            offsets << i;
            expectingElement = false;
        }
        if (c == QLatin1Char('"')) {
            inString = true;
        } else if (c == QLatin1Char('[') || c == QLatin1Char('{')) {
            ++depth;
            expectingElement = depth == 1;
        } else if (c == QLatin1Char(']') || c == QLatin1Char('}')) {
            --depth;
        } else if (c == QLatin1Char(',') && depth == 1) {
            expectingElement = true;
        }
    }
    return offsets;
}

int firstNonSpace(const QString& text) {
    for (int i = 0; i < text.size(); ++i)
        if (!text[i].isSpace()) return i;
    return 0;
}

QString typeName(const Json& value) {
    return QString::fromUtf8(value.type_name());
}

} // namespace

ToolsValidation validateTools(const QString& text) {
    const QByteArray utf8 = text.toUtf8();
    Json tools;
    try {
        tools = Json::parse(utf8.constBegin(), utf8.constEnd());
    } catch (const Json::parse_error& error) {
        // error.byte counts the bytes read, the offending one included.
        const auto bytesBefore = qsizetype(std::max<size_t>(error.byte, 1) - 1);
        const int offset = int(QString::fromUtf8(utf8.left(bytesBefore)).size());
        return failure(text, offset, parseErrorText(error.what()));
    }
    if (!tools.is_array())
        return failure(text, firstNonSpace(text),
                       QStringLiteral("the tools must be a JSON array of tool objects "
                                      "([{\"name\": …}, …]), not %1")
                           .arg(typeName(tools) == QLatin1String("object")
                                    ? QStringLiteral("an object")
                                    : QStringLiteral("a %1").arg(typeName(tools))));
    const QList<int> elementOffsets = topLevelElementOffsets(text);
    for (size_t i = 0; i < tools.size(); ++i) {
        const Json& tool = tools[i];
        const int offset = int(i) < elementOffsets.size() ? elementOffsets[int(i)] : 0;
        if (!tool.is_object())
            return failure(
                text, offset,
                QStringLiteral("tool %1 is a %2, not an object").arg(i + 1).arg(typeName(tool)));
        const auto name = tool.find("name");
        if (name == tool.end() || !name->is_string() || name->get<std::string>().empty())
            return failure(text, offset,
                           QStringLiteral("tool %1 has no \"name\" string").arg(i + 1));
    }
    ToolsValidation result;
    result.ok = true;
    result.compactJson = QString::fromStdString(tools.dump());
    return result;
}

} // namespace sinkscope::views
