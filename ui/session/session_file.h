// A saved session (File > Save Session…, and the chat kept at quit): versioned JSON, UTF-8.
//
//   {"format": "sinkscope-session", "version": 1,
//    "model": {"path": "/abs/model.gguf", "sha256": "<64 lowercase hex digits>"},
//    "settings": {"kv_window": 256, "kv_bits": 8, "positions": "absolute",
//                 "sinks": "tools+bos", "first_n": 4, "use_model_hints": true,
//                 "probe": {"enabled": true, "layer": -1, "head": -1}, "threads": 2,
//                 "sampler": {"temperature": 0.8, "top_k": 40, "top_p": 0.95, "seed": 42}},
//    "limits": {"max_new_tokens": 128, "stop_at_newline": true, "ignore_eos": false,
//               "calls": "auto"},
//    "tools": {"definitions": [<the tools array as applied>], "in_system_turn": false},
//    "turns": [{"role": "user", "text": "..."},
//              {"role": "assistant", "text": "...",
//               "calls": [{"name": "set_light", "arguments": {"room": "hall"}}]},
//              {"role": "tool", "text": "<the result, JSON text>"}]}
//
// Keys keep their order (tools and arguments render into tokens as written). The names are the
// engine's (positionModeName, sinkModeName, callPolicyName, turnRoleName). A file is untrusted:
// its size, nesting, string lengths and value count are checked on the raw bytes before it is
// parsed, then every field's type and range before anything is built; an error names the field.
#pragma once

#include "worker/engine_types.h"

#include <QByteArray>
#include <QString>

#include <optional>

namespace sinkscope::ui {

inline constexpr int kSessionFormatVersion = 1;
inline constexpr qint64 kMaxSessionFileBytes = 64LL * 1024 * 1024;
inline constexpr int kMaxSessionDepth = 64;                       // nested arrays and objects
inline constexpr qint64 kMaxSessionStringBytes = 8 * 1024 * 1024; // one string, escaped
inline constexpr qint64 kMaxSessionValues = 1000000;              // arrays' and objects' members
inline constexpr int kMaxSessionTurns = 100000;

// What the worker rebuilds (SessionRestore), and the reply limits the Settings tab holds.
struct SessionFile : SessionRestore {
    GenerationLimits limits;
};

QByteArray sessionFileBytes(const SessionFile& session);
// nullopt with `error` set ("turns[3].role: ...") when `bytes` is not a session this reads.
std::optional<SessionFile> parseSessionFile(QByteArrayView bytes, QString& error);

// A compact JSON text indented for the tools editor, keys in their order.
QString indentedJson(const QString& compactJson);

// The file's size is checked before it is read.
std::optional<SessionFile> readSessionFile(const QString& path, QString& error);
// Written beside `path` and renamed over it: a failed save leaves the old file whole.
bool writeSessionFile(const QString& path, const SessionFile& session, QString& error);

} // namespace sinkscope::ui
