// The session's KV timeline as CSV (File > Export KV Timeline): a header row, then one row per
// token written to the cache (prefill and decode), oldest first:
//   step, position, token_id, token_text, slot, sink, evicted_position, evicted_token_id,
//   evicted_token_text, window_tokens, sinks, evictions, kv_bytes
// evicted_* are empty when the write evicted nothing; the last four are the cache's counters after
// the write. Texts are always quoted ("" for a quote). When the session wrote more than the
// timeline keeps, a first line "# ..." says how many of its first writes are missing.
#pragma once

#include "session/session.h"

#include <QIODevice>

#include <cstddef>

namespace sinkscope::ui {

// Writes a playground session keeps (SessionOptions::timelineCapacity): 32 bytes each, 8 MiB at
// most; a longer session keeps its last 262,144.
inline constexpr size_t kKvTimelineCapacity = 262'144;

// Writes the CSV of `session`'s timeline to `out`; false when a write fails.
bool writeKvTimelineCsv(const Session& session, QIODevice& out);

} // namespace sinkscope::ui
