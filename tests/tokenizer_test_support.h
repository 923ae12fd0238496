// Helpers the tokenizer tests share: readable QCOMPARE messages for ids and byte strings, GGUF
// bytes in memory, and the JSON references in shared/reference.
#pragma once

#include "gguf/gguf.h"
#include "gguf/gguf_writer.h"
#include "tokenizer/tokenizer.h"

#include <QByteArray>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include <memory>
#include <string>
#include <vector>

namespace sinkscope::test {

using Ids = std::vector<int32_t>;

inline QByteArray bytesOf(const GgufWriter& writer) {
    const std::vector<uint8_t> bytes = writer.bytes();
    return QByteArray(reinterpret_cast<const char*>(bytes.data()),
                      static_cast<qsizetype>(bytes.size()));
}

// The GGUF file in `bytes`; nullptr (with a warning saying why) when it does not parse.
inline std::unique_ptr<GgufFile> parseGguf(const QByteArray& bytes) {
    std::string error;
    auto file = GgufFile::fromBytes(std::vector<uint8_t>(bytes.begin(), bytes.end()), error);
    if (!file) qWarning("GGUF did not parse: %s", error.c_str());
    return file;
}

inline QJsonObject readJsonObject(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(file.readAll()).object();
}

inline Ids idsFromJson(const QJsonArray& array) {
    Ids ids;
    for (const QJsonValue& value : array)
        ids.push_back(value.toInt());
    return ids;
}

} // namespace sinkscope::test

// Readable failure messages for QCOMPARE on ids and byte strings.
namespace QTest {
template <> inline char* toString(const sinkscope::test::Ids& ids) {
    QByteArray text = "[";
    for (size_t i = 0; i < ids.size(); ++i)
        text += (i ? ", " : "") + QByteArray::number(ids[i]);
    return qstrdup(text + "]");
}
template <> inline char* toString(const std::string& text) {
    return toString(QByteArray::fromStdString(text));
}
} // namespace QTest
