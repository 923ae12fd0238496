// The hand-over point between the engine worker and the GUI. The worker posts every step; the GUI
// takes everything posted since its last look, at most ~30 times a second. Snapshots beyond the
// cap are dropped oldest first (the newest snapshot wins; the UI may skip frames, it never builds
// up a queue); stream pieces are all kept, since the chat needs every one.
#pragma once

#include "worker/engine_types.h"

#include <QMutex>

namespace sinkscope::ui {

class SnapshotMailbox {
public:
    static constexpr qsizetype kDefaultSnapshotCap = 256;

    explicit SnapshotMailbox(qsizetype snapshotCap = kDefaultSnapshotCap);

    qsizetype snapshotCap() const { return m_snapshotCap; }

    // Worker side (any thread).
    void postSnapshot(StepSnapshot snapshot);
    void postPiece(StreamPiece piece);
    void postProgress(const GenerationProgress& progress);
    // A new session: pending snapshots of the old one are dropped; `firstSnapshots` (the
    // re-prefill, oldest first) become the pending ones.
    void postSessionReset(const StreamLayout& layout, QList<StepSnapshot> firstSnapshots);
    // A turn's render rewrote the transcript from `rewrittenFrom` on: a new session follows (its
    // snapshots posted one by one), and the turn's pieces start at that index.
    void postTranscriptRewrite(const StreamLayout& layout, qint64 rewrittenFrom);

    // GUI side: everything pending, leaving the mailbox empty.
    EngineBatch take();

private:
    void trimSnapshots(); // requires m_mutex

    const qsizetype m_snapshotCap;
    QMutex m_mutex;
    EngineBatch m_pending; // guarded by m_mutex
};

} // namespace sinkscope::ui
