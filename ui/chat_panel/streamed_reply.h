// The reply being generated as the readable chat shows it: its text outside calls, as the
// finished turn will read (TurnView::text). A call's markers and what lies between them are
// hidden while the reply streams, whether the vocabulary holds the markers as control tokens
// (Needle's) or as user-defined ones that read as text (Qwen's <tool_call>); the call's card shows
// the call once the reply is done.
#pragma once

#include "worker/engine_types.h"

#include <QString>

namespace sinkscope::ui {

// The markers around a call (CallFormat::open / close); both "" when calls have none (Llama-3's
// bare object), and then nothing is hidden.
struct CallMarkers {
    QString open;
    QString close;
};

class StreamedReply {
public:
    explicit StreamedReply(CallMarkers markers = {}) : m_markers(std::move(markers)) {}

    // A generated piece: control tokens are hidden unless they are a call's marker.
    void append(const StreamPiece& piece);
    // The text outside calls. The first characters of an open marker at the end are held back:
    // the marker may be arriving a few characters at a time.
    QString text() const;
    bool writingCall() const; // a call opened and not yet closed

private:
    struct Parsed {
        QString text;
        bool inCall = false;
    };
    Parsed parse() const;

    CallMarkers m_markers;
    QString m_raw; // every piece's text but the hidden control tokens
};

} // namespace sinkscope::ui
