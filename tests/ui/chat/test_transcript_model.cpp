// The readable chat's model against the conversation it shows: its rows, roles, texts and token
// ranges after a reported conversation, a sent message, a streamed reply and its end; the faded
// part of each message at every edge of a sliding window, with exactly the rows whose fade
// changed reported; and the turns of a restored session, which share one token range.
#include <QtTest>

#include "chat_panel/transcript/transcript_model.h"

#include <QSignalSpy>

#include <set>

using namespace sinkscope;
using namespace sinkscope::ui;

namespace {

TurnView turn(TurnRole role, const QString& text, int tokenCount) {
    TurnView view;
    view.role = role;
    view.text = text;
    view.tokenCount = tokenCount;
    return view;
}

StreamPiece piece(qint64 index, const QString& text, bool generated) {
    StreamPiece made;
    made.transcriptIndex = index;
    made.text = text;
    made.generated = generated;
    made.position = index;
    return made;
}

// A conversation whose every turn is fed as "<m>", its words one token each, "</m>": the turns,
// and each token's text.
struct Chat {
    QList<TurnView> turns;
    QStringList tokens;
};

Chat chatOf(int turnCount) {
    Chat chat;
    for (int i = 0; i < turnCount; ++i) {
        const QStringList words{QStringLiteral("turn"), QString::number(i), QStringLiteral("ok")};
        QStringList tokens{QStringLiteral("<m>")};
        for (qsizetype w = 0; w < words.size(); ++w)
            tokens << (w == 0 ? words[w] : u' ' + words[w]);
        tokens << QStringLiteral("</m>");
        chat.turns << turn(i % 2 ? TurnRole::Assistant : TurnRole::User, words.join(u' '),
                           int(tokens.size()));
        chat.tokens << tokens;
    }
    return chat;
}

// What a message of `chat` should fade with tokens [0, edge) gone, worked out from its tokens'
// text: (how it left, characters faded).
QPair<MessageFade::Left, qsizetype> expectedFade(const TranscriptModel& model, qsizetype row,
                                                 const QStringList& tokens, qint64 edge) {
    const ChatMessage& message = model.messages()[row];
    if (edge <= message.firstToken) return {MessageFade::Left::None, 0};
    const qsizetype length = message.text.trimmed().size();
    if (edge >= message.endToken) return {MessageFade::Left::Wholly, length};
    QString joined;
    QString gone;
    for (qint64 index = message.firstToken; index < message.endToken; ++index) {
        joined += tokens[index];
        if (index < edge) gone = joined;
    }
    const qsizetype at = joined.indexOf(message.text.trimmed());
    return {MessageFade::Left::Partly, std::clamp<qsizetype>(gone.size() - at, 0, length)};
}

std::set<int> changedRows(const QSignalSpy& changes) {
    std::set<int> rows;
    for (const QList<QVariant>& change : changes)
        for (int row = change.at(0).toModelIndex().row(); row <= change.at(1).toModelIndex().row();
             ++row)
            rows.insert(row);
    return rows;
}

} // namespace

class TestTranscriptModel : public QObject {
    Q_OBJECT

private slots:
    void rowsFollowTheConversation();
    void slidingWindowChangesOnlyTheRowsItFades();
    void restoredTurnsShareTheirRange();
};

// Two reported turns, a message sent and its tokens, a reply streamed and finished, and the same
// conversation reported again: rows are added and changed, never all made anew.
void TestTranscriptModel::rowsFollowTheConversation() {
    TranscriptModel model;
    QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    QSignalSpy changes(&model, &QAbstractItemModel::dataChanged);
    model.setConversation({turn(TurnRole::User, QStringLiteral("hello"), 3),
                           turn(TurnRole::Assistant, QStringLiteral("hi there"), 4)},
                          7);
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(resets.count(), 1);
    const auto value = [&model](int row, int role) { return model.index(row).data(role); };
    QCOMPARE(value(0, TranscriptModel::TurnRoleRole).toInt(), int(TurnRole::User));
    QCOMPARE(value(1, TranscriptModel::TurnRoleRole).toInt(), int(TurnRole::Assistant));
    QCOMPARE(value(1, Qt::DisplayRole).toString(), QStringLiteral("hi there"));
    QCOMPARE(value(0, TranscriptModel::FirstTokenRole).toLongLong(), 0);
    QCOMPARE(value(0, TranscriptModel::EndTokenRole).toLongLong(), 3);
    QCOMPARE(value(1, TranscriptModel::FirstTokenRole).toLongLong(), 3);
    QCOMPARE(value(1, TranscriptModel::EndTokenRole).toLongLong(), 7);

    model.addSent(TurnRole::User, QStringLiteral("next one"));
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(inserted.count(), 1);
    QCOMPARE(inserted.at(0).at(1).toInt(), 2);
    changes.clear();
    model.appendPieces({piece(7, QStringLiteral("<m>"), false),
                        piece(8, QStringLiteral("next"), false),
                        piece(9, QStringLiteral(" one"), false)});
    QCOMPARE(changedRows(changes), (std::set<int>{2}));
    QCOMPARE(value(2, TranscriptModel::FirstTokenRole).toLongLong(), 7);
    QCOMPARE(value(2, TranscriptModel::EndTokenRole).toLongLong(), 10);

    // The reply: one row more, then each piece changes that row alone.
    QString streamed;
    for (qint64 index = 10; index < 20; ++index) {
        changes.clear();
        const QString text = index == 10 ? QStringLiteral("Sure") : QStringLiteral(" w");
        streamed += text;
        model.appendPieces({piece(index, text, true)});
        QCOMPARE(model.rowCount(), 4);
        QVERIFY(value(3, TranscriptModel::StreamingRole).toBool());
        QCOMPARE(value(3, Qt::DisplayRole).toString(), streamed);
        QCOMPARE(value(3, TranscriptModel::EndTokenRole).toLongLong(), index + 1);
        if (index > 10) QCOMPARE(changedRows(changes), (std::set<int>{3}));
    }
    QCOMPARE(inserted.count(), 2);
    changes.clear();
    model.finishReply({}, 0.5, {}, QStringLiteral("10 tokens"));
    QVERIFY(!value(3, TranscriptModel::StreamingRole).toBool());
    QCOMPARE(changedRows(changes), (std::set<int>{3}));
    QCOMPARE(model.messages()[3].footer, QStringLiteral("10 tokens"));

    // Reported as the worker keeps it: the same rows, the reply's statistics kept.
    changes.clear();
    model.setConversation({turn(TurnRole::User, QStringLiteral("hello"), 3),
                           turn(TurnRole::Assistant, QStringLiteral("hi there"), 4),
                           turn(TurnRole::User, QStringLiteral("next one"), 3),
                           turn(TurnRole::Assistant, streamed, 10)},
                          20);
    QCOMPARE(resets.count(), 1);
    QCOMPARE(model.rowCount(), 4);
    QVERIFY(changes.isEmpty());
    QCOMPARE(model.messages()[3].footer, QStringLiteral("10 tokens"));
    QCOMPARE(model.messages()[3].confidence, 0.5);

    // Another conversation from the first row on: one reset.
    model.setConversation({turn(TurnRole::Assistant, QStringLiteral("welcome"), 2)}, 2);
    QCOMPARE(resets.count(), 2);
    QCOMPARE(model.rowCount(), 1);
}

// 300 turns; the window's edge slides over them three tokens at a time, then back: at every edge
// each message fades as its tokens say, and the rows reported changed are exactly those whose
// fade did.
void TestTranscriptModel::slidingWindowChangesOnlyTheRowsItFades() {
    const Chat chat = chatOf(300);
    TranscriptModel model;
    model.setTranscriptTexts(chat.tokens);
    model.setConversation(chat.turns, chat.tokens.size());
    QCOMPARE(model.rowCount(), 300);
    QSignalSpy changes(&model, &QAbstractItemModel::dataChanged);
    QList<MessageFade> before(300);
    QList<qint64> edges;
    for (qint64 edge = 0; edge <= chat.tokens.size(); edge += 3)
        edges << edge;
    for (qint64 edge = chat.tokens.size(); edge >= 0; edge -= 7)
        edges << edge;
    for (const qint64 edge : edges) {
        changes.clear();
        model.setFadedBefore(edge);
        std::set<int> faded;
        for (int row = 0; row < model.rowCount(); ++row) {
            const MessageFade fade = model.fadeOf(row);
            const auto [left, chars] = expectedFade(model, row, chat.tokens, edge);
            QCOMPARE(int(fade.left), int(left));
            QCOMPARE(fade.chars, chars);
            QCOMPARE(model.index(row).data(TranscriptModel::FadedLengthRole).toLongLong(), chars);
            if (fade != before[row]) faded.insert(row);
            before[row] = fade;
        }
        QCOMPARE(changedRows(changes), faded);
    }
}

// A model's own template renders the turns together: they share the transcript's one token
// range, and each is found in its text after the one before.
void TestTranscriptModel::restoredTurnsShareTheirRange() {
    const Chat chat = chatOf(40);
    QList<TurnView> turns = chat.turns;
    for (TurnView& rendered : turns)
        rendered.tokenCount = 0;
    TranscriptModel model;
    QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
    model.setTranscriptTexts(chat.tokens);
    model.setConversation(turns, chat.tokens.size());
    QCOMPARE(resets.count(), 1);
    QCOMPARE(model.rowCount(), 40);
    for (const ChatMessage& message : model.messages()) {
        QCOMPARE(message.firstToken, 0);
        QCOMPARE(message.endToken, chat.tokens.size());
    }
    // The edge inside message 10's words: 9 before it wholly gone in text, 11 on not.
    const qint64 edge = 10 * 5 + 3; // "<m>turn 10" gone
    model.setFadedBefore(edge);
    for (int row = 0; row < 40; ++row) {
        const MessageFade fade = model.fadeOf(row);
        QCOMPARE(int(fade.left), int(MessageFade::Left::Partly));
        const qsizetype length = model.messages()[row].text.size();
        QCOMPARE(fade.chars, row < 10 ? length : row == 10 ? qsizetype(7) : qsizetype(0));
    }
}

QTEST_MAIN(TestTranscriptModel)
#include "test_transcript_model.moc"
