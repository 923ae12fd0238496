#include "worker/kv_timeline_csv.h"

#include <QString>

namespace sinkscope::ui {

namespace {

QByteArray quoted(const std::string& text) {
    QByteArray field = QString::fromStdString(text).toUtf8(); // invalid UTF-8 as U+FFFD
    field.replace('"', "\"\"");
    return '"' + field + '"';
}

} // namespace

bool writeKvTimelineCsv(const Session& session, QIODevice& out) {
    const KvTimeline& timeline = session.timeline();
    const Tokenizer& tokenizer = session.model().tokenizer();
    const QByteArray bytes = QByteArray::number(qint64(session.cache().bytesAllocated()));
    if (timeline.dropped() > 0 &&
        out.write(QStringLiteral("# the first %1 writes of this session are not kept (the "
                                 "timeline keeps the last %2)\n")
                      .arg(timeline.dropped())
                      .arg(timeline.capacity())
                      .toUtf8()) < 0)
        return false;
    if (out.write("step,position,token_id,token_text,slot,sink,evicted_position,"
                  "evicted_token_id,evicted_token_text,window_tokens,sinks,evictions,kv_bytes\n") <
        0)
        return false;
    KvCounts counts = timeline.droppedCounts();
    QByteArray row;
    for (size_t i = 0; i < timeline.size(); ++i) {
        const KvWrite& write = timeline[i];
        counts.add(write);
        const bool evicted = write.evictedPosition >= 0;
        row = QByteArray::number(qint64(timeline.dropped()) + qint64(i)) + ',' +
              QByteArray::number(qint64(write.position)) + ',' + QByteArray::number(write.token) +
              ',' + quoted(tokenizer.piece(write.token, true)) + ',' +
              QByteArray::number(write.slot) + ',' + (write.sink ? "1" : "0") + ',';
        if (evicted)
            row += QByteArray::number(qint64(write.evictedPosition)) + ',' +
                   QByteArray::number(write.evictedToken) + ',' +
                   quoted(tokenizer.piece(write.evictedToken, true)) + ',';
        else
            row += ",,,";
        row += QByteArray::number(qint64(counts.windowTokens())) + ',' +
               QByteArray::number(qint64(counts.sinks)) + ',' +
               QByteArray::number(qint64(counts.evictions)) + ',' + bytes + '\n';
        if (out.write(row) < 0) return false;
    }
    return true;
}

} // namespace sinkscope::ui
