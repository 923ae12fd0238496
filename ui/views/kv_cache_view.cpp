#include "views/kv_cache_view.h"

#include "memory/budget.h"
#include "views/kv_bytes.h"
#include "views/kv_cache_model.h"
#include "views/view_colors.h"

#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QProgressBar>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

namespace sinkscope::views {

namespace {

int64_t budgetOf(const StepSnapshot& snapshot) {
    return snapshot.budgetBytes > 0 ? snapshot.budgetBytes : kKvBudgetBytes;
}

} // namespace

KvCacheView::KvCacheView(QWidget* parent) : QWidget(parent) {
    m_model = new KvCacheModel(this);
    m_counters =
        new LiveLabel(tr("window 256 (budget 256) · kv_bits 8 · sinks 290/290 · slots 546 · "
                         "ring head 100 · evictions 1,000 · tokens seen 1,500"),
                      this);
    m_bytesBar = new QProgressBar(this);
    m_bytesBar->setObjectName(QStringLiteral("kvBytesBar"));
    m_bytesBar->setTextVisible(true);
    m_table = new QTableView(this);
    configureTable();

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(4);
    layout->addWidget(m_counters);
    layout->addWidget(m_bytesBar);
    layout->addWidget(m_table, 1);

    connect(m_table, &QTableView::clicked, this, [this](const QModelIndex& index) {
        emit slotClicked(index.row(), index.data(KvCacheModel::PositionRole).toLongLong());
    });
    refreshCounters();
}

// Fixed row heights and column widths: nothing is measured per update, so 30 updates a second
// over a thousand slots only repaint the visible rows.
void KvCacheView::configureTable() {
    m_table->setModel(m_model);
    m_table->setObjectName(QStringLiteral("kvSlotTable"));
    m_table->setTabKeyNavigation(false); // Tab leaves the table; the arrows move within it
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setWordWrap(false);
    m_table->setShowGrid(false);
    m_table->setAlternatingRowColors(true);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_table->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 4);
    QHeaderView* header = m_table->horizontalHeader();
    header->setSectionResizeMode(QHeaderView::Interactive);
    header->setSectionResizeMode(KvCacheModel::PieceColumn, QHeaderView::Stretch);
    const int digit = fontMetrics().horizontalAdvance(QLatin1Char('0'));
    const int widths[KvCacheModel::ColumnCount] = {8 * digit, 8 * digit, 14 * digit, 9 * digit,
                                                   7 * digit, 7 * digit, 8 * digit};
    for (int column = 0; column < KvCacheModel::ColumnCount; ++column)
        header->resizeSection(column, widths[column]);
}

void KvCacheView::setSnapshot(const StepSnapshot& snapshot) {
    m_model->setSnapshot(snapshot);
    refreshCounters();
}

void KvCacheView::setSnapshots(const QList<StepSnapshot>& snapshots) {
    if (!snapshots.isEmpty()) setSnapshot(snapshots.last());
}

void KvCacheView::clear() {
    m_model->clear();
    refreshCounters();
}

void KvCacheView::highlightPositions(const QList<qint64>& positions) {
    m_model->setHighlightedPositions(QSet<qint64>(positions.begin(), positions.end()));
}

QList<qint64> KvCacheView::highlightedPositions() const {
    QList<qint64> positions = m_model->highlightedPositions().values();
    std::sort(positions.begin(), positions.end());
    return positions;
}

QString KvCacheView::memoryText() const {
    const StepSnapshot& snapshot = m_model->snapshot();
    const int64_t budget = budgetOf(snapshot);
    const auto percent = qint64(double(snapshot.bytesAllocated) * 100.0 / double(budget) + 0.5);
    QString text = tr("KV memory %1 of %2 budget (%3%)")
                       .arg(mebibytes(snapshot.bytesAllocated), mebibytes(budget))
                       .arg(percent);
    if (snapshot.bytesAllocated > budget) text += tr(" — over budget");
    return text;
}

QString KvCacheView::countersText() const {
    const StepSnapshot& snapshot = m_model->snapshot();
    const QLocale locale;
    return tr("window %1 (budget %2) · kv_bits %3 · sinks %4/%5 · slots %6 · ring head %7 · "
              "evictions %8 · tokens seen %9")
        .arg(locale.toString(snapshot.effectiveWindow), locale.toString(snapshot.budgetWindow))
        .arg(snapshot.kvBits)
        .arg(snapshot.sinksUsed)
        .arg(snapshot.sinkSlots)
        .arg(snapshot.cacheSlots.size())
        .arg(snapshot.ringHead)
        .arg(locale.toString(snapshot.evictions), locale.toString(snapshot.tokensSeen));
}

void KvCacheView::refreshCounters() {
    const StepSnapshot& snapshot = m_model->snapshot();
    m_counters->setText(snapshot.cacheSlots.empty() ? tr("no cache yet") : countersText());
    const int64_t budget = budgetOf(snapshot);
    // KiB keep the values inside int even for a 32-bit cache far over the budget.
    m_bytesBar->setRange(0, int(budget / 1024));
    m_bytesBar->setValue(int(std::min(snapshot.bytesAllocated, budget) / 1024));
    m_bytesBar->setFormat(memoryText());
    QPalette palette = m_bytesBar->palette();
    palette.setColor(QPalette::Highlight, snapshot.bytesAllocated > budget
                                              ? MaskColors::forPalette(palette).errorText
                                              : this->palette().color(QPalette::Highlight));
    m_bytesBar->setPalette(palette);
}

} // namespace sinkscope::views
