// The SentencePiece tokenizer: merges, byte fallback, space prefix and special tokens on small
// vocabularies built here, and the exact ids and texts llama.cpp gives for stories260K
// (shared/reference/stories260K-llamacpp.json). GGUF metadata: test_tokenizer_gguf.cpp.
#include <QtTest>

#include "test_support.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer_test_support.h"

#include <QElapsedTimer>

#include <algorithm>
#include <random>

using namespace sinkscope;
using sinkscope::test::Ids;
using sinkscope::test::idsFromJson;

namespace {

constexpr std::string_view kSpace = "\xE2\x96\x81"; // U+2581, how the vocabulary stores ' '

struct Piece {
    std::string text;
    float score = 0.0f;
    TokenType type = TokenType::Normal;
};

// Ids 0 <unk>, 1 <s>, 2 </s>, then (withBytes) 3 + b for <0xbb>, then `words` in order.
Vocabulary vocabularyOf(const std::vector<Piece>& words, bool withBytes = true) {
    std::vector<Piece> all = {{"<unk>", 0, TokenType::Unknown},
                              {"<s>", 0, TokenType::Control},
                              {"</s>", 0, TokenType::Control}};
    for (int byte = 0; withBytes && byte < 256; ++byte) {
        char text[7];
        std::snprintf(text, sizeof text, "<0x%02X>", byte);
        all.push_back({text, 0, TokenType::Byte});
    }
    all.insert(all.end(), words.begin(), words.end());
    Vocabulary vocab;
    for (const Piece& piece : all) {
        vocab.pieces.push_back(piece.text);
        vocab.scores.push_back(piece.score);
        vocab.types.push_back(piece.type);
    }
    return vocab;
}

int32_t byteId(uint8_t byte) {
    return 3 + byte;
}

// The ids of stored pieces; -1 for a piece the vocabulary lacks (fails the comparison).
Ids idsOf(const Tokenizer& tokenizer, std::initializer_list<std::string_view> pieces) {
    Ids ids;
    for (const std::string_view piece : pieces)
        ids.push_back(tokenizer.findToken(piece).value_or(-1));
    return ids;
}

std::string withMarker(std::string_view text) {
    return std::string(kSpace) + std::string(text);
}

// Letters a-e, their prefixed forms and a few merges whose scores the tests below rely on.
Vocabulary lettersVocabulary() {
    std::vector<Piece> words = {{std::string(kSpace), -50}};
    for (const char* letter : {"a", "b", "c", "d", "e", "A"}) {
        words.push_back({letter, -40});
        words.push_back({withMarker(letter), -30});
    }
    return vocabularyOf(words);
}

std::optional<Tokenizer> loadStories(std::string& error) {
    const auto file = GgufFile::open(test::storiesModelPath().toStdString(), error);
    if (!file) return std::nullopt;
    return Tokenizer::fromGguf(*file, error);
}

QJsonObject readReference() {
    return test::readJsonObject(test::sharedPath("reference/stories260K-llamacpp.json"));
}

} // namespace

class TestTokenizer : public QObject {
    Q_OBJECT

private slots:
    void mergesByScore_data();
    void mergesByScore();
    void requeuesAfterEachMerge();
    void byteFallback_data();
    void byteFallback();
    void unknownWithoutByteTokens();
    void spacePrefix();
    void emptyText();
    void specialTokens_data();
    void specialTokens();
    void longestSpecialTokenFirst();
    void pieces();
    void decodeStripsOneSpace();
    void roundTripSmallVocabulary();
    void largeVocabulary();

    void storiesTokenize_data();
    void storiesTokenize();
    void storiesContinuations();
    void storiesRoundTrip_data();
    void storiesRoundTrip();
};

// "abc" with the merges "ab" and "bc": the higher score wins; on a tie, the leftmost pair.
void TestTokenizer::mergesByScore_data() {
    QTest::addColumn<float>("abScore");
    QTest::addColumn<float>("bcScore");
    QTest::addColumn<QStringList>("expected");
    QTest::newRow("bc higher") << -5.0f << -1.0f << QStringList{"a", "bc"};
    QTest::newRow("ab higher") << -1.0f << -5.0f << QStringList{"ab", "c"};
    QTest::newRow("tie: leftmost") << -3.0f << -3.0f << QStringList{"ab", "c"};
}

void TestTokenizer::mergesByScore() {
    QFETCH(float, abScore);
    QFETCH(float, bcScore);
    QFETCH(QStringList, expected);
    Vocabulary vocab =
        vocabularyOf({{"a", -10}, {"b", -10}, {"c", -10}, {"ab", abScore}, {"bc", bcScore}});
    vocab.addSpacePrefix = false;
    const Tokenizer tokenizer(vocab);
    Ids expectedIds;
    for (const QString& piece : expected)
        expectedIds.push_back(*tokenizer.findToken(piece.toStdString()));
    QCOMPARE(tokenizer.encode("abc", false), expectedIds);
}

// bc merges first; then "abc" (queued only after that merge) beats "bcd"; finally "abcd".
void TestTokenizer::requeuesAfterEachMerge() {
    Vocabulary vocab = vocabularyOf({{"a", -10},
                                     {"b", -10},
                                     {"c", -10},
                                     {"d", -10},
                                     {"bc", -1},
                                     {"abc", -2},
                                     {"bcd", -3},
                                     {"abcd", -20},
                                     {"cd", -4}});
    vocab.addSpacePrefix = false;
    Tokenizer tokenizer(vocab);
    QCOMPARE(tokenizer.encode("abcd", false), idsOf(tokenizer, {"abcd"}));
    QCOMPARE(tokenizer.encode("abcdd", false), idsOf(tokenizer, {"abcd", "d"}));

    *std::find(vocab.pieces.begin(), vocab.pieces.end(), "abcd") = "unrelated";
    tokenizer = Tokenizer(vocab);
    QCOMPARE(tokenizer.encode("abcd", false), idsOf(tokenizer, {"abc", "d"}));
}

void TestTokenizer::byteFallback_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QList<int>>("bytesAfterPrefix"); // byte ids, -1 for the piece "A"
    QTest::newRow("é missing") << QByteArray("\xC3\xA9") << QList<int>{0xC3, 0xA9};
    QTest::newRow("€ missing") << QByteArray("\xE2\x82\xAC") << QList<int>{0xE2, 0x82, 0xAC};
    QTest::newRow("emoji missing")
        << QByteArray("\xF0\x9F\x98\x80") << QList<int>{0xF0, 0x9F, 0x98, 0x80};
    // Invalid UTF-8: each bad byte is its own symbol; the valid text after it still merges.
    QTest::newRow("stray continuation") << QByteArray("\x80") << QList<int>{0x80};
    QTest::newRow("lead then ASCII") << QByteArray("\xC3\x41") << QList<int>{0xC3, -1};
    QTest::newRow("truncated at end") << QByteArray("\xE2\x82") << QList<int>{0xE2, 0x82};
    QTest::newRow("0xFF") << QByteArray("\xFF") << QList<int>{0xFF};
}

void TestTokenizer::byteFallback() {
    QFETCH(QByteArray, text);
    QFETCH(QList<int>, bytesAfterPrefix);
    const Tokenizer tokenizer(lettersVocabulary());
    Ids expected = idsOf(tokenizer, {kSpace});
    for (const int byte : bytesAfterPrefix) {
        expected.push_back(byte < 0 ? *tokenizer.findToken("A")
                                    : byteId(static_cast<uint8_t>(byte)));
    }
    const Ids ids = tokenizer.encode(text.toStdString(), false);
    QCOMPARE(ids, expected);
    QCOMPARE(QByteArray::fromStdString(tokenizer.decode(ids, true)), text);
}

// Without <0xXX> tokens a missing character becomes one unk per byte (llama.cpp would first try
// the one-byte piece, which this vocabulary lacks too).
void TestTokenizer::unknownWithoutByteTokens() {
    Vocabulary vocab = vocabularyOf({{"a", -1}, {"\x01", -1}}, false);
    vocab.addSpacePrefix = false;
    const Tokenizer tokenizer(vocab);
    const int32_t unk = 0;
    QCOMPARE(tokenizer.encode("a\xC3\xA9", false), (Ids{*tokenizer.findToken("a"), unk, unk}));
    // A byte that is a piece by itself stands for itself.
    QCOMPARE(tokenizer.encode("\x01", false), idsOf(tokenizer, {"\x01"}));
}

void TestTokenizer::spacePrefix() {
    Vocabulary vocab = lettersVocabulary();
    const Tokenizer prefixed(vocab);
    QCOMPARE(prefixed.encode("a b", true),
             (Ids{1, *prefixed.findToken(withMarker("a")), *prefixed.findToken(withMarker("b"))}));
    // " a" becomes ▁▁a; ▁▁ is no token, so (▁, a) is the only merge.
    QCOMPARE(prefixed.encode(" a", false), idsOf(prefixed, {kSpace, withMarker("a")}));

    vocab.addSpacePrefix = false;
    const Tokenizer plain(vocab);
    QCOMPARE(plain.encode("a b", true),
             (Ids{1, *plain.findToken("a"), *plain.findToken(withMarker("b"))}));
}

// llama.cpp: "" gives [BOS] with BOS and [] without; no space prefix is tokenized.
void TestTokenizer::emptyText() {
    const Tokenizer tokenizer(lettersVocabulary());
    QCOMPARE(tokenizer.encode("", true), Ids{1});
    QCOMPARE(tokenizer.encode("", false), Ids{});
    QCOMPARE(tokenizer.decode(Ids{}), std::string());
}

// With the control tokens <|im_start|> and <|im_end|> and the user-defined <tool>.
void TestTokenizer::specialTokens_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("parseSpecial");
    QTest::addColumn<QStringList>("expected"); // stored pieces after BOS
    QTest::addColumn<QString>("decoded");      // decode(ids, stripSpacePrefix)
    QTest::newRow("parsed") << "<|im_start|>a b<|im_end|>" << true
                            << QStringList{"<|im_start|>", "▁a", "▁b", "<|im_end|>"} << "a b";
    // llama.cpp prefixes every text fragment that follows a special token, not just the first;
    // control tokens print nothing, so the prefixes show as spaces.
    QTest::newRow("prefix after each special")
        << "a<|im_end|>b<|im_start|>c" << true
        << QStringList{"▁a", "<|im_end|>", "▁b", "<|im_start|>", "▁c"} << "a b c";
    QTest::newRow("adjacent specials")
        << "<|im_start|><|im_end|>" << true << QStringList{"<|im_start|>", "<|im_end|>"} << "";
    QTest::newRow("BOS text parsed") << "<s>a" << true << QStringList{"<s>", "▁a"} << "a";
    QTest::newRow("not parsed: bytes")
        << "<|im_end|>" << false
        << QStringList{"▁", "<0x3C>", "<0x7C>", "<0x69>", "<0x6D>", "<0x5F>",
                       "e", "<0x6E>", "d",      "<0x7C>", "<0x3E>"}
        << "<|im_end|>";
    // User-defined tokens are cut out even without parseSpecial, as llama.cpp does, and print
    // their text.
    QTest::newRow("user-defined always")
        << "a<tool>b" << false << QStringList{"▁a", "<tool>", "▁b"} << "a<tool> b";
}

void TestTokenizer::specialTokens() {
    QFETCH(QString, text);
    QFETCH(bool, parseSpecial);
    QFETCH(QStringList, expected);
    QFETCH(QString, decoded);
    Vocabulary vocab = lettersVocabulary();
    for (const char* control : {"<|im_start|>", "<|im_end|>"}) {
        vocab.pieces.push_back(control);
        vocab.scores.push_back(0);
        vocab.types.push_back(TokenType::Control);
    }
    vocab.pieces.push_back("<tool>");
    vocab.scores.push_back(0);
    vocab.types.push_back(TokenType::UserDefined);
    const Tokenizer tokenizer(vocab);

    Ids expectedIds{1};
    for (const QString& piece : expected)
        expectedIds.push_back(tokenizer.findToken(piece.toStdString()).value_or(-1));
    const Ids ids = tokenizer.encode(text.toStdString(), true, parseSpecial);
    QCOMPARE(ids, expectedIds);
    QCOMPARE(tokenizer.decode(ids, true), decoded.toStdString());
}

// "<u><u>" is cut out before "<u>": llama.cpp tries the longer special texts first.
void TestTokenizer::longestSpecialTokenFirst() {
    Vocabulary vocab =
        vocabularyOf({{"<u>", 0, TokenType::UserDefined}, {"<u><u>", 0, TokenType::UserDefined}});
    const Tokenizer tokenizer(vocab);
    QCOMPARE(tokenizer.encode("<u><u><u>", false), idsOf(tokenizer, {"<u><u>", "<u>"}));
}

void TestTokenizer::pieces() {
    Vocabulary vocab = lettersVocabulary();
    vocab.pieces.push_back("<unused0>");
    vocab.scores.push_back(0);
    vocab.types.push_back(TokenType::Unused);
    vocab.pieces.push_back(withMarker("x") + std::string(kSpace) + "y");
    vocab.scores.push_back(0);
    vocab.types.push_back(TokenType::Normal);
    const Tokenizer tokenizer(vocab);
    QCOMPARE(tokenizer.piece(*tokenizer.findToken(withMarker("a"))), std::string(" a"));
    QCOMPARE(tokenizer.piece(*tokenizer.findToken(withMarker("x") + std::string(kSpace) + "y")),
             std::string(" x y"));
    QCOMPARE(tokenizer.piece(byteId(0x0A)), std::string("\n"));
    QCOMPARE(tokenizer.piece(byteId(0xC3)), std::string("\xC3"));
    QCOMPARE(tokenizer.piece(byteId(0x00)), std::string(1, '\0'));
    QCOMPARE(tokenizer.piece(1), std::string());
    QCOMPARE(tokenizer.piece(1, true), std::string("<s>"));
    QCOMPARE(tokenizer.piece(0), std::string());
    QCOMPARE(tokenizer.piece(0, true), std::string("<unk>"));
    QCOMPARE(tokenizer.piece(*tokenizer.findToken("<unused0>")), std::string());
    QCOMPARE(tokenizer.piece(-1), std::string());
    QCOMPARE(tokenizer.piece(tokenizer.size()), std::string());
    QCOMPARE(tokenizer.type(1), TokenType::Control);
    QCOMPARE(tokenizer.type(tokenizer.size()), TokenType::Undefined);
}

void TestTokenizer::decodeStripsOneSpace() {
    Vocabulary vocab = lettersVocabulary();
    const Tokenizer prefixed(vocab);
    const Ids twoSpacesA = prefixed.encode("  a", true);
    QCOMPARE(prefixed.decode(twoSpacesA), std::string("   a"));
    QCOMPARE(prefixed.decode(twoSpacesA, true), std::string("  a"));
    QCOMPARE(prefixed.decode(Ids{2, 1}, true), std::string()); // control tokens print nothing

    vocab.addSpacePrefix = false; // no prefix was added, so none is stripped
    const Tokenizer plain(vocab);
    QCOMPARE(plain.decode(plain.encode(" a", false), true), std::string(" a"));
}

void TestTokenizer::roundTripSmallVocabulary() {
    const Tokenizer tokenizer(lettersVocabulary());
    for (const char* text : {"abc de", "  a\tb\n", "Zoë ☃ 😀", "e\xC3\x28\xFF a"}) {
        const Ids ids = tokenizer.encode(text, true);
        QCOMPARE(tokenizer.decode(ids, true), std::string(text));
    }
}

// 32k random pieces over a small alphabet, so that merges chain; a 200 kB text must encode
// quickly and round-trip. "▁" is a piece: a lone escaped space that is no token would fall back
// to the bytes of U+2581 and decode as "▁", exactly as in llama.cpp.
void TestTokenizer::largeVocabulary() {
    std::mt19937 random(7);
    std::uniform_int_distribution<int> letter(0, 7);
    std::uniform_int_distribution<int> length(2, 8);
    std::vector<Piece> words = {{std::string(kSpace), -1000}};
    for (int i = 0; i < 8; ++i)
        words.push_back({std::string(1, static_cast<char>('a' + i)), -1000});
    while (words.size() < 32000 - 259) {
        std::string text = random() % 3 == 0 ? std::string(kSpace) : std::string();
        for (int n = length(random); n > 0; --n)
            text += static_cast<char>('a' + letter(random));
        words.push_back({text, -static_cast<float>(words.size())});
    }
    const Tokenizer tokenizer(vocabularyOf(words));
    std::string text;
    while (text.size() < 200000) {
        for (int n = length(random); n > 0; --n)
            text += static_cast<char>('a' + letter(random));
        text += ' ';
    }
    // The bound is for optimized builds; a Debug build under the sanitizers runs about 10x slower.
#ifdef SINKSCOPE_SANITIZED
    constexpr qint64 kBudgetMs = 50'000;
#else
    constexpr qint64 kBudgetMs = 5'000;
#endif
    QElapsedTimer timer;
    timer.start();
    const Ids ids = tokenizer.encode(text, true);
    const qint64 elapsedMs = timer.elapsed();
    QVERIFY2(elapsedMs < kBudgetMs, qPrintable(QString("200 kB took %1 ms").arg(elapsedMs)));
    QVERIFY(ids.size() < text.size() / 2); // merges happened
    QCOMPARE(tokenizer.decode(ids, true), text);
}

// The brief's prompts, then every text of the reference's "tokenize" section.
void TestTokenizer::storiesTokenize_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QList<int>>("expected");
    QTest::newRow("Once upon a time") << "Once upon a time" << QList<int>{1, 403, 407, 261, 378};
    QTest::newRow("Lily wanted to") << "Lily wanted to" << QList<int>{1, 317, 391, 266, 267};
    const QJsonArray cases = readReference().value("tokenize").toArray();
    for (const QJsonValue& entry : cases) {
        const QString text = entry["text"].toString();
        QList<int> ids;
        for (const QJsonValue& id : entry["ids"].toArray())
            ids.push_back(id.toInt());
        QTest::newRow(qPrintable("reference: " + text)) << text << ids;
    }
}

void TestTokenizer::storiesTokenize() {
    SINKSCOPE_REQUIRE_STORIES();
    QFETCH(QString, text);
    QFETCH(QList<int>, expected);
    QVERIFY2(readReference().value("tokenize").toArray().size() >= 2,
             "reference JSON missing or without its tokenize section");
    std::string error;
    const auto tokenizer = loadStories(error);
    QVERIFY2(tokenizer, error.c_str());
    QVERIFY(tokenizer->addBos());
    QCOMPARE(tokenizer->encode(text.toStdString(), tokenizer->addBos()),
             Ids(expected.begin(), expected.end()));
}

void TestTokenizer::storiesContinuations() {
    SINKSCOPE_REQUIRE_STORIES();
    std::string error;
    const auto tokenizer = loadStories(error);
    QVERIFY2(tokenizer, error.c_str());
    const QJsonArray cases = readReference().value("greedy")["cases"].toArray();
    QCOMPARE(cases.size(), 2);
    for (const QJsonValue& entry : cases) {
        const std::string prompt = entry["prompt"].toString().toStdString();
        QCOMPARE(tokenizer->encode(prompt, true), idsFromJson(entry["prompt_ids"].toArray()));
        const Ids generated = idsFromJson(entry["generated_ids"].toArray());
        QCOMPARE(tokenizer->decode(generated), entry["continuation"].toString().toStdString());
    }
}

void TestTokenizer::storiesRoundTrip_data() {
    QTest::addColumn<QString>("text");
    QTest::newRow("story") << "Once upon a time, there was a little girl named Lily.";
    QTest::newRow("emoji") << "Tim saw a 🐶 and a 🦄! 😀😀";
    QTest::newRow("CJK") << "小猫在花园里玩。猫が好きです。고양이";
    QTest::newRow("newlines") << "One.\nTwo.\n\nThree.\n";
    QTest::newRow("tabs") << "\tindented\tand\t\ttabbed";
    QTest::newRow("multiple spaces") << "a  b   c    d     end";
    QTest::newRow("leading spaces") << "   three spaces first";
    QTest::newRow("trailing space") << "ends with a space ";
    QTest::newRow("mixed") << "Zoë's café costs 12.50€ — naïve façade, Ωmega, ß, ©, \"quotes\"";
    QTest::newRow("special text, not parsed") << "<s> </s> <unk> <0x41>";
    QTest::newRow("only spaces") << "    ";
}

void TestTokenizer::storiesRoundTrip() {
    SINKSCOPE_REQUIRE_STORIES();
    QFETCH(QString, text);
    std::string error;
    const auto tokenizer = loadStories(error);
    QVERIFY2(tokenizer, error.c_str());
    const std::string utf8 = text.toStdString();
    const Ids ids = tokenizer->encode(utf8, true);
    for (const int32_t id : ids)
        QVERIFY(id >= 0 && id < tokenizer->size());
    QCOMPARE(tokenizer->decode(ids, true), utf8);
}

QTEST_GUILESS_MAIN(TestTokenizer)
#include "test_tokenizer.moc"
