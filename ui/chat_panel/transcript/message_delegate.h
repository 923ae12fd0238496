// Draws the transcript's rows: each message laid out as rich text (message_document.h) at the
// view's width, only when it is drawn or asked for. A message never laid out is as tall as its
// text's length estimates; once laid out, its height is kept until it changes or the width
// does, so that the list's layout of 50,000 rows reads 50,000 numbers and lays out none. The
// documents of the rows drawn last are kept, a few hundred at most.
#pragma once

#include <QAbstractItemDelegate>
#include <QList>
#include <QQueue>
#include <QTextDocument>

#include <memory>
#include <unordered_map>

class QListView;

namespace sinkscope::ui {

class TranscriptModel;

class MessageDelegate : public QAbstractItemDelegate {
    Q_OBJECT
public:
    MessageDelegate(const TranscriptModel* model, QListView* view);

    void paint(QPainter* painter, const QStyleOptionViewItem& option,
               const QModelIndex& index) const override;
    QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override;

    // The row's document as drawn (laid out now if it is not kept), and where its text starts
    // in it (-1 when it shows none).
    const QTextDocument* document(qsizetype row) const;
    int textPosition(qsizetype row) const;
    // Lays out rows [first, last]; true when one's height is not the one the list laid out.
    bool layOut(qsizetype first, qsizetype last) const;
    void forgetAll(); // a new palette or font: every row is laid out anew

private:
    struct Laid {
        std::unique_ptr<QTextDocument> document;
        int textPosition = -1;
    };
    const Laid& laidOut(qsizetype row) const;
    int width() const;
    int estimatedHeight(qsizetype row) const;
    void forget(qsizetype first, qsizetype last); // rows whose content changed
    void onRowsInserted(int first, int last);
    void onRowsRemoved(int first, int last);

    const TranscriptModel* m_model;
    QListView* m_view;
    mutable std::unordered_map<qsizetype, Laid> m_laid;
    mutable QQueue<qsizetype> m_laidOrder; // the rows in m_laid, oldest first
    // [rows] the height each was last laid out at, at m_width; -1 never laid out.
    mutable QList<int> m_heights;
    mutable int m_width = -1;
    mutable int m_lineSpacing = 1; // the view's font's, for the estimates
    mutable int m_charWidth = 1;
};

} // namespace sinkscope::ui
