// Which transcript tokens each message's text came from, so that the chat fades exactly the
// characters whose tokens have left the KV window. A message shows its turn's text (the user's
// words, the reply outside calls) while its tokens also hold the template's markers, and turns the
// template rendered together share one token range; the text is found in its tokens' text to
// place each character on its token. No widgets.
#pragma once

#include "chat_panel/chat_message.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <span>

namespace sinkscope::ui {

// The text of each transcript token, as the worker streamed it (StreamPiece::text) or as a
// rebuilt session listed it, from the first token this chat knows on.
class TranscriptTexts {
public:
    void reset(qint64 nextIndex = 0); // nothing known; the next token is `nextIndex`
    // Token `index`: tokens after it are dropped (a re-render writes the transcript anew from
    // there); an index past the next one starts over from it.
    void set(qint64 index, const QString& text);
    // Tokens [first, end) joined, and the end of each one's text in it (`ends`); false when one
    // of them is not known.
    bool join(qint64 first, qint64 end, QString& joined, QList<qsizetype>& ends) const;

private:
    qint64 m_base = 0; // the index of m_texts[0]
    QStringList m_texts;
};

// A message's shown text (its trimmed text) laid on its tokens.
struct TextOnTokens {
    qint64 firstToken = -1; // -1: not known (a token's text unknown, or the text not found)
    QList<qsizetype> ends;  // [its tokens] the shown characters up to each token's end
    qsizetype length = 0;   // of the shown text

    bool isKnown() const { return firstToken >= 0; }
    // The shown characters whose tokens come before `fadedBefore`: tokens leave the window in
    // order, so they are the text's first characters.
    qsizetype fadedLength(qint64 fadedBefore) const;
};

// Each message laid on the transcript's tokens. Messages that share a token range are looked for
// one after the other in its text, in order.
QList<TextOnTokens> layOnTokens(std::span<const ChatMessage> messages,
                                const TranscriptTexts& texts);

} // namespace sinkscope::ui
