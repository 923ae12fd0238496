// The reply being generated as the readable chat shows it (chat_panel/streamed_reply.h), piece by
// piece: a call's markers and body never show, whether they arrive as control tokens (Needle's)
// or as text (Qwen's user-defined <tool_call>), a marker arriving a few characters at a time is
// held back, text around calls stays, and the call is reported as being written exactly while it
// is open.
#include "chat_panel/streamed_reply.h"

#include <QtTest>

using namespace sinkscope::ui;

namespace {

StreamPiece piece(const QString& text, bool control = false) {
    StreamPiece p;
    p.text = text;
    p.generated = true;
    p.control = control;
    return p;
}

const CallMarkers kQwen{QStringLiteral("<tool_call>"), QStringLiteral("</tool_call>")};

} // namespace

class TestStreamedReply : public QObject {
    Q_OBJECT
private slots:
    void callBodyHiddenWhileOpen() {
        StreamedReply reply(kQwen);
        reply.append(piece(QStringLiteral("Sure. ")));
        QCOMPARE(reply.text(), QStringLiteral("Sure. "));
        QVERIFY(!reply.writingCall());
        reply.append(piece(QStringLiteral("<tool_call>")));
        QCOMPARE(reply.text(), QStringLiteral("Sure. "));
        QVERIFY(reply.writingCall());
        reply.append(piece(QStringLiteral("{\"name\": \"get_time\"")));
        QCOMPARE(reply.text(), QStringLiteral("Sure. "));
        QVERIFY(reply.writingCall());
        reply.append(piece(QStringLiteral("}</tool_call>")));
        QCOMPARE(reply.text(), QStringLiteral("Sure. "));
        QVERIFY(!reply.writingCall());
        reply.append(piece(QStringLiteral(" Done.")));
        QCOMPARE(reply.text(), QStringLiteral("Sure.  Done."));
    }

    // "<tool" then "_call>": the partial marker never shows.
    void partialMarkerHeldBack() {
        StreamedReply reply(kQwen);
        reply.append(piece(QStringLiteral("ok <tool")));
        QCOMPARE(reply.text(), QStringLiteral("ok "));
        QVERIFY(!reply.writingCall());
        reply.append(piece(QStringLiteral("_call>{")));
        QCOMPARE(reply.text(), QStringLiteral("ok "));
        QVERIFY(reply.writingCall());
        // a "<" that does not become a marker shows once it cannot be one
        StreamedReply plain(kQwen);
        plain.append(piece(QStringLiteral("a <")));
        QCOMPARE(plain.text(), QStringLiteral("a "));
        plain.append(piece(QStringLiteral("b")));
        QCOMPARE(plain.text(), QStringLiteral("a <b"));
    }

    // Control tokens are hidden unless they are a call's markers; markers that are control tokens
    // still open and close the call.
    void controlTokens() {
        StreamedReply reply(kQwen);
        reply.append(piece(QStringLiteral("<|im_start|>"), true));
        reply.append(piece(QStringLiteral("hi")));
        reply.append(piece(QStringLiteral("<tool_call>"), true));
        QVERIFY(reply.writingCall());
        reply.append(piece(QStringLiteral("{}")));
        reply.append(piece(QStringLiteral("</tool_call>"), true));
        reply.append(piece(QStringLiteral("<|im_end|>"), true));
        QCOMPARE(reply.text(), QStringLiteral("hi"));
        QVERIFY(!reply.writingCall());
    }

    // Calls without markers (Llama-3's bare object): nothing is hidden.
    void noMarkers() {
        StreamedReply reply;
        reply.append(piece(QStringLiteral("{\"name\": \"x\"}")));
        QCOMPARE(reply.text(), QStringLiteral("{\"name\": \"x\"}"));
        QVERIFY(!reply.writingCall());
    }
};

QTEST_GUILESS_MAIN(TestStreamedReply)
#include "test_streamed_reply.moc"
