#include "worker/snapshot_mailbox.h"

#include <QMutexLocker>

#include <utility>

namespace sinkscope::ui {

SnapshotMailbox::SnapshotMailbox(qsizetype snapshotCap)
    : m_snapshotCap(qMax<qsizetype>(1, snapshotCap)) {}

void SnapshotMailbox::postSnapshot(StepSnapshot snapshot) {
    const QMutexLocker lock(&m_mutex);
    m_pending.snapshots.append(std::move(snapshot));
    trimSnapshots();
}

void SnapshotMailbox::postPiece(StreamPiece piece) {
    const QMutexLocker lock(&m_mutex);
    m_pending.pieces.append(std::move(piece));
}

void SnapshotMailbox::postProgress(const GenerationProgress& progress) {
    const QMutexLocker lock(&m_mutex);
    m_pending.hasProgress = true;
    m_pending.progress = progress;
}

void SnapshotMailbox::postSessionReset(const StreamLayout& layout,
                                       QList<StepSnapshot> firstSnapshots) {
    const QMutexLocker lock(&m_mutex);
    m_pending.sessionReset = true;
    m_pending.layout = layout;
    m_pending.snapshots = std::move(firstSnapshots);
    trimSnapshots();
}

void SnapshotMailbox::postTranscriptRewrite(const StreamLayout& layout, qint64 rewrittenFrom) {
    postSessionReset(layout, {});
    const QMutexLocker lock(&m_mutex);
    m_pending.rewrittenFrom = rewrittenFrom;
}

EngineBatch SnapshotMailbox::take() {
    EngineBatch taken;
    const QMutexLocker lock(&m_mutex);
    std::swap(taken, m_pending);
    return taken;
}

void SnapshotMailbox::trimSnapshots() {
    const qsizetype excess = m_pending.snapshots.size() - m_snapshotCap;
    if (excess > 0) m_pending.snapshots.remove(0, excess);
}

} // namespace sinkscope::ui
