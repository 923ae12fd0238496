#include "views/kv_cache_model.h"

#include "views/piece_text.h"
#include "views/view_colors.h"

#include <QApplication>
#include <QFont>
#include <QPalette>

namespace sinkscope::views {

namespace {

constexpr QChar kHeadMarker(0x25B6); // ▶

QString kindName(SlotKind kind) {
    switch (kind) {
    case SlotKind::Sink:
        return QStringLiteral("sink");
    case SlotKind::Ring:
        return QStringLiteral("ring");
    case SlotKind::Empty:
        break;
    }
    return QStringLiteral("empty");
}

QColor kindColor(SlotKind kind, const QPalette& palette) {
    const MaskColors colors = MaskColors::forPalette(palette);
    switch (kind) {
    case SlotKind::Sink:
        return colors.sink;
    case SlotKind::Ring:
        return colors.recent;
    case SlotKind::Empty:
        break;
    }
    return colors.future;
}

} // namespace

KvCacheModel::KvCacheModel(QObject* parent) : QAbstractTableModel(parent) {}

void KvCacheModel::setSnapshot(const StepSnapshot& snapshot) {
    if (snapshot.cacheSlots.size() != m_snapshot.cacheSlots.size()) {
        beginResetModel();
        m_snapshot = snapshot;
        endResetModel();
        return;
    }
    updateSlots(snapshot);
}

// A slot's row changes when its token moved or the mask or the probe changed its kept flag or
// weight; the rows losing or gaining the write-head or query marks change their font.
void KvCacheModel::updateSlots(const StepSnapshot& snapshot) {
    const std::vector<SlotView>& before = m_snapshot.cacheSlots;
    std::vector<bool> changed(before.size(), false);
    for (size_t i = 0; i < before.size(); ++i) {
        const SlotView& a = before[i];
        const SlotView& b = snapshot.cacheSlots[i];
        changed[i] = a.token != b.token || a.position != b.position || a.kind != b.kind ||
                     a.kept != b.kept || a.attention != b.attention || a.piece != b.piece;
    }
    for (const int slot :
         {m_snapshot.ringHead, m_snapshot.querySlot, snapshot.ringHead, snapshot.querySlot})
        if (slot >= 0 && size_t(slot) < changed.size()) changed[size_t(slot)] = true;
    const bool queryMoved = snapshot.queryPosition != m_snapshot.queryPosition;
    m_snapshot = snapshot;
    if (queryMoved && rowCount() > 0)
        emit dataChanged(index(0, AgeColumn), index(rowCount() - 1, AgeColumn));
    signalRowsChanged(changed);
}

// One dataChanged per run of consecutive changed rows.
void KvCacheModel::signalRowsChanged(const std::vector<bool>& changed) {
    const int rows = int(changed.size());
    for (int first = 0; first < rows;) {
        if (!changed[size_t(first)]) {
            ++first;
            continue;
        }
        int last = first;
        while (last + 1 < rows && changed[size_t(last + 1)])
            ++last;
        emit dataChanged(index(first, 0), index(last, ColumnCount - 1));
        first = last + 1;
    }
}

void KvCacheModel::clear() {
    beginResetModel();
    m_snapshot = StepSnapshot{};
    m_highlighted.clear();
    endResetModel();
}

void KvCacheModel::setHighlightedPositions(const QSet<qint64>& positions) {
    m_highlighted = positions;
    signalAllRowsChanged();
}

void KvCacheModel::signalAllRowsChanged() {
    if (rowCount() > 0) emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

int KvCacheModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_snapshot.cacheSlots.size());
}

int KvCacheModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant KvCacheModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const int slot = index.row();
    const SlotView& view = m_snapshot.cacheSlots[size_t(slot)];
    switch (role) {
    case Qt::DisplayRole:
        return displayText(slot, index.column());
    case Qt::DecorationRole:
        return index.column() == KindColumn
                   ? QVariant(kindColor(view.kind, QApplication::palette()))
                   : QVariant();
    case Qt::BackgroundRole:
        return background(slot);
    case Qt::FontRole:
        if (slot == m_snapshot.ringHead || slot == m_snapshot.querySlot) {
            QFont font;
            font.setBold(true);
            return font;
        }
        return {};
    case Qt::ForegroundRole:
        return view.kind != SlotKind::Empty && !view.kept
                   ? QVariant(QApplication::palette().color(QPalette::Disabled, QPalette::Text))
                   : QVariant();
    case Qt::TextAlignmentRole:
        return index.column() == PieceColumn || index.column() == KindColumn
                   ? int(Qt::AlignLeft | Qt::AlignVCenter)
                   : int(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ToolTipRole:
        return toolTip(slot);
    case PositionRole:
        return qint64(view.position);
    default:
        return {};
    }
}

QVariant KvCacheModel::displayText(int slot, int column) const {
    const SlotView& view = m_snapshot.cacheSlots[size_t(slot)];
    const bool occupied = view.kind != SlotKind::Empty && view.position >= 0;
    switch (column) {
    case SlotColumn:
        return slot == m_snapshot.ringHead ? QStringLiteral("%1 %2").arg(kHeadMarker).arg(slot)
                                           : QString::number(slot);
    case KindColumn:
        return kindName(view.kind);
    case PieceColumn:
        return visiblePiece(view.piece);
    case PositionColumn:
        return occupied ? QVariant(qint64(view.position)) : QVariant(QStringLiteral("—"));
    case AgeColumn:
        return occupied ? QVariant(qint64(m_snapshot.queryPosition - view.position))
                        : QVariant(QStringLiteral("—"));
    case TokenColumn:
        return occupied ? QVariant(view.token) : QVariant(QStringLiteral("—"));
    case AttentionColumn:
        return m_snapshot.hasAttention && view.kept
                   ? QVariant(QString::number(double(view.attention), 'f', 4))
                   : QVariant(QStringLiteral("—"));
    default:
        return {};
    }
}

QVariant KvCacheModel::background(int slot) const {
    const SlotView& view = m_snapshot.cacheSlots[size_t(slot)];
    const QPalette palette = QApplication::palette();
    if (view.position >= 0 && m_highlighted.contains(view.position))
        return mixColors(palette.color(QPalette::Base), MaskColors::forPalette(palette).highlight,
                         0.45);
    if (slot == m_snapshot.ringHead)
        return mixColors(palette.color(QPalette::Base), kindColor(SlotKind::Ring, palette), 0.22);
    return {};
}

QString KvCacheModel::toolTip(int slot) const {
    const SlotView& view = m_snapshot.cacheSlots[size_t(slot)];
    QStringList lines;
    lines << tr("slot %1 (%2)").arg(slot).arg(kindName(view.kind));
    // Nothing here depends on the query's position (the Age column shows that), so that a step
    // changes the tooltips of the rows it changes only.
    if (view.kind != SlotKind::Empty) {
        lines << tr("position %1").arg(view.position);
        lines << tr("token %1: “%2”").arg(view.token).arg(visiblePiece(view.piece));
        lines << (view.kept ? tr("kept by the mask for the newest query")
                            : tr("not kept by the mask for the newest query"));
    }
    if (slot == m_snapshot.ringHead)
        lines << tr("ring write head: the next non-sink token goes here");
    if (slot == m_snapshot.querySlot) lines << tr("the newest token's K/V");
    return lines.join(QLatin1Char('\n'));
}

QVariant KvCacheModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case SlotColumn:
        return tr("Slot");
    case KindColumn:
        return tr("Kind");
    case PieceColumn:
        return tr("Piece");
    case PositionColumn:
        return tr("Position");
    case AgeColumn:
        return tr("Age");
    case TokenColumn:
        return tr("Token");
    case AttentionColumn:
        return tr("Weight");
    default:
        return {};
    }
}

} // namespace sinkscope::views
